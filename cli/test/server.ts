// Global setup of the CLI tests: a real engram server (`wrangler dev`, local D1 with the migrations applied,
// the offline model) on a free port, in a temporary persistence directory; stopped when the run ends.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";

const ROOT = path.join(import.meta.dirname, "..", "..");
const WRANGLER = path.join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js");
const ADMIN_TOKEN = "cli-test-admin-token-0123456789";

declare module "vitest" {
  export interface ProvidedContext {
    serverUrl: string;
    adminToken: string;
  }
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });

async function waitReady(url: string, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 240_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited with ${child.exitCode}:\n${log()}`);
    const ok = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(20_000) }).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 500)); // polling for start-up, not a timing assumption
  }
  throw new Error(`wrangler dev did not answer /healthz within 240 s:\n${log()}`);
}

export default async function setup(project: TestProject) {
  const dir = mkdtempSync(path.join(tmpdir(), "engram-cli-server-"));
  const persist = path.join(dir, "state");
  const env = { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false", NO_COLOR: "1" };
  const migrate = spawnSync(process.execPath, [WRANGLER, "d1", "migrations", "apply", "DB", "--local", "--persist-to", persist], {
    cwd: ROOT,
    env,
    input: "y\n",
    encoding: "utf8",
  });
  if (migrate.status !== 0) throw new Error(`migrations failed:\n${migrate.stdout}\n${migrate.stderr}`);

  const port = await freePort();
  const args = [WRANGLER, "dev", "--ip", "127.0.0.1", "--port", String(port), "--persist-to", persist, "--var", `ADMIN_TOKEN:${ADMIN_TOKEN}`];
  args.push("--show-interactive-dev-session=false", "--inspector-port", String(await freePort()));
  // Its own process group, so the teardown stops wrangler and the workerd it starts.
  const child = spawn(process.execPath, args, { cwd: ROOT, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout?.on("data", (d) => (output += d));
  child.stderr?.on("data", (d) => (output += d));
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitReady(url, child, () => output.slice(-4000));
  } catch (err) {
    if (child.pid) process.kill(-child.pid, "SIGKILL");
    throw err;
  }
  project.provide("serverUrl", url);
  project.provide("adminToken", ADMIN_TOKEN);

  return async () => {
    if (child.pid && child.exitCode === null) {
      const exited = new Promise((r) => child.once("exit", r));
      process.kill(-child.pid, "SIGTERM");
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      if (child.exitCode === null) process.kill(-child.pid, "SIGKILL");
    }
    rmSync(dir, { recursive: true, force: true });
  };
}
