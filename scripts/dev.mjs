#!/usr/bin/env node
// `npm run dev`: engram locally and offline. Creates .dev.vars from the example on first run,
// applies D1 migrations to the local database, then starts `wrangler dev` with cron testing on.
import { spawn, spawnSync } from "node:child_process";
import { copyFileSync, existsSync } from "node:fs";

const env = { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false" };
const wrangler = (args, opts = {}) => spawnSync("npx", ["wrangler", ...args], { stdio: "inherit", env, ...opts });

if (!existsSync(".dev.vars")) {
  copyFileSync(".dev.vars.example", ".dev.vars");
  console.log("engram: created .dev.vars from .dev.vars.example (local admin token; no Anthropic key, so the offline model answers)");
}

const migrate = wrangler(["d1", "migrations", "apply", "DB", "--local"], { input: "y\n", stdio: ["pipe", "inherit", "inherit"] });
if (migrate.status !== 0) process.exit(migrate.status ?? 1);

// `npm run dev -- --port 9000` (wrangler's own flag) wins; else the PORT variable; else 8787.
const args = process.argv.slice(2);
const portGiven = args.some((a) => a === "--port" || a.startsWith("--port="));
const port = portGiven ? [] : ["--port", process.env.PORT ?? "8787"];
const dev = spawn("npx", ["wrangler", "dev", "--test-scheduled", ...port, ...args], { stdio: "inherit", env });
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => dev.kill(signal));
dev.on("exit", (code) => process.exit(code ?? 0));
