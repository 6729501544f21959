// How many D1 round trips a chat turn waits for before the model is called (counted by test/d1-meter.ts
// in the test Worker). A count, not a timing: each sequential round trip is latency on every turn.
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { meter } from "./d1-meter";
import { api, chat, createUser, readSse, script, textReply } from "./helpers";

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
    "fact retrieval adds its own queries after the batch: at most two more sequential round trips",
    async () => {
      const u = await createUser("pro");
      const { sessionId } = await chat(u.key, { message: "My name is Ana; I grow tomatoes in Lisbon." });
      const reading = await meteredTurn(u.key, { message: "what do I grow?", session_id: sessionId });
      expect(reading.sequential).toBeGreaterThan(2);
      expect(reading.sequential).toBeLessThanOrEqual(4);
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
