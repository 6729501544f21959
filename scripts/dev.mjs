#!/usr/bin/env node
// `npm run dev`: engram locally and offline. Creates .dev.vars from the example on first run, applies D1
// migrations to the local databases (the directory and every shard, scripts/migrate.mjs) quietly, then starts `wrangler dev` with cron testing on. Wrangler's start-up
// banner (every binding, every var) is held back until the server is ready and replaced by the few lines a
// person needs; `npm run dev -- --verbose` shows all of it.
import { spawn } from "node:child_process";
import { copyFileSync, existsSync, readFileSync } from "node:fs";
import { migrateAll } from "./migrate.mjs";

const env = { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false" };
const args = process.argv.slice(2);
const verbose = args.includes("--verbose");
const wranglerArgs = args.filter((a) => a !== "--verbose");

if (!existsSync(".dev.vars")) {
  copyFileSync(".dev.vars.example", ".dev.vars");
  console.log("engram: created .dev.vars from .dev.vars.example (local admin token; no Anthropic key, so the offline model answers)");
}

const migrated = migrateAll({
  env,
  onFailure: (binding, run) => {
    process.stdout.write(run.stdout ?? "");
    process.stderr.write(run.stderr ?? "");
    console.error(`engram: applying the database migrations to ${binding} failed (output above)`);
  },
});
if (!migrated) process.exit(1);
const applied = Object.values(migrated).reduce((a, b) => a + b, 0);
const databases = Object.keys(migrated).length;
console.log(
  applied
    ? `engram: applied ${applied} database migration${applied === 1 ? "" : "s"} across ${databases} databases (the directory and its shards)`
    : `engram: ${databases} databases up to date (the directory and its shards)`,
);

// `npm run dev -- --port 9000` (wrangler's own flag) wins; else the PORT variable; else 8787.
const portGiven = wranglerArgs.some((a) => a === "--port" || a.startsWith("--port="));
const port = portGiven ? [] : ["--port", process.env.PORT ?? "8787"];
const dev = spawn("npx", ["wrangler", "dev", "--test-scheduled", ...port, ...wranglerArgs], { stdio: ["inherit", "pipe", "inherit"], env });

const adminToken = () => /^ADMIN_TOKEN=(.*)$/m.exec(readFileSync(".dev.vars", "utf8"))?.[1]?.trim();
let ready = verbose;
let held = "";
dev.stdout.on("data", (chunk) => {
  if (ready) return void process.stdout.write(chunk);
  held += chunk;
  const url = /Ready on (\S+)/.exec(held)?.[1];
  if (!url) return;
  ready = true;
  // Whatever wrangler printed after "Ready on" (a first request's log) still shows.
  const rest = held.slice(held.indexOf("\n", held.indexOf("Ready on")) + 1);
  console.log(
    [
      `engram: ready on ${url}  (web app: ${url}/, API: ${url}/v1/..., OpenAPI: ${url}/openapi.json)`,
      `engram: admin token: ADMIN_TOKEN in .dev.vars${adminToken() ? "" : " (not set: admin endpoints answer 401)"}`,
      "engram: press Ctrl+C to stop; `npm run dev -- --verbose` shows wrangler's full start-up output",
    ].join("\n"),
  );
  if (rest) process.stdout.write(rest);
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => dev.kill(signal));
dev.on("exit", (code) => {
  // Start-up failed before the server was ready: show what wrangler said.
  if (!ready) process.stdout.write(held);
  process.exit(code ?? 0);
});
