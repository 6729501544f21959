/**
 * The server for the browser tests: the test Worker (production capabilities plus the test capability, whose
 * `wipe_cache` tool needs approval) under the shared local launcher, with the offline model (no Anthropic key).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { startLocalWorker } from "../../scripts/local-worker.mjs";

export const ADMIN_TOKEN = "e2e-admin-token-0123456789abcdef";

export type DevServer = { origin: string; stop: () => Promise<void>; output: () => string };

export async function startDevServer(): Promise<DevServer> {
  const dir = mkdtempSync(path.join(tmpdir(), "engram-e2e-"));
  const envFile = path.join(dir, "e2e.env");
  // Only the admin token: with no ANTHROPIC_API_KEY the offline model answers, whatever the developer's .dev.vars holds.
  writeFileSync(envFile, `ADMIN_TOKEN=${ADMIN_TOKEN}\n`);
  try {
    const worker = await startLocalWorker({ entry: "test/worker.ts", envFile });
    const stop = async () => {
      await worker.stop();
      rmSync(dir, { recursive: true, force: true });
    };
    return { origin: worker.origin, stop, output: worker.output };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
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
