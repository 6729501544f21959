// D1 sharded by user (src/db/shards.ts): the directory places each user on a shard, a user's rows live there
// only, and requests, queue consumers, cron jobs, erase and account deletion find them there.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { runScheduled } from "../src/core/cron";
import { placeUser, shardBindings, shardsForRun } from "../src/db/shards";
import { meter } from "./d1-meter";
import { api, chat, createUser, readSse, script, textReply } from "./helpers";
import { consolidation, deliver, getJson, observe } from "./memory-helpers";
import { allShards, shardOf } from "./shard-helpers";
import { registry } from "./worker";

const T = 60_000;
const admin = () => env.ADMIN_TOKEN ?? "";
const SHARDS = shardBindings(env).length;
/** Cases about users on different shards: a one-shard run (`npm run test:one-shard`) has none to compare. */
const manyShards = it.skipIf(SHARDS < 2);

/** How many of the user's rows each shard holds in `table`. */
async function rowsPerShard(table: string, userId: string): Promise<number[]> {
  const out: number[] = [];
  for (const d1 of allShards())
    out.push((await d1.prepare(`SELECT count(*) AS n FROM ${table} WHERE user_id = ?`).bind(userId).first<{ n: number }>())?.n ?? 0);
  return out;
}

/** The shards holding any of the user's rows in `table`. */
const holding = async (table: string, userId: string) => (await rowsPerShard(table, userId)).flatMap((n, shard) => (n > 0 ? [shard] : []));

/** The count a user has on their shard and nothing anywhere else. */
const onlyOn = (shard: number, n: number) => Array.from({ length: SHARDS }, (_, i) => (i === shard ? n : 0));

describe("the directory and its shards", () => {
  manyShards("runs with more than one shard here, as wrangler dev does", () => {
    expect(SHARDS).toBeGreaterThanOrEqual(2);
  });

  manyShards("places new users by a stable hash of their id, over every bound shard", async () => {
    expect(placeUser("usr_abc", 3)).toBe(placeUser("usr_abc", 3));
    const ids = Array.from({ length: 300 }, (_, i) => `usr_${i.toString(36).padStart(20, "0")}`);
    const counts = new Array<number>(3).fill(0);
    for (const id of ids) counts[placeUser(id, 3)] = (counts[placeUser(id, 3)] ?? 0) + 1;
    for (const c of counts) expect(c).toBeGreaterThan(60);
    const placed = new Set<number>();
    for (let i = 0; i < 12; i++) placed.add(await shardOf((await createUser()).id));
    expect(placed.size).toBeGreaterThan(1);
  });

  manyShards(
    "keeps a user's rows on their shard only, and one user's data is never reachable from another on another shard",
    async () => {
      const a = await createUser("free", 0);
      const b = await createUser("free", SHARDS - 1);
      expect([await shardOf(a.id), await shardOf(b.id)]).toEqual([0, SHARDS - 1]);
      for (const u of [a, b]) {
        await script(u.id, textReply(`Hello ${u.id}.`));
        await chat(u.key, { message: "hi" });
        expect((await api(u.key, "POST", "/v1/memory/facts", { facts: [{ text: `Fact of ${u.id}` }] })).status).toBe(201);
      }
      expect(await rowsPerShard("sessions", b.id)).toEqual(onlyOn(SHARDS - 1, 1));
      expect(await rowsPerShard("facts", b.id)).toEqual(onlyOn(SHARDS - 1, 1));
      expect(await holding("usage", b.id)).toEqual([SHARDS - 1]);
      expect(await rowsPerShard("sessions", a.id)).toEqual(onlyOn(0, 1));
      // The shard holds its user's row (the memory tiers, the foreign keys' anchor); the keys stay in the directory.
      const anchor = await allShards()[SHARDS - 1]?.prepare("SELECT id, plan FROM users WHERE id = ?").bind(b.id).first();
      expect(anchor).toEqual({ id: b.id, plan: "free" });
      expect(await allShards()[SHARDS - 1]?.prepare("SELECT count(*) AS n FROM api_keys WHERE user_id = ?").bind(b.id).first()).toEqual({ n: 0 });
      const [bSession] = ((await (await api(b.key, "GET", "/v1/sessions")).json()) as { sessions: { id: string }[] }).sessions;
      expect((await api(a.key, "GET", `/v1/sessions/${bSession?.id}`)).status).toBe(404);
      const aFacts = await getJson<{ facts: { text: string }[] }>(a.key, "/v1/memory/facts");
      expect(aFacts.facts.map((f) => f.text)).toEqual([`Fact of ${a.id}`]);
    },
    T,
  );

  it(
    "a turn of a user on another shard still waits for two D1 round trips before the model: the key, then the batch",
    async () => {
      const u = await createUser("pro", SHARDS - 1);
      await script(u.id, textReply("…"), textReply("…"));
      const { sessionId } = await chat(u.key, { message: "…" });
      meter.arm();
      const events = await readSse(await api(u.key, "POST", "/v1/chat", { message: "?", session_id: sessionId }));
      expect(events.at(-1)).toMatchObject({ type: "done" });
      expect(meter.reading()).toEqual({ calls: 2, sequential: 2 });
    },
    T,
  );

  it("refuses a shard the deployment does not bind, and creates nobody", async () => {
    const before = (await env.DB.prepare("SELECT count(*) AS n FROM users").first<{ n: number }>())?.n;
    for (const shard of [SHARDS, -1, 1.5, "1"]) {
      const res = await api(admin(), "POST", "/v1/admin/users", { name: "Nobody", shard });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error: { code: "invalid_request" } });
    }
    expect((await env.DB.prepare("SELECT count(*) AS n FROM users").first<{ n: number }>())?.n).toBe(before);
  });
});

