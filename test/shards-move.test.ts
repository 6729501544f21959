// Moving a user to another shard while engram runs (src/account/move.ts): everything is copied and verified, the
// directory switches, the old rows go; the user's writes pause meanwhile (503 user_moving), and a chat turn or a
// consolidation already running when the move starts loses nothing.
import { env, runInDurableObject } from "cloudflare:test";
import { getTableName } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { TABLE_KINDS, TABLES_LEFT_OUT } from "../src/account/archive-kinds";
import { abandonMove, beginMove, purgeOld, switchShard } from "../src/account/move";
import { copyUser, verifyCopy } from "../src/account/move-copy";
import { MOVED_TABLES, NOT_MOVED } from "../src/account/move-tables";
import { placementOf, shardBindings } from "../src/db/shards";
import { consolidateUser } from "../src/memory/consolidate";
import { SessionStorage } from "../src/sessions/storage";
import { remember } from "./archive-helpers";
import { failWrites, repairAll } from "./fault-helpers";
import { api, chat, createUser, script, seen, textReply } from "./helpers";
import { captured, consolidation, deliver, getJson, importFacts, observe, search, slowModel } from "./memory-helpers";
import { allShards, forgetShard } from "./shard-helpers";

const T = 90_000;
const admin = () => env.ADMIN_TOKEN ?? "";
const SHARDS = shardBindings(env).length;
/** The last shard: a shard other than the directory's; with three or more, shard 1 is a third one between them. */
const LAST = SHARDS - 1;
const USER_TABLES = MOVED_TABLES.map((t) => t.name);

afterEach(repairAll);

const move = (userId: string, body: unknown) => api(admin(), "POST", `/v1/admin/users/${userId}/move`, body);

/** The user's archive without the moment it was made: what they would read of their memory. */
async function archive(key: string): Promise<string> {
  const res = await api(key, "GET", "/v1/export");
  expect(res.status).toBe(200);
  return (await res.text())
    .trim()
    .split("\n")
    .map((l) => JSON.stringify({ ...JSON.parse(l), exported_at: undefined }))
    .join("\n");
}

/** `n` rows on `shard`, none on any other. */
const onlyOn = (shard: number, n: number) => Array.from({ length: SHARDS }, (_, s) => (s === shard ? n : 0));

/** How many rows of the user each shard holds, over every table a move copies. */
async function rowsByShard(userId: string): Promise<number[]> {
  const out: number[] = [];
  for (const d1 of allShards()) {
    let n = 0;
    for (const t of USER_TABLES) n += (await d1.prepare(`SELECT count(*) AS n FROM "${t}" WHERE user_id = ?`).bind(userId).first<{ n: number }>())?.n ?? 0;
    out.push(n);
  }
  return out;
}

const userRow = (shard: number, userId: string) =>
  allShards()
    [shard]?.prepare("SELECT id, working_memory, fence FROM users WHERE id = ?")
    .bind(userId)
    .first<{ id: string; working_memory: string; fence: number | null }>();

async function moved(userId: string, to: number) {
  const res = await move(userId, { shard: to });
  expect(res.status, await res.clone().text()).toBe(200);
  forgetShard(userId);
  return (await res.json()) as { from: number; to: number; rows: number; round_trips: number; tables: Record<string, { rows: number }> };
}

