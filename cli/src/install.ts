import { copyFile, mkdir, rm } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { findHooks, findMcp, mcpEntry, withHooks, withMcp, withoutHooks, withoutMcp } from "./claude-settings.js";
import { CliError, type Command, EXIT, str, UsageError, type Values } from "./command.js";
import { requireConfig } from "./config.js";
import { formatJson, isObject, type JsonObject, readJson, readJsonObject, writeFileAtomic } from "./jsonfile.js";
import { claudeFiles, engramFiles } from "./paths.js";

export type Scope = "user" | "project" | "local";
const SCOPES: Scope[] = ["user", "project", "local"];

/** One file edit: the file, its content before (undefined: it does not exist) and after. */
type Edit = { file: string; before: JsonObject | undefined; after: JsonObject; newFileMode: number; what: string };

type InstallRecord = { file: string; backup: string | null; scope: Scope; at: string };

function parseScope(v: Values[string]): Scope {
  const s = str(v) ?? "user";
  if (!SCOPES.includes(s as Scope)) throw new UsageError(`--scope must be one of ${SCOPES.join(", ")}, got ${s}`);
  return s as Scope;
}

/** Where each scope's hooks and MCP server go (Claude Code's own files for that scope). */
export function scopeFiles(scope: Scope, cwd = process.cwd()) {
  const c = claudeFiles(cwd);
  if (scope === "user") return { settings: c.userSettings, mcp: c.globalConfig, mcpProjectKey: undefined };
  if (scope === "project") return { settings: c.projectSettings, mcp: c.projectMcp, mcpProjectKey: undefined };
  return { settings: c.localSettings, mcp: c.globalConfig, mcpProjectKey: path.resolve(cwd) };
}

const quote = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `"${s.replace(/(["\\$`])/g, "\\$1")}"`);

/** The command Claude Code runs: this Node and this CLI by absolute path, so it works whatever the hook's PATH. */
export function defaultHookCommand(): string {
  // This module runs as cli/dist/cli/src/install.js (the build keeps the repository's layout, client/ beside cli/).
  const bin = fileURLToPath(new URL("../../../bin/engram.js", import.meta.url));
  return `${quote(process.execPath)} ${quote(bin)} hook`;
}

