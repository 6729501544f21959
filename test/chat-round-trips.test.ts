// How many D1 round trips a chat turn waits for before the model is called (counted by test/d1-meter.ts
// in the test Worker). A count, not a timing: each sequential round trip is latency on every turn.
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { meter } from "./d1-meter";
import { api, chat, createUser, readSse, recalledIn, script, seen, textReply } from "./helpers";
import { getJson, importFacts } from "./memory-helpers";

type ContextLog = { injected: { sections: { name: string; ids: string[] }[] } };

const T = 60_000;

async function meteredTurn(key: string, body: Record<string, unknown>) {
  meter.arm();
  const events = await readSse(await api(key, "POST", "/v1/chat", body));
  expect(events.at(-1)).toMatchObject({ type: "done" });
  const reading = meter.reading();
  if (!reading) throw new Error("the model was never called");
  return reading;
}

describe("D1 round trips before the model call", () => {
  it(
    "a turn in an existing session: the key lookup, then one batch (session, budget and every provider's reads)",
    async () => {
      const u = await createUser("pro");
      // Nothing for fact retrieval to search for (no words in the message or the last reply).
      await script(u.id, textReply("…"));
      const { sessionId } = await chat(u.key, { message: "…" });
      expect(await meteredTurn(u.key, { message: "?", session_id: sessionId })).toEqual({ calls: 2, sequential: 2 });
    },
    T,
  );

  it(
    "a new session's first turn: one more, the session row's insert guarded by the budget",
    async () => {
      const u = await createUser("pro");
      expect(await meteredTurn(u.key, { message: "?" })).toEqual({ calls: 3, sequential: 3 });
    },
    T,
  );

  it(
    "fact retrieval joins that batch: a user with stored facts gets them injected, still in two round trips",
    async () => {
      const u = await createUser("pro");
      await importFacts(u.key, [
        { text: "User grows tomatoes and basil on a balcony in Lisbon" },
        { text: "User's sister Marta is a nurse in Porto" },
        { text: "User prefers oat milk in coffee" },
      ]);
      await script(u.id, textReply("Hello."), textReply("Tomatoes and basil."));
      const { sessionId } = await chat(u.key, { message: "hi" });
      const reading = await meteredTurn(u.key, { message: "what do I grow on my balcony?", session_id: sessionId });
      expect(reading.sequential).toBeLessThanOrEqual(2);
      // Local D1 compiles a statement once per text, but a bound LIMIT makes SQLite compile it again on every
      // call (src/db/limit.ts): what a turn reads before its model call writes its LIMITs in.
      expect(meter.statements().length).toBeGreaterThan(3);
      expect(meter.statements().filter((text) => /\blimit\s+\?/i.test(text))).toEqual([]);
      const recalled = recalledIn((await seen(u.id)).at(-1)).join("\n");
      expect(recalled).toContain("User grows tomatoes and basil on a balcony in Lisbon");
      // Only what matches: the unrelated facts stay out of this turn's context.
      expect(recalled).not.toContain("oat milk");
      const log = (await getJson<{ context_logs: ContextLog[] }>(u.key, "/v1/memory/context-logs")).context_logs[0];
      expect(log?.injected.sections.find((s) => s.name === "retrieved_facts")?.ids).toHaveLength(1);
    },
    T,
  );

  it(
    "another user's session is refused from that batch: 404, the model never called, nothing stored",
    async () => {
      const alice = await createUser();
      const mallory = await createUser();
      const { sessionId } = await chat(alice.key, { message: "my plans" });
      meter.arm();
      const res = await api(mallory.key, "POST", "/v1/chat", { message: "tell me", session_id: sessionId });
      expect(res.status).toBe(404);
      expect(meter.reading()).toBeNull();
      // The session object Mallory's request reached stores nothing.
      const stub = env.SESSIONS.get(env.SESSIONS.idFromName(`${mallory.id}/${sessionId}`));
      const tables = await runInDurableObject(stub, (_o, state) => state.storage.sql.exec("SELECT name FROM sqlite_master WHERE type = 'table'").toArray());
      expect(tables).toEqual([]);
    },
    T,
  );
});
