import { applyD1Migrations, env } from "cloudflare:test";
import { shardBindings } from "../src/db/shards";

// Every database gets every migration: the directory (DB, also shard 0) and each shard (src/db/shards.ts).
for (const d1 of shardBindings(env)) await applyD1Migrations(d1, env.TEST_MIGRATIONS);
