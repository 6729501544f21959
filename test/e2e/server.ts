/**
 * Starts `wrangler dev` for the browser tests: the test Worker (production capabilities plus the test
 * capability, whose `wipe_cache` tool needs approval), the offline model (no Anthropic key), and a fresh
 * local D1 in a temporary persistence folder, migrated first. Listens on a free port of 127.0.0.1.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

export const ADMIN_TOKEN = "e2e-admin-token-0123456789abcdef";
const root = path.join(import.meta.dirname, "../..");
const env = { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false", NO_COLOR: "1" };
const wranglerBin = path.join(root, "node_modules/wrangler/bin/wrangler.js");

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const a = s.address();
      s.close(() => (a && typeof a === "object" ? resolve(a.port) : reject(new Error("no port"))));
    });
  });

export type DevServer = { origin: string; stop: () => Promise<void>; output: () => string };

export async function startDevServer(): Promise<DevServer> {
  const dir = mkdtempSync(path.join(tmpdir(), "engram-e2e-"));
  const envFile = path.join(dir, "e2e.env");
  // Only the admin token: with no ANTHROPIC_API_KEY the offline model answers, whatever the developer's .dev.vars holds.
  writeFileSync(envFile, `ADMIN_TOKEN=${ADMIN_TOKEN}\n`);
  const persist = path.join(dir, "state");
  const migrate = spawnSync(process.execPath, [wranglerBin, "d1", "migrations", "apply", "DB", "--local", "--persist-to", persist], {
    cwd: root,
    env,
    input: "y\n",
    encoding: "utf8",
  });
  if (migrate.status !== 0) throw new Error(`migrations failed: ${migrate.stderr || migrate.stdout}`);

  const [port, inspector] = [await freePort(), await freePort()];
  const args = [
    "dev",
    "test/worker.ts",
    "--ip",
    "127.0.0.1",
    "--port",
    String(port),
    "--inspector-port",
    String(inspector),
    "--persist-to",
    persist,
    "--env-file",
    envFile,
    "--show-interactive-dev-session=false",
    "--log-level",
    "warn",
  ];
  const child: ChildProcess = spawn(process.execPath, [wranglerBin, ...args], { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
  let log = "";
  child.stdout?.on("data", (d) => (log += d));
  child.stderr?.on("data", (d) => (log += d));
  const origin = `http://127.0.0.1:${port}`;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));

  const stop = async () => {
    if (child.exitCode === null) child.kill("SIGTERM");
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
    if (child.exitCode === null) child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  };
  // Ready when /healthz answers 200 (the first start bundles the Worker and builds the web app).
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited (${child.exitCode}):\n${log}`);
    const ok = await fetch(`${origin}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`wrangler dev did not become ready:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return { origin, stop, output: () => log };
}

/** A user and their first API key, through the admin API. */
export async function createUser(origin: string, email: string): Promise<string> {
  const res = await fetch(`${origin}/v1/admin/users`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ email }),
  });
  if (!res.ok) throw new Error(`create user: ${res.status} ${await res.text()}`);
  const body = (await res.json()) as { api_key: { key: string } };
  return body.api_key.key;
}
