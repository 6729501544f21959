/**
 * A fact search's statements are compiled once by D1, which keeps compiled statements by their text: the text
 * must not vary with the user or the clock (those are bound), and no LIMIT may be bound, since a bound LIMIT
 * makes SQLite recompile the statement whenever it is bound, i.e. on every search (src/db/limit.ts).
 */
import { env } from "cloudflare:test";
import { expect, it } from "vitest";
import { loadConfig } from "../src/config/config";
import type { BatchedRead, BatchReads } from "../src/core/context";
import { directoryOf } from "../src/db/shards";
import { memoryDeps } from "../src/memory/deps";
import { planSearch } from "../src/memory/ranking";
import { readCandidates } from "../src/memory/retrieval-reads";

/** The SQL text of every statement one search reads with (run for real against the test database). */
async function statementsOf(userId: string, query: string, now: number): Promise<string[]> {
  const texts: string[] = [];
  // Made-up users: the statements' text is what is compared, read against shard 0.
  const db = directoryOf(env);
  const read = (async (queries: BatchReads | Promise<BatchReads | null>) => {
    const q = await queries;
    if (!q) return null;
    // Every batch item is a drizzle query, which renders its SQL text.
    for (const s of q) texts.push((s as unknown as { toSQL(): { sql: string } }).toSQL().sql);
    return db.batch(q);
  }) as BatchedRead;
  const deps = memoryDeps(env, loadConfig(env), db);
  await readCandidates(deps, planSearch({ userId, query, k: 10, connectionIds: [] }, now), read);
  return texts;
}

it("a fact search's statements write their LIMITs in and have the same text for any user and time", async () => {
  const query = "Which city did I move to for the new job?";
  const a = await statementsOf("usr_aaaaaaaaaaaaaaaaaaaa", query, 1_700_000_000_000);
  const b = await statementsOf("usr_zzzzzzzzzzzzzzzzzzzz", query, 1_800_000_000_000);
  // Full-text lists and word counts, and the local vector index's matches.
  expect(a.length).toBeGreaterThanOrEqual(2);
  expect(b).toEqual(a);
  for (const text of a) expect(text).not.toMatch(/\blimit\s+\?/i);
  expect(a.join("\n")).toMatch(/LIMIT \d+/);
});
