#!/usr/bin/env node
// `npm run lint:openapi`: serves engram with `wrangler dev` (offline, throwaway local state), saves the
// document it answers at /openapi.json to .wrangler/openapi.json, and lints that with Redocly's
// recommended rules (redocly.yaml). The document is the one clients see, not a copy built another way.
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

const env = { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false" };
const persist = mkdtempSync(path.join(os.tmpdir(), "engram-openapi-"));
const port = 8500 + Math.floor(Math.random() * 200);
const dev = spawn("npx", ["wrangler", "dev", "--port", String(port), "--persist-to", persist], { env, stdio: ["ignore", "pipe", "pipe"], detached: true });
let log = "";
dev.stdout.on("data", (d) => {
  log += d;
});
dev.stderr.on("data", (d) => {
  log += d;
});
const stop = () => {
  try {
    process.kill(-dev.pid, "SIGTERM");
  } catch {}
  rmSync(persist, { recursive: true, force: true });
};

let doc;
for (let i = 0; i < 300 && !doc; i++) {
  doc = await fetch(`http://127.0.0.1:${port}/openapi.json`).then(
    (r) => (r.ok ? r.text() : undefined),
    () => undefined,
  );
  if (!doc) await new Promise((r) => setTimeout(r, 200));
}
stop();
if (!doc) {
  console.error(`wrangler dev did not serve /openapi.json:\n${log}`);
  process.exit(1);
}
mkdirSync(".wrangler", { recursive: true });
// Indented, so lint findings point at readable lines.
writeFileSync(".wrangler/openapi.json", JSON.stringify(JSON.parse(doc), null, 2));
const lint = spawnSync("npx", ["redocly", "lint", ".wrangler/openapi.json"], { env, stdio: "inherit" });
process.exit(lint.status ?? 1);
