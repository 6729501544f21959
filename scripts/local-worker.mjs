// One local engram server for tests, benchmarks and load runs: `wrangler dev` on 127.0.0.1 and a free port,
// over fresh local D1 databases in a temporary folder (the directory and every shard, migrated first), ready once GET /healthz answers 200.
// wrangler runs in its own process group, so stop() ends it and the workerd it started together, then removes
// the folder. Types: local-worker.d.mts.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { d1Bindings } from "./migrate.mjs";

const ROOT = path.join(import.meta.dirname, "..");
const WRANGLER = path.join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js");
// Offline: no Request.cf lookup, no telemetry; plain logs for error messages. No local observability either:
// wrangler dev streams a trace of every invocation and subrequest to a collector worker of its own in the same
// workerd (on by default), which cost a chat turn a fifth of its CPU; nothing here reads those traces.
const ENV = { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false", NO_COLOR: "1", X_LOCAL_OBSERVABILITY: "false" };
const OUTPUT_KEPT = 256 * 1024;

/** A port nothing listens on right now (the OS picks it). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function wrangler(args, options) {
  return spawn(process.execPath, [WRANGLER, ...args], { cwd: ROOT, env: ENV, ...options });
}

async function migrate(persist) {
  for (const binding of d1Bindings()) await migrateOne(binding, persist);
}

function migrateOne(binding, persist) {
  return new Promise((resolve, reject) => {
    const child = wrangler(["d1", "migrations", "apply", binding, "--local", "--persist-to", persist], { stdio: ["pipe", "pipe", "pipe"] });
    let log = "";
    child.stdout.on("data", (d) => (log += d));
    child.stderr.on("data", (d) => (log += d));
    child.stdin.end("y\n");
    child.once("error", reject);
    child.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`D1 migrations of ${binding} failed (${code}):\n${log}`))));
  });
}

const groupAlive = (pid) => {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
};
const signalGroup = (pid, signal) => {
  try {
    process.kill(-pid, signal);
  } catch {}
};
const pause = (ms) => new Promise((r) => setTimeout(r, ms));

export async function startLocalWorker({ entry, vars = {}, envFile, testScheduled = false, readyTimeoutMs = 240_000 } = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), "engram-worker-"));
  const persist = path.join(dir, "state");
  try {
    await migrate(persist);
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const [port, inspector] = [await freePort(), await freePort()];
  const args = ["dev", ...(entry ? [entry] : []), "--ip", "127.0.0.1", "--port", String(port), "--inspector-port", String(inspector)];
  args.push("--persist-to", persist, "--show-interactive-dev-session=false");
  if (envFile) args.push("--env-file", envFile);
  if (testScheduled) args.push("--test-scheduled");
  for (const [name, value] of Object.entries(vars)) args.push("--var", `${name}:${value}`);

  const child = wrangler(args, { detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let log = "";
  const keep = (d) => {
    log += d;
    if (log.length > OUTPUT_KEPT) log = log.slice(-OUTPUT_KEPT);
  };
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  const output = () => log;

  // If the caller exits without stop(), still leave no workerd behind.
  const onExit = () => {
    signalGroup(child.pid, "SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  };
  process.once("exit", onExit);
  let stopped;
  const stop = () => {
    stopped ??= (async () => {
      process.removeListener("exit", onExit);
      signalGroup(child.pid, "SIGTERM");
      const deadline = Date.now() + 10_000;
      while (groupAlive(child.pid) && Date.now() < deadline) await pause(100);
      signalGroup(child.pid, "SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    })();
    return stopped;
  };

  const origin = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + readyTimeoutMs;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`wrangler dev exited (${child.exitCode}):\n${log.slice(-4000)}`);
    }
    const ok = await fetch(`${origin}/healthz`, { signal: AbortSignal.timeout(20_000) }).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return { origin, port, inspector, pid: child.pid, persist, stop, output };
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`wrangler dev did not answer /healthz within ${readyTimeoutMs / 1000} s:\n${log.slice(-4000)}`);
    }
    await pause(250); // polling for start-up, not a timing assumption
  }
}