// With one shard there is nowhere to move to (ENGRAM_TEST_SHARDS=1).
describe.skipIf(SHARDS < 2)("moving a user", () => {
  it("copies every table a user's rows live in (the archive's lists), and fences each one on the old shard", async () => {
    const archived = [...TABLE_KINDS.map((k) => getTableName(k.table)), ...Object.keys(TABLES_LEFT_OUT)];
    for (const t of archived) expect(USER_TABLES.includes(t) || t in NOT_MOVED, `${t} is moved or said not to be`).toBe(true);
    const triggers = await env.DB.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE '%_fence_%'").all<{ name: string }>();
    const fenced = new Set(triggers.results.map((r) => r.name.replace(/_fence_(insert|update|delete)$/, "")));
    for (const t of USER_TABLES.filter((t) => t !== "audit_logs")) expect(fenced.has(t), `${t} is fenced`).toBe(true);
  });

  it(
    "moves everything: the user's memory reads the same on the new shard, the old one keeps nothing, another user is untouched",
    async () => {
      const u = await createUser("pro", 0);
      const other = await createUser("pro", 0);
      await remember(u, "Ana");
      await remember(other, "Bruno");
      let before = await archive(u.key);
      const otherBefore = await archive(other.key);
      const otherRows = await rowsByShard(other.id);
      expect((await rowsByShard(u.id))[0]).toBeGreaterThan(20);

      // 0 -> last (the directory's own row stays, emptied), last -> 1 (between two shards), 1 -> 0 (back into the directory's row).
      for (const [from, to] of [
        [0, SHARDS - 1],
        [SHARDS - 1, 1],
        [1, 0],
      ] as const) {
        if (from === to) continue;
        const here = (await rowsByShard(u.id))[from] ?? 0;
        const report = await moved(u.id, to);
        // Every row, and the user row.
        expect(report).toMatchObject({ from, to, rows: here + 1 });
        expect(await placementOf(env, u.id)).toEqual({ shard: to, movingTo: null });
        expect(await rowsByShard(u.id)).toEqual(onlyOn(to, here));
        expect(await archive(u.key)).toBe(before);
        // The full-text index was rebuilt on the new shard; the old shard's user row went (or, the directory's, was emptied).
        expect((await search(u.key, "Lisbon")).results.map((r) => r.text)).toContain("Ana lives in Lisbon");
        // (a search records what its query's embedding cost)
        before = await archive(u.key);
        if (from !== 0) expect(await userRow(from, u.id)).toBeNull();
        else expect(await userRow(0, u.id)).toEqual({ id: u.id, working_memory: "", fence: 2 });
        expect((await userRow(to, u.id))?.fence ?? null).toBeNull();
      }
      // The sessions' conversations live in their Durable Objects, which do not move: a new turn continues one.
      const [session] = (await getJson<{ sessions: { id: string }[] }>(u.key, "/v1/sessions")).sessions;
      await script(u.id, textReply("still here"));
      expect((await chat(u.key, { session_id: session?.id, message: "are you there?" })).text).toBe("still here");
      expect(await archive(other.key)).toBe(otherBefore);
      expect(await rowsByShard(other.id)).toEqual(otherRows);
    },
    T,
  );

  it(
    "pauses the user's writes with 503 user_moving and Retry-After while it runs, serves reads, and takes writes again after",
    async () => {
      const u = await createUser("free", LAST);
      await importFacts(u.key, [{ text: "User keeps bees" }]);
      const { move: m } = await beginMove(env, u.id, 0);
      const paused = async () => {
        const res = await api(u.key, "POST", "/v1/memory/facts", { facts: [{ text: "User keeps goats" }] });
        expect(res.status).toBe(503);
        expect(res.headers.get("retry-after")).toBe("5");
        expect(await res.json()).toMatchObject({ error: { code: "user_moving" } });
        for (const [method, path, body] of [
          ["POST", "/v1/chat", { message: "hi" }],
          ["PUT", "/v1/brain/soul", { content: "Ana" }],
          ["DELETE", "/v1/memory", undefined],
          ["POST", "/mcp", { jsonrpc: "2.0", id: 1, method: "tools/list" }],
        ] as const)
          expect((await api(u.key, method, path, body)).status, `${method} ${path}`).toBe(503);
        expect((await getJson<{ facts: { text: string }[] }>(u.key, "/v1/memory/facts")).facts.map((f) => f.text)).toEqual(["User keeps bees"]);
        // A search records what its embedding cost: served, or (while the old shard is fenced) it waits like a write.
        const found = await api(u.key, "GET", "/v1/memory/facts/search?q=bees");
        if (found.status !== 200) expect([found.status, ((await found.json()) as { error: { code: string } }).error.code]).toEqual([503, "user_moving"]);
        // Deleting the account waits too: it would erase one shard while the other holds the copy.
        expect((await api(admin(), "DELETE", `/v1/admin/users/${u.id}`)).status).toBe(503);
      };
      await paused();
      const copied = await copyUser(m);
      await verifyCopy(m, copied);
      await paused();
      await switchShard(m);
      await paused();
      await purgeOld(m);
      forgetShard(u.id);
      expect((await api(u.key, "POST", "/v1/memory/facts", { facts: [{ text: "User keeps goats" }] })).status).toBe(201);
      expect((await getJson<{ facts: { text: string }[] }>(u.key, "/v1/memory/facts")).facts.map((f) => f.text).sort()).toEqual([
        "User keeps bees",
        "User keeps goats",
      ]);
      expect((await rowsByShard(u.id)).map((n) => n > 0)).toEqual(onlyOn(0, 1).map((n) => n > 0));
    },
    T,
  );

  it(
    "a consolidation whose model is thinking when the move starts writes nothing to the old shard, and is applied on the new one",
    async () => {
      const u = await createUser("free", 0);
      const { sent } = await observe(u.id, [{ content: "I moved to Porto" }]);
      const output = { updated_scaffold: { City: "Porto" }, updated_working_memory: "Lives in Porto.", facts_to_embed: ["User lives in Porto"] };
      let m: Awaited<ReturnType<typeof beginMove>>["move"] | undefined;
      const client = slowModel(async () => {
        m = (await beginMove(env, u.id, 1)).move;
        return output;
      });
      // The consumer looked the user up before the move: its writes go to the old shard, whose fence refuses them.
      await expect(consolidateUser((await captured(u.id)).deps, { client, model: "m" }, u.id)).rejects.toThrow(/user_moving/);
      if (!m) throw new Error("the move did not start");
      // While the move runs, the queue holds the user's messages back.
      expect((await deliver(sent)).retryMessages).toHaveLength(1);
      const copied = await copyUser(m);
      await verifyCopy(m, copied);
      await switchShard(m);
      await purgeOld(m);
      forgetShard(u.id);
      await script(u.id, consolidation(output));
      expect((await deliver(sent)).explicitAcks).toHaveLength(1);
      expect((await getJson<{ working_memory: string }>(u.key, "/v1/memory/working")).working_memory).toBe("Lives in Porto.");
      const events = await getJson<{ events: { status: string }[] }>(u.key, "/v1/memory/events");
      expect(events.events.map((e) => e.status)).toEqual(["processed"]);
      expect((await rowsByShard(u.id))[0]).toBe(0);
    },
    T,
  );

  it(
    "a chat turn running when the move starts keeps its reply, and what it spent is recorded on the new shard",
    async () => {
      const [from, to] = [SHARDS - 1, 0];
      const u = await createUser("free", from);
      const turn = async (message: string, sessionId?: string) => {
        const res = await api(u.key, "POST", "/v1/chat", { message, session_id: sessionId, stream: false });
        expect(res.status).toBe(200);
        return (await res.json()) as { session_id: string; reply: string; usage: { output_tokens: number } };
      };
      await script(u.id, textReply("first"));
      const first = await turn("hello");
      // The model takes its time on the second turn: the move starts while it thinks, after the turn looked the user up.
      await script(u.id, { ...textReply("second, during the move"), delay_ms: 2_000 });
      const running = turn("and now?", first.session_id);
      while ((await seen(u.id)).length < 2) await new Promise((r) => setTimeout(r, 20));
      const { move: m } = await beginMove(env, u.id, to);
      const second = await running;
      expect(second.reply).toBe("second, during the move");
      const copied = await copyUser(m);
      await verifyCopy(m, copied);
      await switchShard(m);
      await purgeOld(m);
      forgetShard(u.id);
      await script(u.id, textReply("third"));
      const third = await turn("still there?", first.session_id);
      expect(third.reply).toBe("third");
      // The read-replica bookmark the session keeps is the new shard's: the old shard's was not used there.
      const stub = env.SESSIONS.get(env.SESSIONS.idFromName(`${u.id}/${first.session_id}`));
      expect((await runInDurableObject(stub, async (_i, state) => new SessionStorage(state.storage).d1Bookmark()))?.shard).toBe(to);
      const history = await getJson<{ messages: { role: string }[] }>(u.key, `/v1/sessions/${first.session_id}`);
      expect(history.messages.filter((msg) => msg.role === "assistant")).toHaveLength(3);
      // The second turn's usage row was refused by the old shard's fence; the session kept the tokens and the
      // third turn's row carries them, on the new shard.
      const spent = await allShards()
        [to]?.prepare("SELECT count(*) AS n, sum(output_tokens) AS output FROM usage WHERE user_id = ? AND kind = 'chat'")
        .bind(u.id)
        .first<{ n: number; output: number }>();
      expect(spent).toEqual({ n: 2, output: first.usage.output_tokens + second.usage.output_tokens + third.usage.output_tokens });
      // Its audit row (what the model was shown) waited in the session and was written with the third turn's.
      const logs = await getJson<{ context_logs: { session_id: string }[] }>(u.key, "/v1/memory/context-logs");
      expect(logs.context_logs.filter((l) => l.session_id === first.session_id)).toHaveLength(3);
      expect(await rowsByShard(u.id)).toEqual(onlyOn(to, (await rowsByShard(u.id))[to] ?? 0));
    },
    T,
  );

  it(
    "a failure half-way through the copy rolls back: the user stays whole on the old shard, and the move can be asked again",
    async () => {
      const u = await createUser("free", 0);
      await remember(u, "Caro");
      const before = await archive(u.key);
      const rows = await rowsByShard(u.id);
      const repair = await failWrites("lessons", u.id);
      const res = await move(u.id, { shard: 1 });
      expect(res.status).toBe(500);
      expect(await res.json()).toMatchObject({ error: { code: "internal", message: expect.stringContaining("stays on shard 0") } });
      expect(await placementOf(env, u.id)).toEqual({ shard: 0, movingTo: null });
      expect(await rowsByShard(u.id)).toEqual(rows);
      expect(await userRow(1, u.id)).toBeNull();
      expect((await userRow(0, u.id))?.fence).toBeNull();
      expect(await archive(u.key)).toBe(before);
      expect((await api(u.key, "POST", "/v1/brain/memory", { content: "Caro bakes on Sundays" })).status).toBe(201);
      await repair();
      await moved(u.id, 1);
      expect((await rowsByShard(u.id))[1]).toBe((rows[0] ?? 0) + 1);
    },
    T,
  );

  it(
    "a move that stopped (before or after its switch) is finished by asking again with resume",
    async () => {
      const u = await createUser("free", LAST);
      await importFacts(u.key, [{ text: "User grows tomatoes" }]);
      await beginMove(env, u.id, 0);
      const again = await move(u.id, { shard: 0 });
      expect(again.status).toBe(409);
      expect(((await again.json()) as { error: { message: string } }).error.message).toContain("resume");
      // Resuming names the move's own target: the shard the user is on is not it.
      expect((await move(u.id, { shard: LAST, resume: true })).status).toBe(409);
      expect((await move(u.id, { shard: 0, resume: true })).status).toBe(200);
      forgetShard(u.id);
      expect(await placementOf(env, u.id)).toEqual({ shard: 0, movingTo: null });

      // Stopped after the switch: reads go to the new shard, writes wait, until the old rows are deleted.
      const { move: m } = await beginMove(env, u.id, LAST);
      await verifyCopy(m, await copyUser(m));
      await switchShard(m);
      expect((await getJson<{ facts: { text: string }[] }>(u.key, "/v1/memory/facts")).facts.map((f) => f.text)).toEqual(["User grows tomatoes"]);
      expect((await api(u.key, "POST", "/v1/brain/memory", { content: "x" })).status).toBe(503);
      expect((await move(u.id, { shard: 0, resume: true })).status).toBe(409);
      expect((await move(u.id, { shard: LAST, resume: true })).status).toBe(200);
      expect(await placementOf(env, u.id)).toEqual({ shard: LAST, movingTo: null });
      expect((await rowsByShard(u.id)).map((n) => n > 0)).toEqual(onlyOn(LAST, 1).map((n) => n > 0));

      // Stopped between the mark and the fence: finishing it leaves the user where they are, whole and writable.
      await env.DB.prepare("UPDATE users SET moving_to = 0 WHERE id = ?").bind(u.id).run();
      const stopped = await move(u.id, { shard: 0 });
      expect(((await stopped.json()) as { error: { message: string } }).error.message).toContain(`{"shard": ${LAST}, "resume": true}`);
      expect((await move(u.id, { shard: LAST, resume: true })).status).toBe(200);
      expect(await placementOf(env, u.id)).toEqual({ shard: LAST, movingTo: null });
      expect((await getJson<{ facts: { text: string }[] }>(u.key, "/v1/memory/facts")).facts.map((f) => f.text)).toEqual(["User grows tomatoes"]);
      expect((await api(u.key, "POST", "/v1/brain/memory", { content: "Grows basil too" })).status).toBe(201);
    },
    T,
  );

  it("refuses what cannot be done, changing nothing: the same shard, an unbound one, an unknown user, a second move, no admin token", async () => {
    const u = await createUser("free", 0);
    await importFacts(u.key, [{ text: "User has a cat" }]);
    const rows = await rowsByShard(u.id);
    const cases: [unknown, number, string][] = [
      [{ shard: 0 }, 409, "conflict"],
      [{ shard: SHARDS }, 400, "invalid_request"],
      [{ shard: -1 }, 400, "invalid_request"],
      [{ shard: "1" }, 400, "invalid_request"],
      [{ shard: 1, extra: true }, 400, "invalid_request"],
    ];
    for (const [body, status, code] of cases) {
      const res = await move(u.id, body);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(await res.json()).toMatchObject({ error: { code } });
    }
    expect((await move("usr_nobody", { shard: 1 })).status).toBe(404);
    expect((await api(u.key, "POST", `/v1/admin/users/${u.id}/move`, { shard: 1 })).status).toBe(401);
    const { move: m } = await beginMove(env, u.id, LAST);
    const second = await move(u.id, { shard: LAST });
    expect(second.status).toBe(409);
    await abandonMove(m);
    expect(await placementOf(env, u.id)).toEqual({ shard: 0, movingTo: null });
    expect(await rowsByShard(u.id)).toEqual(rows);
    expect((await userRow(0, u.id))?.fence).toBeNull();
  });
});
