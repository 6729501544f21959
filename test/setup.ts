import { applyD1Migrations, env } from "cloudflare:test";
import { afterAll, afterEach } from "vitest";
import { shardBindings } from "../src/db/shards";
import { mismatches } from "./contract/checked-worker";

// Every database gets every migration: the directory (DB, also shard 0) and each shard (src/db/shards.ts).
for (const d1 of shardBindings(env)) await applyD1Migrations(d1, env.TEST_MIGRATIONS);

// Every response the Worker gave during a test (or the hooks before it) matched /openapi.json, or the test fails.
const failOnMismatch = () => {
  const found = mismatches.splice(0);
  if (found.length) throw new Error(`responses that do not match /openapi.json:\n- ${found.join("\n- ")}`);
};
afterEach(failOnMismatch);
afterAll(failOnMismatch);
