import { CliError, type Command, EXIT, parse, UsageError } from "./command.js";
import { doctorCommand } from "./doctor.js";
import { exportCommand } from "./export.js";
import { hookCommand } from "./hook.js";
import { installCommand, uninstallCommand } from "./install.js";
import { compactCommand, lastCommand, recallLogCommand, searchCommand, unlearnCommand } from "./lessons.js";
import { loginCommand, logoutCommand } from "./login.js";
import { statsCommand } from "./stats.js";
import { syncCommand } from "./sync.js";

const VERSION = "0.1.0";

const COMMANDS: Command[] = [
  loginCommand,
  logoutCommand,
  installCommand,
  uninstallCommand,
  hookCommand,
  syncCommand,
  doctorCommand,
  searchCommand,
  lastCommand,
  recallLogCommand,
  compactCommand,
  unlearnCommand,
  statsCommand,
  exportCommand,
];

function usage(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    "Usage: engram COMMAND [options]",
    "",
    "engram gives Claude Code a memory: a hook uploads each session's transcript, the server extracts lessons,",
    "and Claude Code recalls them through engram's MCP server.",
    "",
    "Commands:",
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    "",
    "`engram COMMAND --help` describes a command. Config: ~/.engram (ENGRAM_HOME); ENGRAM_URL and ENGRAM_API_KEY override it.",
    "Exit codes: 0 ok, 1 failed, 2 bad usage, 3 not logged in, 4 key refused, 5 server unreachable.",
    "",
  ].join("\n");
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === "help" || name === "--help" || name === "-h") {
    const cmd = COMMANDS.find((c) => c.name === rest[0]);
    if (cmd && name === "help") return main([cmd.name, "--help"]);
    process.stdout.write(usage());
    return name ? EXIT.ok : EXIT.usage;
  }
  if (name === "--version" || name === "-v") {
    process.stdout.write(`${VERSION}\n`);
    return EXIT.ok;
  }
  const cmd = COMMANDS.find((c) => c.name === name);
  if (!cmd) {
    process.stderr.write(`engram: unknown command ${JSON.stringify(name)}\n\n${usage()}`);
    return EXIT.usage;
  }
  try {
    const parsed = parse(cmd, rest);
    if (!parsed) return EXIT.ok;
    return await cmd.run(parsed.values, parsed.positionals);
  } catch (err) {
    // The hook never fails Claude Code, whatever went wrong (even bad flags).
    if (cmd === hookCommand) return EXIT.ok;
    if (err instanceof UsageError) {
      process.stderr.write(`engram ${cmd.name}: ${err.message}\nUsage: engram ${cmd.usage} (see engram ${cmd.name} --help)\n`);
      return EXIT.usage;
    }
    if (err instanceof CliError) {
      process.stderr.write(`engram ${cmd.name}: ${err.message}\n${err.hint ? `  fix: ${err.hint}\n` : ""}`);
      return err.exitCode;
    }
    process.stderr.write(`engram ${cmd.name}: unexpected error: ${(err as Error).stack ?? String(err)}\n`);
    return EXIT.failure;
  }
}

process.exitCode = await main(process.argv.slice(2));