describe("background work finds each user's shard", () => {
  manyShards(
    "the queue consumer consolidates users of different shards in one batch, each into their own shard",
    async () => {
      const users = [await createUser("free", 0), await createUser("free", 1), await createUser("free", SHARDS - 1)];
      const sent = [];
      for (const u of users) {
        sent.push(...(await observe(u.id, [{ type: "fact", content: `I am ${u.id}` }])).sent);
        await script(u.id, consolidation({ updated_scaffold: { Id: u.id }, updated_working_memory: `This is ${u.id}.`, facts_to_embed: [`User is ${u.id}`] }));
      }
      const result = await deliver(sent);
      expect(result.retryMessages).toEqual([]);
      expect(result.explicitAcks).toHaveLength(3);
      for (const u of users) {
        const shard = await shardOf(u.id);
        expect(await rowsPerShard("facts", u.id)).toEqual(onlyOn(shard, 1));
        expect((await getJson<{ working_memory: string }>(u.key, "/v1/memory/working")).working_memory).toBe(`This is ${u.id}.`);
      }
    },
    T,
  );

  it(
    "a cron job visits every shard in one run (within its per-run cap) and adds up what each did",
    async () => {
      const sync = { name: "Shop", url: "https://shop.example", status: "ok" };
      const users = [await createUser("free", 0), await createUser("free", SHARDS - 1)];
      for (const u of users) expect((await api(u.key, "PUT", "/v1/sites/shop/sync", sync)).status).toBeLessThan(300);
      const later = await runScheduled(registry.cronJobs, env, Date.now() + 25 * 60 * 60 * 1000);
      expect((later["brain.stale_heartbeats"] as { marked: number }).marked).toBeGreaterThanOrEqual(2);
      for (const u of users) expect((await getJson<{ stale: boolean }>(u.key, "/v1/sites/shop/heartbeat")).stale).toBe(true);
    },
    T,
  );

  it("bounds the shards one cron run visits, and successive runs cover them all", () => {
    expect(shardsForRun(3, 0)).toEqual([0, 1, 2]);
    const seen = new Set<number>();
    for (let run = 0; run < 10; run++) for (const s of shardsForRun(40, run * 300_000, 16)) seen.add(s);
    expect(shardsForRun(40, 0, 16)).toHaveLength(16);
    expect(seen.size).toBe(40);
  });

  it(
    "erasing one's memory and deleting an account reach the user's shard and the directory",
    async () => {
      const u = await createUser("free", SHARDS - 1);
      await script(u.id, textReply("Hi."));
      await chat(u.key, { message: "remember I like tea" });
      expect((await api(u.key, "POST", "/v1/memory/facts", { facts: [{ text: "User likes tea" }] })).status).toBe(201);
      expect((await api(u.key, "DELETE", "/v1/memory")).status).toBe(200);
      expect(await rowsPerShard("facts", u.id)).toEqual(onlyOn(SHARDS - 1, 0));
      expect(await rowsPerShard("sessions", u.id)).toEqual(onlyOn(SHARDS - 1, 0));
      expect(await holding("usage", u.id)).toEqual([SHARDS - 1]);

      const res = await api(admin(), "DELETE", `/v1/admin/users/${u.id}`);
      expect(res.status).toBe(200);
      expect(await holding("usage", u.id)).toEqual([]);
      for (const d1 of allShards()) expect(await d1.prepare("SELECT id FROM users WHERE id = ?").bind(u.id).first()).toBeNull();
      expect(await env.DB.prepare("SELECT count(*) AS n FROM api_keys WHERE user_id = ?").bind(u.id).first()).toEqual({ n: 0 });
      expect((await api(u.key, "GET", "/v1/sessions")).status).toBe(401);
      expect((await api(admin(), "DELETE", `/v1/admin/users/${u.id}`)).status).toBe(404);
    },
    T,
  );
});
