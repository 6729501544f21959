#!/usr/bin/env node
// `npm run db:migrate:local` and the deploy script: applies the migrations to every D1 database the configuration
// binds: the directory `DB` (also shard 0) and each shard `SHARD_1`, `SHARD_2`... (src/db/shards.ts). Every
// database gets every migration: one schema, so a shard can hold any user and a user can move between shards.
//   node scripts/migrate.mjs --local                      # wrangler.toml's top level (npm run dev's databases)
//   node scripts/migrate.mjs --remote --env production    # [env.production]'s databases
// `--quiet` prints one line per database (scripts/dev.mjs); exits non-zero at the first database that fails.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";

/**
 * The D1 bindings of wrangler.toml's top level, or of `[env.<name>]`: the `binding = "..."` of each
 * `[[d1_databases]]` (or `[[env.<name>.d1_databases]]`) table, in order.
 */
export function d1Bindings(envName, toml = readFileSync("wrangler.toml", "utf8")) {
  const wanted = envName ? `[[env.${envName}.d1_databases]]` : "[[d1_databases]]";
  const out = [];
  let inTable = false;
  for (const raw of toml.split("\n")) {
    const line = raw.trim();
    if (line.startsWith("[")) inTable = line === wanted;
    const m = inTable && /^binding\s*=\s*"([^"]+)"/.exec(line);
    if (m) out.push(m[1]);
  }
  return out;
}

/** Applies the migrations to each bound database; returns how many migrations each one got. */
export function migrateAll({ remote = false, envName, env = process.env, onFailure } = {}) {
  const applied = {};
  for (const binding of d1Bindings(envName)) {
    const args = ["wrangler", "d1", "migrations", "apply", binding, remote ? "--remote" : "--local", ...(envName ? ["--env", envName] : [])];
    const run = spawnSync("npx", args, { input: "y\n", env, encoding: "utf8" });
    if (run.status !== 0) {
      onFailure?.(binding, run);
      return null;
    }
    // Wrangler reprints its table of migrations after each one ("│ 0001_init.sql │ ✅ │"): count the names once.
    applied[binding] = new Set(run.stdout.match(/\d{4}_\S+\.sql(?=\s*│\s*✅)/g) ?? []).size;
  }
  return applied;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const envAt = args.indexOf("--env");
  const envName = envAt >= 0 ? args[envAt + 1] : undefined;
  const env = { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false" };
  const applied = migrateAll({
    remote: args.includes("--remote"),
    envName,
    env,
    onFailure: (binding, run) => {
      process.stdout.write(run.stdout ?? "");
      process.stderr.write(run.stderr ?? "");
      console.error(`migrate: ${binding} failed (output above); the databases before it are migrated`);
    },
  });
  if (!applied) process.exit(1);
  for (const [binding, n] of Object.entries(applied)) console.log(`migrate: ${binding}: ${n ? `applied ${n} migration${n === 1 ? "" : "s"}` : "up to date"}`);
}
