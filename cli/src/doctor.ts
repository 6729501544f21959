import { access, stat } from "node:fs/promises";
import { Api, EngramError, NetworkError, ok } from "./api.js";
import { CliError, type Command, EXIT } from "./command.js";
import { loadConfig } from "./config.js";
import { installedState } from "./install.js";
import { isObject } from "./jsonfile.js";
import { engramFiles } from "./paths.js";
import { pendingSessions, readState } from "./state.js";

type Check = { name: string; ok: boolean; warn?: boolean; detail: string; fix?: string };

const explain = (err: unknown) =>
  err instanceof CliError ? err.message : err instanceof EngramError ? `HTTP ${err.status} ${err.code}: ${err.message}` : (err as Error).message;

/** The script a hook command runs, when it names one by absolute path (the default install). */
const scriptOf = (command: string) => /"([^"]+engram\.js)"|(\S+engram\.js)/.exec(command)?.slice(1).find(Boolean);

async function mcpInitialize(url: string, apiKey: string): Promise<Response> {
  return fetch(`${url}/mcp`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "engram-doctor", version: "1" } },
    }),
    signal: AbortSignal.timeout(10_000),
  });
}

export async function runChecks(): Promise<Check[]> {
  const checks: Check[] = [];
  const files = engramFiles();

  // 1. config
  let config: { url?: string; apiKey?: string } = {};
  try {
    const loaded = await loadConfig();
    config = loaded.config;
    const missing = [!config.url && "server URL", !config.apiKey && "API key"].filter(Boolean);
    if (missing.length) checks.push({ name: "config", ok: false, detail: `no ${missing.join(" and no ")}`, fix: "engram login --url URL" });
    else {
      const mode = await stat(files.config).then(
        (s) => s.mode & 0o777,
        () => null,
      );
      const where = loaded.source.apiKey === "env" ? "ENGRAM_API_KEY" : files.config;
      if (mode !== null && mode & 0o077)
        checks.push({
          name: "config",
          ok: false,
          detail: `${files.config} is readable by others (mode ${mode.toString(8)})`,
          fix: `chmod 600 ${files.config}`,
        });
      else checks.push({ name: "config", ok: true, detail: `${config.url} (key from ${where})` });
    }
  } catch (err) {
    checks.push({ name: "config", ok: false, detail: explain(err), fix: `engram login again (it rewrites ${files.config})` });
  }

  // 2-3. server and key
  if (config.url) {
    try {
      const res = await fetch(`${config.url}/healthz`, { signal: AbortSignal.timeout(10_000) });
      checks.push(
        res.ok
          ? { name: "server", ok: true, detail: `${config.url} answers` }
          : { name: "server", ok: false, detail: `/healthz answered ${res.status}`, fix: "the server is up but unhealthy: check its logs" },
      );
    } catch (err) {
      checks.push({
        name: "server",
        ok: false,
        detail: `cannot reach ${config.url}: ${(err as Error & { cause?: Error }).cause?.message ?? (err as Error).message}`,
        fix: "check the URL (engram login --url URL) and your network",
      });
    }
  }
  if (config.url && config.apiKey) {
    try {
      await ok(new Api({ url: config.url, apiKey: config.apiKey }, 10_000).client().GET("/v1/keys"));
      checks.push({ name: "api key", ok: true, detail: "accepted" });
    } catch (err) {
      if (err instanceof EngramError && err.status === 401)
        checks.push({ name: "api key", ok: false, detail: "the server refused the key", fix: "engram login with a valid key" });
      else if (!(err instanceof NetworkError)) checks.push({ name: "api key", ok: false, detail: explain(err), fix: "check the server's logs" });
    }
  }

  // 4-5. Claude Code settings: readable, hook installed (and its script present), MCP server configured
  let hooks: { scope: string; command: string }[] = [];
  let mcps: { scope: string; entry: unknown; file: string }[] = [];
  try {
    const installed = await installedState();
    hooks = installed.flatMap((s) => s.hooks.map((h) => ({ scope: s.scope, command: h.command })));
    mcps = installed.filter((s) => s.mcp !== undefined).map((s) => ({ scope: s.scope, entry: s.mcp, file: s.mcpFile }));
  } catch (err) {
    checks.push({ name: "claude settings", ok: false, detail: explain(err), fix: (err instanceof CliError && err.hint) || "fix the file's JSON" });
  }
  if (!checks.some((c) => c.name === "claude settings")) {
    if (!hooks.length) checks.push({ name: "hook", ok: false, detail: "no engram hook in Claude Code's settings", fix: "engram install" });
    else {
      const missing: string[] = [];
      for (const h of hooks) {
        const script = scriptOf(h.command);
        if (
          script &&
          !(await access(script).then(
            () => true,
            () => false,
          ))
        )
          missing.push(script);
      }
      checks.push(
        missing.length
          ? { name: "hook", ok: false, detail: `the hook runs ${missing[0]}, which does not exist`, fix: "engram install (again, from where engram now lives)" }
          : { name: "hook", ok: true, detail: `installed (${[...new Set(hooks.map((h) => h.scope))].join(", ")} scope)` },
      );
    }
    const mcp = mcps[0];
    if (!mcp) checks.push({ name: "mcp config", ok: false, detail: "no engram MCP server in Claude Code's config", fix: "engram install" });
    else {
      const url = isObject(mcp.entry) ? mcp.entry.url : undefined;
      const expected = config.url ? `${config.url}/mcp` : undefined;
      if (expected && url !== expected)
        checks.push({ name: "mcp config", ok: false, detail: `${mcp.file} points at ${String(url)}, not ${expected}`, fix: "engram install" });
      else checks.push({ name: "mcp config", ok: true, detail: `${String(url)} (${mcp.scope} scope)` });
    }
  }

  // 6. MCP endpoint answers an initialize with this key
  if (config.url && config.apiKey && !checks.some((c) => c.name === "server" && !c.ok)) {
    try {
      const res = await mcpInitialize(config.url, config.apiKey);
      const body = await res.text();
      checks.push(
        res.ok && body.includes("serverInfo")
          ? { name: "mcp server", ok: true, detail: "initialize succeeded" }
          : {
              name: "mcp server",
              ok: false,
              detail: `POST /mcp answered ${res.status}`,
              fix: res.status === 401 ? "engram login with a valid key" : "update the engram server",
            },
      );
    } catch (err) {
      checks.push({ name: "mcp server", ok: false, detail: (err as Error).message, fix: "check the server" });
    }
  }

  // 7. last sync and the local queue
  const state = await readState();
  const sessions = Object.values(state.sessions);
  const last = sessions
    .map((s) => s.synced_at ?? "")
    .sort()
    .at(-1);
  const stuck = pendingSessions(state).filter(([, s]) => s.error);
  if (stuck.length) {
    checks.push({
      name: "sync",
      ok: false,
      detail: `${stuck.length} session(s) queued with errors; latest: ${stuck[0]?.[1].error}`,
      fix: "engram sync (details in ~/.engram/hook.log)",
    });
  } else if (!last) checks.push({ name: "sync", ok: true, warn: true, detail: "nothing synced yet", fix: "engram sync uploads existing transcripts" });
  else checks.push({ name: "sync", ok: true, detail: `last synced ${last}; ${sessions.length} session(s) tracked` });
  return checks;
}

export const doctorCommand: Command = {
  name: "doctor",
  summary: "Check config, server, key, Claude Code hook and MCP setup, and sync; each problem with a fix",
  usage: "doctor [--json]",
  details: "Exits 0 when every check passes, 1 otherwise.",
  options: { json: { type: "boolean", help: "Machine-readable output" } },
  run: async (values) => {
    const checks = await runChecks();
    const ok = checks.every((c) => c.ok);
    if (values.json) process.stdout.write(`${JSON.stringify({ ok, checks }, null, 2)}\n`);
    else
      for (const c of checks) {
        process.stdout.write(`${c.ok ? (c.warn ? "!" : "✓") : "✗"} ${c.name}: ${c.detail}\n`);
        if (c.fix && (!c.ok || c.warn)) process.stdout.write(`    fix: ${c.fix}\n`);
      }
    return ok ? EXIT.ok : EXIT.failure;
  },
};