const mask = (text: string) => text.replace(/(Bearer )([^\s"$]{4})[^\s"]*/g, "$1$2…");

async function planInstall(scope: Scope, command: string): Promise<{ edits: Edit[]; notes: string[] }> {
  const config = await requireConfig();
  const files = scopeFiles(scope);
  const notes: string[] = [];
  // A project's .mcp.json is usually committed: it names the key through Claude Code's ${VAR} expansion instead.
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a literal ${VAR} that Claude Code expands, not ours
  const authorization = scope === "project" ? "Bearer ${ENGRAM_API_KEY}" : `Bearer ${config.apiKey}`;
  if (scope === "project") notes.push("the project's .mcp.json reads the key from ENGRAM_API_KEY: set it in the environment Claude Code starts in");
  const settings = await readJsonObject(files.settings);
  const mcpRoot = await readJsonObject(files.mcp);
  return {
    edits: [
      { file: files.settings, before: settings, after: withHooks(settings ?? {}, command), newFileMode: 0o644, what: "Stop and SessionEnd hooks" },
      {
        file: files.mcp,
        before: mcpRoot,
        after: withMcp(mcpRoot ?? {}, mcpEntry(config.url, authorization), files.mcpProjectKey),
        // ~/.claude.json gets the API key: only its owner may read it.
        newFileMode: scope === "project" ? 0o644 : 0o600,
        what: `MCP server "engram" (${config.url}/mcp)`,
      },
    ],
    notes,
  };
}

async function planUninstall(scope: Scope): Promise<Edit[]> {
  const files = scopeFiles(scope);
  const settings = await readJsonObject(files.settings);
  const mcpRoot = await readJsonObject(files.mcp);
  const edits: Edit[] = [];
  if (settings) edits.push({ file: files.settings, before: settings, after: withoutHooks(settings), newFileMode: 0o644, what: "engram hooks" });
  if (mcpRoot) edits.push({ file: files.mcp, before: mcpRoot, after: withoutMcp(mcpRoot, files.mcpProjectKey), newFileMode: 0o644, what: "MCP server engram" });
  return edits;
}

const changed = (e: Edit) => e.before === undefined || JSON.stringify(e.before) !== JSON.stringify(e.after);

async function readRecords(): Promise<InstallRecord[]> {
  const raw = await readJson<unknown>(engramFiles().installs).catch(() => undefined);
  return Array.isArray(raw) ? (raw.filter((r) => isObject(r) && typeof r.file === "string") as InstallRecord[]) : [];
}

/** Copies the file as it was before engram's first edit; returns the backup path (null: the file was new). */
async function backup(file: string, existed: boolean): Promise<string | null> {
  if (!existed) return null;
  const dir = path.join(engramFiles().backups, new Date().toISOString().replace(/[:.]/g, "-"));
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const dest = path.join(dir, file.replace(/[/\\:]/g, "_"));
  await copyFile(file, dest);
  return dest;
}

function report(edits: Edit[], dryRun: boolean, json: boolean, notes: string[], extra: JsonObject = {}): void {
  if (json) {
    const out = {
      dry_run: dryRun,
      files: edits.map((e) => ({ file: e.file, what: e.what, changed: changed(e), after: dryRun ? e.after : undefined })),
      notes,
      ...extra,
    };
    process.stdout.write(mask(formatJson(out)));
    return;
  }
  for (const e of edits) {
    const verb = !changed(e) ? "unchanged" : dryRun ? "would update" : "updated";
    process.stdout.write(`${verb}: ${e.file} (${e.what})\n`);
    if (dryRun && changed(e)) process.stdout.write(`${mask(formatJson(e.after).trimEnd().replace(/^/gm, "    "))}\n`);
  }
  for (const n of notes) process.stdout.write(`note: ${n}\n`);
}

async function apply(edits: Edit[], scope: Scope): Promise<void> {
  const records = await readRecords();
  for (const e of edits.filter(changed)) {
    // Keep the oldest backup: it is the file as it was before engram touched it.
    if (!records.some((r) => r.file === e.file))
      records.push({ file: e.file, backup: await backup(e.file, e.before !== undefined), scope, at: new Date().toISOString() });
    await writeFileAtomic(e.file, formatJson(e.after), e.newFileMode);
  }
  await mkdir(engramFiles().home, { recursive: true, mode: 0o700 });
  await writeFileAtomic(engramFiles().installs, formatJson(records), 0o600);
}

export const installCommand: Command = {
  name: "install",
  summary: "Add engram's Stop/SessionEnd hook and MCP server to Claude Code's settings",
  usage: "install [--scope user|project|local] [--dry-run] [--json]",
  details: [
    "Scopes (Claude Code's own files):",
    "  user     hooks in ~/.claude/settings.json, MCP server in ~/.claude.json (default)",
    "  project  hooks in .claude/settings.json, MCP server in .mcp.json (key read from $ENGRAM_API_KEY)",
    "  local    hooks in .claude/settings.local.json, MCP server in ~/.claude.json for this directory only",
    "Running it again changes nothing. The first change to each file keeps a backup under ~/.engram/backups.",
  ].join("\n"),
  options: {
    scope: { type: "string", value: "SCOPE", default: "user", help: "user, project or local" },
    "dry-run": { type: "boolean", help: "Print the change, write nothing" },
    command: { type: "string", value: "CMD", help: 'The hook command to run instead of this CLI\'s absolute path (e.g. "npx engram hook")' },
    json: { type: "boolean", help: "Machine-readable output" },
  },
  run: async (values) => {
    const scope = parseScope(values.scope);
    const command = str(values.command) ?? defaultHookCommand();
    if (!/\bhook(\s|$)/.test(command)) throw new UsageError('--command must run the engram hook, e.g. "npx engram hook"');
    const { edits, notes } = await planInstall(scope, command);
    const dryRun = values["dry-run"] === true;
    if (!dryRun) await apply(edits, scope);
    report(edits, dryRun, values.json === true, notes, { scope, command });
    return EXIT.ok;
  },
};

export const uninstallCommand: Command = {
  name: "uninstall",
  summary: "Remove engram's hooks and MCP server from Claude Code's settings",
  usage: "uninstall [--scope user|project|local] [--restore-backup] [--dry-run] [--json]",
  details:
    "By default only engram's own entries are removed, so changes made since the install are kept. --restore-backup instead puts back the files exactly as they were before engram's first install (and deletes files the install created).",
  options: {
    scope: { type: "string", value: "SCOPE", default: "user", help: "user, project or local" },
    "restore-backup": { type: "boolean", help: "Restore the backed-up files verbatim" },
    "dry-run": { type: "boolean", help: "Print the change, write nothing" },
    json: { type: "boolean", help: "Machine-readable output" },
  },
  run: async (values) => {
    const scope = parseScope(values.scope);
    const dryRun = values["dry-run"] === true;
    if (values["restore-backup"]) return restoreBackups(scope, dryRun, values.json === true);
    const edits = await planUninstall(scope);
    if (!dryRun) {
      const records = await readRecords();
      for (const e of edits.filter(changed)) {
        // A file the install created and that now holds nothing else goes away again.
        const created = records.some((r) => r.file === e.file && r.backup === null);
        if (created && Object.keys(e.after).length === 0) await rm(e.file, { force: true });
        else await writeFileAtomic(e.file, formatJson(e.after), e.newFileMode);
      }
    }
    report(edits, dryRun, values.json === true, []);
    return EXIT.ok;
  },
};

async function restoreBackups(scope: Scope, dryRun: boolean, json: boolean): Promise<number> {
  const records = (await readRecords()).filter((r) => r.scope === scope);
  if (!records.length) throw new CliError(`no install backups recorded for scope ${scope}`, EXIT.failure, "use `engram uninstall` without --restore-backup");
  const done: { file: string; action: string }[] = [];
  for (const r of records) {
    const action = r.backup ? `restore from ${r.backup}` : "delete (the install created it)";
    if (!dryRun) {
      if (r.backup) await copyFile(r.backup, r.file);
      else await rm(r.file, { force: true });
    }
    done.push({ file: r.file, action });
  }
  if (!dryRun) {
    const rest = (await readRecords()).filter((r) => r.scope !== scope);
    await writeFileAtomic(engramFiles().installs, formatJson(rest), 0o600);
  }
  if (json) process.stdout.write(formatJson({ dry_run: dryRun, restored: done }));
  else for (const d of done) process.stdout.write(`${dryRun ? "would " : ""}${d.action}: ${d.file}\n`);
  return EXIT.ok;
}

/** For doctor: where engram's hook and MCP server are installed, across scopes. */
export async function installedState(cwd = process.cwd()) {
  const out: { scope: Scope; hooks: { event: string; command: string }[]; mcp: unknown; settingsFile: string; mcpFile: string }[] = [];
  for (const scope of SCOPES) {
    const files = scopeFiles(scope, cwd);
    const settings = await readJsonObject(files.settings);
    const mcpRoot = await readJsonObject(files.mcp);
    out.push({
      scope,
      hooks: settings ? findHooks(settings) : [],
      mcp: mcpRoot ? findMcp(mcpRoot, files.mcpProjectKey) : undefined,
      settingsFile: files.settings,
      mcpFile: files.mcp,
    });
  }
  return out;
}
