import { parseArgs } from "node:util";

/** Exit codes: documented in docs/cli.md, stable for scripts. */
export const EXIT = {
  ok: 0,
  failure: 1, // the command ran and something failed (a doctor check, a server error)
  usage: 2, // bad arguments
  notConfigured: 3, // no server URL or API key: run `engram login`
  unauthorized: 4, // the server refused the API key
  unreachable: 5, // the server could not be reached
} as const;

export type OptionSpec = {
  type: "string" | "boolean";
  short?: string;
  multiple?: boolean;
  default?: string | boolean;
  /** Shown in --help, e.g. "URL". */
  value?: string;
  help: string;
};

export type Values = Record<string, string | boolean | string[] | undefined>;

export type Command = {
  name: string;
  summary: string;
  /** Usage line after `engram`, e.g. "search QUERY [options]". */
  usage: string;
  /** Longer text printed under the usage line. */
  details?: string;
  options: Record<string, OptionSpec>;
  /** Positional argument count allowed: [min, max]. */
  positionals?: [number, number];
  run: (values: Values, positionals: string[]) => Promise<number>;
};

export class UsageError extends Error {}

/** Thrown by commands to end with a message and an exit code (the message goes to stderr). */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
    readonly hint?: string,
  ) {
    super(message);
  }
}

const HELP: OptionSpec = { type: "boolean", short: "h", help: "Show this help" };

export function helpText(cmd: Command): string {
  const rows = Object.entries({ ...cmd.options, help: HELP }).map(([name, o]) => {
    const flag = `${o.short ? `-${o.short}, ` : "    "}--${name}${o.type === "string" ? ` ${o.value ?? "VALUE"}` : ""}`;
    const def = o.default !== undefined && o.default !== false ? ` (default: ${String(o.default)})` : "";
    return [flag, `${o.help}${def}`] as const;
  });
  const width = Math.max(...rows.map(([f]) => f.length));
  const lines = [`Usage: engram ${cmd.usage}`, "", cmd.summary];
  if (cmd.details) lines.push("", cmd.details);
  lines.push("", "Options:", ...rows.map(([f, h]) => `  ${f.padEnd(width)}  ${h}`));
  return `${lines.join("\n")}\n`;
}

/** Parses argv for one command; prints help and returns null when --help was given. */
export function parse(cmd: Command, argv: string[]): { values: Values; positionals: string[] } | null {
  const options: Record<string, { type: "string" | "boolean"; short?: string; multiple?: boolean; default?: string | boolean }> = {};
  for (const [name, o] of Object.entries({ ...cmd.options, help: HELP })) {
    options[name] = { type: o.type, ...(o.short ? { short: o.short } : {}), ...(o.multiple ? { multiple: true } : {}) };
    if (o.default !== undefined) options[name].default = o.default;
  }
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (parsed.values.help) {
    process.stdout.write(helpText(cmd));
    return null;
  }
  const [min, max] = cmd.positionals ?? [0, 0];
  if (parsed.positionals.length < min) throw new UsageError(`missing argument: engram ${cmd.usage}`);
  if (parsed.positionals.length > max) throw new UsageError(`unexpected argument: ${parsed.positionals[max]}`);
  return { values: parsed.values as Values, positionals: parsed.positionals };
}

export const str = (v: Values[string]): string | undefined => (typeof v === "string" ? v : undefined);

/** A positive integer argument, or a usage error naming it. */
export function positiveInt(v: string | undefined, name: string, fallback: number, max = 1000): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > max) throw new UsageError(`${name} must be an integer from 1 to ${max}, got ${JSON.stringify(v)}`);
  return n;
}
