import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { buildFakeAnthropic } from "./scripts/build-fake.mjs";

const FAKE_ANTHROPIC = path.join(import.meta.dirname, ".wrangler/test/fake-anthropic.mjs");

// wrangler.toml binds two D1 shards (DB and SHARD_1); the suite runs with a third unless ENGRAM_TEST_SHARDS says
// otherwise (`npm run test:one-shard` runs it with 1: a deployment with only DB is the same code).
const SHARDS = Number(process.env.ENGRAM_TEST_SHARDS ?? 3);
if (!Number.isInteger(SHARDS) || SHARDS < 1)
  throw new Error(`ENGRAM_TEST_SHARDS must be a whole number of at least 1, not "${process.env.ENGRAM_TEST_SHARDS}"`);
const extraShards = Object.fromEntries(Array.from({ length: Math.max(0, SHARDS - 2) }, (_, i) => [`SHARD_${i + 2}`, `engram-shard-${i + 2}`]));

/**
 * The wrangler configuration the suite runs on. Miniflare's options can add bindings but not take one away, so
 * one shard means a copy of wrangler.toml without its SHARD_1 block, written beside it (its relative paths hold;
 * git ignores it).
 */
function wranglerConfig(): string {
  const source = path.join(import.meta.dirname, "wrangler.toml");
  if (SHARDS > 1) return source;
  const toml = readFileSync(source, "utf8");
  const oneShard = toml.replace(/\[\[d1_databases\]\]\nbinding = "SHARD_1"\n(?:[^\n[]+\n)*/, "");
  if (oneShard === toml) throw new Error("wrangler.toml has no top-level SHARD_1 block to leave out for a one-shard run");
  const target = path.join(import.meta.dirname, ".wrangler.one-shard.toml");
  writeFileSync(target, oneShard);
  return target;
}

export default defineConfig(async () => {
  const migrations = await readD1Migrations(path.join(import.meta.dirname, "migrations"));
  // The fake Messages API runs as its own worker; bundle it (it shares src/model/wire.ts).
  await buildFakeAnthropic(FAKE_ANTHROPIC);
  return {
    plugins: [
      cloudflareTest({
        // The production configuration, with the test Worker (production capabilities + a test capability) as main,
        // every response it gives checked against its /openapi.json (test/contract/checked-worker.ts).
        main: "./test/contract/checked-worker.ts",
        wrangler: { configPath: wranglerConfig() },
        miniflare: {
          bindings: {
            TEST_MIGRATIONS: migrations,
            ADMIN_TOKEN: "test-admin-token-0123456789",
            ANTHROPIC_API_KEY: "sk-ant-test",
            ANTHROPIC_BASE_URL: "http://fake-anthropic.test",
            // The suite sends far more than a client would from one key, user and address: request rate limits
            // stay off here (as in wrangler.toml's local vars); test/limits-rate.test.ts turns them on with the
            // small TEST_* limiters below.
            RATE_LIMITS: "off",
            // The tests' host (test/helpers.ts BASE) beside wrangler.toml's local loopback names.
            MCP_ALLOWED_HOSTS: "engram.test,localhost,127.0.0.1,[::1]",
          },
          // Small limits for test/limits-rate.test.ts (swapped in for wrangler.toml's).
          ratelimits: {
            TEST_KEY_RATE_LIMIT: { namespace_id: "1101", simple: { limit: 6, period: 60 } },
            TEST_USER_RATE_LIMIT: { namespace_id: "1102", simple: { limit: 10, period: 60 } },
            TEST_ADMIN_RATE_LIMIT: { namespace_id: "1103", simple: { limit: 3, period: 60 } },
          },
          d1Databases: extraShards,
          // Every outbound fetch of the Worker under test goes to the fake Messages API.
          outboundService: "fake-anthropic",
          serviceBindings: { FAKE_ANTHROPIC: "fake-anthropic" },
          workers: [{ name: "fake-anthropic", modules: true, scriptPath: FAKE_ANTHROPIC, compatibilityDate: "2026-04-01" }],
        },
      }),
    ],
    test: {
      setupFiles: ["./test/setup.ts"],
      include: ["test/**/*.test.ts", "src/**/*.test.ts"],
      // workerd on a loaded 2-core machine can take tens of seconds per integration test; 5 s (vitest's default) flakes.
      testTimeout: 60_000,
      hookTimeout: 60_000,
      // Background work (queue consumers, waitUntil) can still be logging when a test file's environment closes
      // on a loaded machine: that log line is lost, no assertion failed. Every other unhandled error fails the run.
      onUnhandledError: (error) => (error.name === "EnvironmentTeardownError" && error.message.includes('"onUserConsoleLog"') ? false : undefined),
    },
  };
});
