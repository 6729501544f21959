// Reads through D1 read replicas (src/db/replicas.ts): a turn's D1 session starts from the bookmark the session
// object kept from the turn before, so it reads what that turn wrote even where a replica answers.
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { newerBookmark } from "../src/db/replicas";
import { shardBindings } from "../src/db/shards";
import { SessionStorage } from "../src/sessions/storage";
import { fakeSessionsD1 } from "./fake-d1-sessions";
import { createUser, newSession, script, textReply, turnWithEnv } from "./helpers";
import { shardOf } from "./shard-helpers";

const T = 60_000;

describe("the D1 Sessions API", () => {
  it("the local binding has the documented shape: no bookmark before the first query, a string after it, and a session resumes from it", async () => {
    const session = env.DB.withSession("first-unconstrained");
    expect(session.getBookmark()).toBeNull();
    await session.prepare("SELECT 1").run();
    const bookmark = session.getBookmark();
    expect(typeof bookmark).toBe("string");
    const resumed = env.DB.withSession(bookmark ?? "");
    expect(await resumed.prepare("SELECT 2 AS n").first()).toEqual({ n: 2 });
    expect(env.DB.withSession("first-primary").getBookmark()).toBeNull();
  });

  it("the fake refuses what the API would: a bookmark it never issued", () => {
    const fake = fakeSessionsD1(env.DB);
    expect(() => fake.binding.withSession("yesterday")).toThrow(/not a bookmark/);
    expect(() => fake.binding.withSession("first-primary")).not.toThrow();
  });

  it("keeps the newer of two bookmarks (they sort oldest to newest)", () => {
    expect(newerBookmark(null, "b")).toBe("b");
    expect(newerBookmark("0002", "0001")).toBe("0002");
    expect(newerBookmark("0001", null)).toBe("0001");
  });

  /** A user's session whose shard is served by the fake Sessions binding, and a turn in it. */
  async function sessionOnFake(...replies: string[]) {
    const u = await createUser();
    const shard = await shardOf(u.id);
    const fake = fakeSessionsD1(shardBindings(env)[shard] as D1Database);
    const vars = { [shard === 0 ? "DB" : `SHARD_${shard}`]: fake.binding };
    const sessionId = await newSession(u.id);
    await script(u.id, ...replies.map((r) => textReply(r)));
    const storage = <R>(use: (s: SessionStorage) => R) =>
      runInDurableObject(env.SESSIONS.get(env.SESSIONS.idFromName(`${u.id}/${sessionId}`)), async (_i, state) => use(new SessionStorage(state.storage)));
    return { shard, fake, storage, turn: (message: string) => turnWithEnv(vars, { userId: u.id, sessionId, message }) };
  }

  it(
    "a turn starts its session from where the previous turn's left off, on the user's shard",
    async () => {
      const { shard, fake, storage, turn } = await sessionOnFake("One.", "Two.");
      await turn("first");
      expect(fake.opened).toEqual(["first-unconstrained"]);
      const kept = await storage((s) => s.d1Bookmark());
      // The newest position the first turn's session saw: after its bookkeeping batch, its last write.
      expect(kept).toEqual({ shard, bookmark: fake.issued() });
      await turn("second");
      expect(fake.opened).toEqual(["first-unconstrained", kept?.bookmark]);
    },
    T,
  );

  it(
    "a turn after the user moved to another shard starts at that shard's primary, never from the old shard's bookmark",
    async () => {
      const { shard, fake, storage, turn } = await sessionOnFake("One.", "Here.");
      await turn("first");
      // The session's last turn ran on another database: what a move leaves behind (test/shards-move.test.ts).
      await storage((s) => s.saveD1Bookmark({ shard: shard + 1, bookmark: "0000elsewhere" }));
      await turn("still there?");
      // A replica of the new shard may not have the copied rows yet: the primary has them.
      expect(fake.opened).toEqual(["first-unconstrained", "first-primary"]);
    },
    T,
  );
});
