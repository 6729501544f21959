/**
 * What moving one user to another shard costs (src/account/move.ts), for a user with a year of the default
 * profile of `npm run scaling` with 30-day audit retention: 365 facts, 730 observations, 146 sessions, 1,703 usage
 * rows, 120 per-turn audit rows of about 8 kB, 243 memory revisions (the latest 100 with their copies of the
 * tiers). Reported, never asserted: the D1 round trips (what a move costs anywhere) and the local time.
 * Run: `npx vitest run -c bench/vitest.config.ts bench/shards-move.test.ts`.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { moveUser } from "../src/account/move";
import { shardD1 } from "../src/db/shards";
import { createUser } from "../test/helpers";
import { report } from "./report";

const GROUP = {
  group: "Shards: moving one user after a year (30-day audit retention)",
  target: "no target: an admin operation, measured to size docs/scaling.md",
  description:
    "POST /v1/admin/users/{id}/move's work (`moveUser`) for one user of the default scaling profile: copy in pages of 250 rows, verify rows and checksums of every table on both shards, switch, delete the old rows. `round_trips`: D1 calls (a batch counts once).",
};

const text = (n: number, seed: number) => `${"lorem ipsum dolor sit amet ".repeat(Math.ceil(n / 27)).slice(0, n - 6)}${String(seed).padStart(6, "0")}`;

/** Inserts `n` rows built by `row` in batches of single-row statements. */
async function fill(d1: D1Database, n: number, row: (i: number) => [string, unknown[]]) {
  for (let i = 0; i < n; i += 100) {
    const batch = [];
    for (let j = i; j < Math.min(n, i + 100); j++) {
      const [sql, binds] = row(j);
      batch.push(d1.prepare(sql).bind(...binds));
    }
    await d1.batch(batch);
  }
}

describe("moving a user", () => {
  it("costs this many round trips and this long, locally", async () => {
    const u = await createUser("pro", 1);
    const d1 = shardD1(env, 1);
    const day = 86_400_000;
    const t0 = Date.now() - 365 * day;
    const at = (i: number, n: number) => t0 + Math.floor((i * 365 * day) / n);
    await fill(d1, 146, (i) => [
      "INSERT INTO sessions (id, user_id, title, message_count, created_at, updated_at) VALUES (?, ?, ?, 40, ?, ?)",
      [`ses_b${i}`, u.id, text(40, i), at(i, 146), at(i, 146)],
    ]);
    await fill(d1, 365, (i) => [
      "INSERT INTO facts (id, user_id, text, event_at, created_at) VALUES (?, ?, ?, ?, ?)",
      [`fct_b${i}`, u.id, text(90, i), at(i, 365), at(i, 365)],
    ]);
    await fill(d1, 730, (i) => [
      "INSERT INTO context_events (id, user_id, event_type, content, status, processed, created_at) VALUES (?, ?, 'fact', ?, 'processed', 1, ?)",
      [`evt_b${i}`, u.id, text(200, i), at(i, 730)],
    ]);
    await fill(d1, 1_703, (i) => [
      "INSERT INTO usage (id, user_id, kind, model, input_tokens, output_tokens, cost_usd, session_id, created_at) VALUES (?, ?, 'chat', 'claude-sonnet-5-5', 3000, 300, 0.01, ?, ?)",
      [`use_b${i}`, u.id, `ses_b${i % 146}`, at(i, 1_703)],
    ]);
    await fill(d1, 120, (i) => [
      "INSERT INTO context_logs (id, user_id, session_id, injected, created_at) VALUES (?, ?, ?, json_object('system', ?), ?)",
      [`ctx_b${i}`, u.id, `ses_b${i % 146}`, text(8_000, i), Date.now() - (120 - i) * 6 * 3_600_000],
    ]);
    await fill(d1, 243, (i) => [
      "INSERT INTO memory_runs (id, user_id, rev, kind, working_memory, scaffold, created_at) VALUES (?, ?, ?, 'consolidation', ?, ?, ?)",
      [`run_b${i}`, u.id, i + 1, i >= 143 ? text(2_600, i) : null, i >= 143 ? JSON.stringify({ notes: text(2_400, i) }) : null, at(i, 243)],
    ]);
    let clock = 0;
    const result = await moveUser(env, u.id, 2, {
      now: () => {
        clock = performance.now();
        return clock;
      },
    });
    expect(result.to).toBe(2);
    const bytes = Object.values(result.tables).reduce((n, t) => n + t.bytes, 0);
    console.log(
      `move: ${result.rows} rows, ${(bytes / 1e6).toFixed(2)} MB as compared, ${result.round_trips} D1 round trips carrying ${result.statements} statements, ${result.ms.toFixed(0)} ms locally`,
    );
    report(GROUP, "round_trips", [result.round_trips]);
    report(GROUP, "statements", [result.statements]);
    report(GROUP, "move_ms", [result.ms]);
    report(GROUP, "rows", [result.rows]);
  });
});
