/**
 * Sessions under deletion and crashes: requests queued on a session while it is deleted get a clean
 * 404 (never a 5xx), and the session row's counts follow the session object's own storage.
 */
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { sessionStub } from "../src/sessions/store";
import { api, chat, createUser, script, textReply } from "./helpers";
import { rowOnShards, userD1 } from "./shard-helpers";

const stall = { reply: { content: [{ type: "text" as const, text: "words that never finish" }], no_thinking: true }, chunk: 4, stall_after: 5 };

/** Starts a turn that holds the session's lock until `release` stops it (leaving the stream alone would not). */
async function holdLock(key: string, body: Record<string, unknown>) {
  const res = await api(key, "POST", "/v1/chat", body);
  const reader = res.body?.pipeThrough(new TextDecoderStream()).getReader();
  if (!reader) throw new Error("no response body");
  let text = "";
  while (!text.includes("event: text")) text += (await reader.read()).value ?? "";
  const sessionId = /"id":"(ses_[^"]+)"/.exec(text)?.[1] ?? "";
  return {
    sessionId,
    release: async () => {
      await api(key, "POST", `/v1/sessions/${sessionId}/stop`);
      await reader.cancel();
    },
  };
}

const row = (id: string) => rowOnShards<{ message_count: number; pending: number }>("SELECT message_count, pending FROM sessions WHERE id = ?", id);

describe("deleting a session with requests queued on it", () => {
  it("chats queued behind the delete get 404, never 5xx, and write nothing into the deleted session", async () => {
    const u = await createUser();
    await script(u.id, stall, textReply("a"), textReply("b"), textReply("c"), textReply("d"));
    const held = await holdLock(u.key, { message: "start" });
    // The delete waits for the session's lock; the chats sent after it queue behind it.
    const deleting = api(u.key, "DELETE", `/v1/sessions/${held.sessionId}`);
    const chats = ["one", "two", "three"].map((message) => api(u.key, "POST", "/v1/chat", { message, session_id: held.sessionId, stream: false }));
    const reads = [api(u.key, "GET", `/v1/sessions/${held.sessionId}`), api(u.key, "DELETE", `/v1/sessions/${held.sessionId}/pending`)];
    await held.release();
    expect((await deleting).status).toBe(200);
    const statuses = await Promise.all([...chats, ...reads].map(async (p) => (await p).status));
    for (const s of statuses) expect([200, 404, 409]).toContain(s);
    for (const res of await Promise.all(chats))
      if (res.status === 404) expect(((await res.json()) as { error: { code: string } }).error.code).toBe("not_found");
    expect((await api(u.key, "GET", `/v1/sessions/${held.sessionId}`)).status).toBe(404);
    // The object stays empty: a late turn did not recreate the history.
    await runInDurableObject(sessionStub(env, u.id, held.sessionId), async (_instance, state) => {
      const tables = state.storage.sql.exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'messages'").toArray();
      const rows = tables.length ? state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM messages").one().n : 0;
      expect(rows).toBe(0);
    });
  });

  it("DELETE /v1/memory during a burst of chats: every chat ends in 200 or 404, none in 5xx", async () => {
    const u = await createUser();
    await script(u.id, stall, ...Array.from({ length: 12 }, (_, i) => textReply(`r${i}`)));
    const held = await holdLock(u.key, { message: "start" });
    const other = await chat(u.key, { message: "second session" });
    const erasing = api(u.key, "DELETE", "/v1/memory");
    const burst = Array.from({ length: 8 }, (_, i) =>
      api(u.key, "POST", "/v1/chat", { message: `burst ${i}`, session_id: i % 2 ? held.sessionId : other.sessionId, stream: false }),
    );
    await held.release();
    expect((await erasing).status).toBe(200);
    const statuses = await Promise.all(burst.map(async (p) => (await p).status));
    for (const s of statuses) expect([200, 404]).toContain(s);
    expect((await api(u.key, "GET", "/v1/sessions")).status).toBe(200);
  });
});

describe("session counts follow the session object's storage", () => {
  it("a drifted row (a crash between the object's write and D1's) is repaired on read and by the next turn", async () => {
    const u = await createUser();
    await script(u.id, textReply("one"), textReply("two"));
    const first = await chat(u.key, { message: "hello" });
    expect(await row(first.sessionId)).toEqual({ message_count: 2, pending: 0 });
    await (await userD1(u.id)).prepare("UPDATE sessions SET message_count = 99, pending = 1 WHERE id = ?").bind(first.sessionId).run();
    const read = (await (await api(u.key, "GET", `/v1/sessions/${first.sessionId}`)).json()) as { session: { message_count: number; pending: boolean } };
    expect(read.session).toMatchObject({ message_count: 2, pending: false });
    expect(await row(first.sessionId)).toEqual({ message_count: 2, pending: 0 });
    await (await userD1(u.id)).prepare("UPDATE sessions SET message_count = 0 WHERE id = ?").bind(first.sessionId).run();
    await chat(u.key, { message: "again", session_id: first.sessionId });
    expect(await row(first.sessionId)).toEqual({ message_count: 4, pending: 0 });
  });
});
