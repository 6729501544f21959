import { createExecutionContext, createScheduledController, env, runInDurableObject, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { deleteUserAccount } from "../src/account/delete";
import { eraseUserMemory, SESSION_OBJECTS_PER_ERASE } from "../src/account/erase";
import { loadConfig } from "../src/config/config";
import { createDb } from "../src/db/client";
import { directoryOf } from "../src/db/shards";
import { ConsolidationConflict, consolidateUser } from "../src/memory/consolidate";
import { editTiers } from "../src/memory/edit";
import { eraseMemory } from "../src/memory/erase";
import { localEmbedder } from "../src/memory/offline-embed";
import { destroyPendingSessions } from "../src/sessions/erasure";
import type { SessionObject } from "../src/sessions/session-do";
import { destroySessionObject, sessionStub } from "../src/sessions/store";
import { pausingD1 } from "./fault-helpers";
import { api, chat, createUser, script, textReply } from "./helpers";
import { captured, consolidation, deliver, getJson, importFacts, observe, search, slowModel } from "./memory-helpers";
import { userD1, userDb } from "./shard-helpers";
import worker from "./worker";

const count = async (table: string, userId: string) =>
  (await (await userD1(userId)).prepare(`SELECT count(*) AS n FROM ${table} WHERE user_id = ?`).bind(userId).first<{ n: number }>())?.n ?? 0;

async function storedMessages(userId: string, sessionId: string): Promise<number> {
  return runInDurableObject(sessionStub(env, userId, sessionId), (_instance, state) => {
    const table = state.storage.sql.exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'messages'").toArray();
    return table.length ? Number(state.storage.sql.exec("SELECT count(*) AS n FROM messages").one().n) : 0;
  });
}

/** The conversation a session's object would return; null once the object is destroyed. */
async function conversation(userId: string, sessionId: string) {
  // Over RPC, as the Worker reads it (the stub's result type is the object's own, spelled out).
  const state = (await sessionStub(env, userId, sessionId).read()) as Awaited<ReturnType<SessionObject["read"]>>;
  return state === null ? null : state.messages.length;
}

const pendingRows = async (userId: string) =>
  (
    await (
      await userD1(userId)
    )
      .prepare("SELECT session_id, attempts FROM session_erasures WHERE user_id = ? ORDER BY session_id")
      .bind(userId)
      .all<{ session_id: string; attempts: number }>()
  ).results;

/** The Worker's cron trigger, as the platform fires it. */
async function cron() {
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ scheduledTime: Date.now(), cron: "*/5 * * * *" }), env, ctx);
  await waitOnExecutionContext(ctx);
}

/** Gives a user every kind of memory: facts, consolidated tiers, events, a session, a context log, a connection. */
async function remember(u: { id: string; key: string }) {
  await importFacts(u.key, [{ text: "User's dog is called Biscuit" }, { text: "User lives in Porto" }]);
  const { sent } = await observe(u.id, [{ content: "I like tea" }]);
  await script(
    u.id,
    consolidation({ updated_scaffold: { Drinks: "tea" }, updated_working_memory: "Likes tea.", facts_to_embed: ["User likes tea"] }),
    textReply("hi"),
  );
  await deliver(sent);
  const { sessionId } = await chat(u.key, { message: "hello" });
  await api(u.key, "POST", "/v1/connections", { name: "Jira", learned_info: { default_project: "PROJ" } });
  return sessionId;
}

describe("DELETE /v1/memory", () => {
  it("erases all of the user's memory, sessions included, and returns a receipt; other users are untouched", async () => {
    const a = await createUser();
    const b = await createUser();
    const sessionA = await remember(a);
    const sessionB = await remember(b);
    expect(await storedMessages(a.id, sessionA)).toBe(2);
    // Brain documents are memory too: SOUL with two versions, a MEMORY entry, a synced site (HEARTBEAT).
    for (const content of ["Ana, a baker.", "Ana, a baker in Porto."]) expect((await api(a.key, "PUT", "/v1/brain/soul", { content })).status).toBe(200);
    expect((await api(a.key, "POST", "/v1/brain/memory", { content: "Prefers mornings" })).status).toBe(201);
    expect((await api(a.key, "PUT", "/v1/sites/bakery/sync", { name: "Bakery", status: "ok" })).status).toBe(200);
    expect((await api(b.key, "PUT", "/v1/brain/soul", { content: "Bruno." })).status).toBe(200);

    const res = await api(a.key, "DELETE", "/v1/memory");
    expect(res.status).toBe(200);
    const receipt = (await res.json()) as {
      erased: Record<string, number | boolean>;
      pending: { session_objects: number };
      kept: string[];
      erased_at: number;
      warnings?: string[];
    };
    expect(receipt.erased).toEqual({
      facts: 3,
      vectors: 3,
      events: 1,
      context_logs: 1,
      sessions: 1,
      session_objects: 1,
      memory_runs: 1,
      connections_reset: 1,
      working_memory: true,
      scaffold: true,
      brain_documents: 2,
      brain_versions: 2,
      memory_entries: 1,
      proposals: 0,
      sites: 1,
      projects: 0,
      lessons: 0,
      transcripts: 0,
    });
    expect(receipt.pending).toEqual({ session_objects: 0 });
    expect(receipt.warnings).toBeUndefined();
    expect(receipt.kept.length).toBeGreaterThan(0);
    for (const table of ["brain_documents", "brain_versions", "brain_entries", "sites"]) expect(await count(table, a.id)).toBe(0);
    expect(await count("brain_documents", b.id)).toBe(1);

    expect((await getJson<{ facts: unknown[] }>(a.key, "/v1/memory/facts?include_superseded=true")).facts).toEqual([]);
    for (const mode of ["fulltext", "vector"]) expect((await search(a.key, "dog Biscuit", `&mode=${mode}`)).results).toEqual([]);
    expect(await getJson(a.key, "/v1/memory/working")).toMatchObject({ working_memory: "", pending_events: 0 });
    expect(await getJson(a.key, "/v1/memory/scaffold")).toMatchObject({ scaffold: {}, confidence: {} });
    expect((await getJson<{ sessions: unknown[] }>(a.key, "/v1/sessions")).sessions).toEqual([]);
    expect(await storedMessages(a.id, sessionA)).toBe(0);
    expect(await count("local_vectors", a.id)).toBe(0);
    expect(await count("local_vector_postings", a.id)).toBe(0);
    expect((await getJson<{ connections: { learned_info: unknown }[] }>(a.key, "/v1/connections")).connections[0]?.learned_info).toEqual({});
    expect(await count("audit_logs", a.id)).toBeGreaterThanOrEqual(1);

    // B keeps everything.
    expect((await search(b.key, "dog Biscuit")).results).toHaveLength(1);
    expect(await getJson(b.key, "/v1/memory/working")).toMatchObject({ working_memory: "Likes tea." });
    expect(await storedMessages(b.id, sessionB)).toBe(2);
    expect(await count("local_vectors", b.id)).toBe(3);

    // Erasing again is harmless.
    const again = (await (await api(a.key, "DELETE", "/v1/memory")).json()) as { erased: Record<string, number | boolean> };
    expect(again.erased).toMatchObject({ facts: 0, vectors: 0, sessions: 0 });
  }, 60_000);

  it("a session started while the erase runs is erased with the rest, its stored conversation included", async () => {
    const u = await createUser();
    // More sessions than the erase destroys at once.
    const early: string[] = [];
    for (let i = 0; i < 7; i++) early.push((await chat(u.key, { message: `hello ${i}` })).sessionId);
    let late = "";
    // Another device starts a chat after the erase has listed the sessions and before its batch runs.
    const startsAChat = async () => {
      late = (await chat(u.key, { message: "my bank PIN is 4921" })).sessionId;
      return { statements: [] };
    };
    const ctx = { env, config: loadConfig(env), db: await userDb(u.id), userId: u.id, now: Date.now() };
    const receipt = await eraseUserMemory([startsAChat], ctx, (owner, id) => destroySessionObject(env, owner, id), null);
    expect(late).not.toBe("");
    expect(receipt.erased.sessions).toBe(8);
    expect(receipt.erased.session_objects).toBe(8);
    expect(receipt.pending).toEqual({ session_objects: 0 });
    for (const id of early) expect(await storedMessages(u.id, id)).toBe(0);
    expect(await storedMessages(u.id, late)).toBe(0);
    expect((await api(u.key, "GET", `/v1/sessions/${late}`)).status).toBe(404);
  });

  it("a turn still running when the erase's batch lands writes no audit row of the memory it was shown", async () => {
    const u = await createUser();
    await importFacts(u.key, [{ text: "My bank PIN is 4921" }]);
    // The other device's model takes its time: the turn holds its session while the erase's batch runs.
    await script(u.id, { ...textReply("noted"), delay_ms: 1_500 });
    let late: Response | undefined;
    const startsASlowTurn = async () => {
      late = await api(u.key, "POST", "/v1/chat", { message: "what is my bank PIN?" });
      return { statements: [] };
    };
    const ctx = { env, config: loadConfig(env), db: await userDb(u.id), userId: u.id, now: Date.now() };
    const receipt = await eraseUserMemory([startsASlowTurn, eraseMemory], ctx, (owner, id) => destroySessionObject(env, owner, id), null);
    expect(late?.status).toBe(200);
    expect(await late?.text()).toContain("event: done");
    expect(receipt.erased.sessions).toBe(1);
    expect(await count("context_logs", u.id)).toBe(0);
    expect(await count("facts", u.id)).toBe(0);
  });

  it("an edit or a fact written while the erase is being prepared neither fails the erase nor survives it", async () => {
    const u = await createUser();
    expect((await api(u.key, "PUT", "/v1/memory/working", { working_memory: "Keeps a spare key under the mat." })).status).toBe(200);
    // Memory's part of the erase is planned first; the user's other device then saves a correction and a fact,
    // before the batch runs.
    const editsMeanwhile = async () => {
      expect((await api(u.key, "PUT", "/v1/memory/working", { working_memory: "Keeps a spare key with a neighbour." })).status).toBe(200);
      await importFacts(u.key, [{ text: "User's spare key is with the neighbour at number 4" }]);
      return { statements: [] };
    };
    const ctx = { env, config: loadConfig(env), db: await userDb(u.id), userId: u.id, now: Date.now() };
    const receipt = await eraseUserMemory([eraseMemory, editsMeanwhile], ctx, (owner, id) => destroySessionObject(env, owner, id), null);
    expect(receipt.erased.memory_runs).toBe(2);
    // The fact written meanwhile goes with the batch, and its vector after it.
    expect(receipt.erased).toMatchObject({ facts: 1, vectors: 1 });
    expect((await getJson<{ working_memory: string }>(u.key, "/v1/memory/working")).working_memory).toBe("");
    const runs = (await getJson<{ runs: { rev: number; kind: string }[] }>(u.key, "/v1/memory/runs")).runs;
    expect(runs).toEqual([expect.objectContaining({ rev: 3, kind: "erase" })]);
  });

  it("a user with more sessions than one request destroys has the rest destroyed by the cron sweep; another user's stay", async () => {
    const u = await createUser();
    const other = await createUser();
    const theirs = (await chat(other.key, { message: "my address is 4 Rua Nova" })).sessionId;
    const mine: string[] = [];
    for (let i = 0; i < SESSION_OBJECTS_PER_ERASE + 4; i++) mine.push((await chat(u.key, { message: `secret number ${i}` })).sessionId);

    const res = await api(u.key, "DELETE", "/v1/memory");
    expect(res.status).toBe(200);
    const receipt = (await res.json()) as { erased: Record<string, number>; pending: { session_objects: number }; warnings?: string[] };
    expect(receipt.erased.sessions).toBe(mine.length);
    expect(receipt.erased.session_objects).toBe(SESSION_OBJECTS_PER_ERASE);
    expect(receipt.pending).toEqual({ session_objects: 4 });
    expect(receipt.warnings?.some((w) => w.includes("4 session objects"))).toBe(true);
    // The rows are gone already; four conversations are still stored, each recorded as owed.
    expect((await getJson<{ sessions: unknown[] }>(u.key, "/v1/sessions")).sessions).toEqual([]);
    const left = (await Promise.all(mine.map(async (id) => ((await conversation(u.id, id)) === null ? [] : [id])))).flat();
    expect(left).toHaveLength(4);
    expect((await pendingRows(u.id)).map((r) => r.session_id)).toEqual([...left].sort());

    await cron();
    for (const id of mine) expect(await conversation(u.id, id)).toBeNull();
    expect(await pendingRows(u.id)).toEqual([]);
    expect(await conversation(other.id, theirs)).toBe(2);
    expect((await getJson<{ sessions: unknown[] }>(other.key, "/v1/sessions")).sessions).toHaveLength(1);
  }, 120_000);

  it("a session object that fails to be destroyed stays owed, also after its account is deleted, until a sweep destroys it", async () => {
    const u = await createUser();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await chat(u.key, { message: `hello ${i}` })).sessionId);
    const stuck = ids[1] as string;
    const failing = (owner: string, id: string) => (id === stuck ? Promise.reject(new Error("object unreachable")) : destroySessionObject(env, owner, id));
    const ctx = { env, config: loadConfig(env), db: await userDb(u.id), userId: u.id, now: Date.now() };

    const receipt = await eraseUserMemory([], ctx, failing, null);
    expect(receipt.erased).toMatchObject({ sessions: 3, session_objects: 2 });
    expect(receipt.pending).toEqual({ session_objects: 1 });
    expect(await conversation(u.id, stuck)).toBe(2);
    expect(await pendingRows(u.id)).toEqual([{ session_id: stuck, attempts: 0 }]);

    // A sweep that meets the failure again keeps the row, marked tried.
    expect(await destroyPendingSessions(await userDb(u.id), failing, { limit: 10, now: Date.now() })).toMatchObject({ failed: 1 });
    expect(await pendingRows(u.id)).toEqual([{ session_id: stuck, attempts: 1 }]);
    expect(await conversation(u.id, stuck)).toBe(2);

    // Deleting the account does not drop what is owed.
    await (await userD1(u.id)).prepare("DELETE FROM users WHERE id = ?").bind(u.id).run();
    await cron();
    expect(await conversation(u.id, stuck)).toBeNull();
    expect(await pendingRows(u.id)).toEqual([]);
  });

  it("a destroy call that never answers does not hold up the sweep: the next run starts with the others", async () => {
    const u = await createUser();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await chat(u.key, { message: `hello ${i}` })).sessionId);
    const ctx = { env, config: loadConfig(env), db: await userDb(u.id), userId: u.id, now: Date.now() };
    // Every object unreachable during the erase: all three stay owed.
    await eraseUserMemory([], ctx, () => Promise.reject(new Error("object unreachable")), null);
    expect(await pendingRows(u.id)).toHaveLength(3);

    // A run whose first call never answers, cut off while it waits (as the platform ends a run past its limits).
    let hung = "";
    const never = (_owner: string, id: string) => {
      hung = id;
      return new Promise<void>(() => undefined);
    };
    const run = destroyPendingSessions(await userDb(u.id), never, { limit: 1, now: Date.now() });
    await Promise.race([run, new Promise((resolve) => setTimeout(resolve, 300))]);
    expect(ids).toContain(hung);

    // The next run reaches the two others first.
    const working = (owner: string, id: string) => destroySessionObject(env, owner, id);
    expect(await destroyPendingSessions(await userDb(u.id), working, { limit: 2, now: Date.now() })).toEqual({ destroyed: 2, failed: 0 });
    expect((await pendingRows(u.id)).map((r) => r.session_id)).toEqual([hung]);
    for (const id of ids.filter((x) => x !== hung)) expect(await conversation(u.id, id)).toBeNull();
  });

  it("a consolidation in flight during the erase cannot write the old memory back", async () => {
    const u = await createUser();
    const { sent } = await observe(u.id, [{ content: "I like coffee" }]);
    const output = { updated_scaffold: { Drinks: "coffee" }, updated_working_memory: "Likes coffee.", facts_to_embed: ["User likes coffee"] };
    // A model that takes its time: the user erases everything while it thinks.
    const client = slowModel(async () => {
      await api(u.key, "DELETE", "/v1/memory");
      return output;
    });
    await expect(consolidateUser((await captured(u.id)).deps, { client, model: "m" }, u.id)).rejects.toBeInstanceOf(ConsolidationConflict);
    expect(await getJson(u.key, "/v1/memory/working")).toMatchObject({ working_memory: "" });
    expect(await count("facts", u.id)).toBe(0);
    // The retry finds nothing left: the events went with the erase.
    expect((await deliver(sent)).explicitAcks).toHaveLength(1);
  }, 60_000);

  it("a consolidation in flight across a correction and then an erase cannot write the old memory back", async () => {
    const u = await createUser();
    const { sent } = await observe(u.id, [{ content: "I like coffee" }]);
    const output = { updated_scaffold: { Drinks: "coffee" }, updated_working_memory: "Likes coffee.", facts_to_embed: ["User likes coffee"] };
    // While the model thinks, the user corrects the narrative (revision 1), then erases everything (revision 2,
    // which deletes revision 1). The run was planned on top of no revision at all.
    const meanwhile: number[] = [];
    const client = slowModel(async () => {
      meanwhile.push((await api(u.key, "PUT", "/v1/memory/working", { working_memory: "Likes tea." })).status);
      meanwhile.push((await api(u.key, "DELETE", "/v1/memory")).status);
      return output;
    });
    const outcome = await consolidateUser((await captured(u.id)).deps, { client, model: "m" }, u.id).catch((err: unknown) => err);
    expect(meanwhile).toEqual([200, 200]);
    expect(await getJson(u.key, "/v1/memory/working")).toMatchObject({ working_memory: "" });
    expect(await getJson(u.key, "/v1/memory/scaffold")).toMatchObject({ scaffold: {} });
    expect((await getJson<{ facts: unknown[] }>(u.key, "/v1/memory/facts?include_superseded=true")).facts).toEqual([]);
    expect((await getJson<{ runs: { rev: number; kind: string }[] }>(u.key, "/v1/memory/runs")).runs).toEqual([
      expect.objectContaining({ rev: 2, kind: "erase" }),
    ]);
    // The run failed on its revision, as against any revision committed since its read; its retry finds nothing.
    expect(outcome).toBeInstanceOf(ConsolidationConflict);
    expect((await deliver(sent)).explicitAcks).toHaveLength(1);
  }, 60_000);

  it("a consolidation that committed just before the erase leaves no vector behind when it indexes after it", async () => {
    const u = await createUser();
    await observe(u.id, [{ content: "My favourite tea is sencha" }]);
    const client = slowModel(async () => ({ updated_scaffold: {}, updated_working_memory: "", facts_to_embed: ["User's favourite tea is sencha"] }));
    // The run's batch has committed; the user erases everything while its new fact is being embedded.
    let receipt: { erased: Record<string, unknown> } | undefined;
    const embedder = {
      ...localEmbedder,
      embed: async (texts: string[]) => {
        if (!receipt && texts.includes("User's favourite tea is sencha")) receipt = (await (await api(u.key, "DELETE", "/v1/memory")).json()) as typeof receipt;
        return localEmbedder.embed(texts);
      },
    };
    expect(await consolidateUser((await captured(u.id, { embedder })).deps, { client, model: "m" }, u.id)).toMatchObject({ status: "applied" });
    expect(receipt?.erased).toMatchObject({ facts: 1 });
    expect(await count("facts", u.id)).toBe(0);
    expect(await count("local_vectors", u.id)).toBe(0);
    expect(await count("local_vector_postings", u.id)).toBe(0);
  });

  it("a correction that read the memory before another revision and an erase is made again on top of the erased memory", async () => {
    const u = await createUser();
    expect((await api(u.key, "PATCH", "/v1/memory/scaffold", { scaffold: { City: "Porto" } })).status).toBe(200);
    // The correction has read revision 1 and the scaffold {City: Porto}; before it writes, the user's other tab
    // saves a narrative (revision 2) and erases everything (revision 3, which deletes 1 and 2).
    const meanwhile: number[] = [];
    const db = createDb(
      pausingD1(
        /^insert into "memory_runs"/i,
        async () => {
          meanwhile.push((await api(u.key, "PUT", "/v1/memory/working", { working_memory: "Lives in Porto." })).status);
          meanwhile.push((await api(u.key, "DELETE", "/v1/memory")).status);
        },
        await userD1(u.id),
      ),
    );
    const edited = await editTiers(db, u.id, { scaffold: { Diet: "vegan" } });
    expect(meanwhile).toEqual([200, 200]);
    expect((await getJson<{ scaffold: Record<string, unknown> }>(u.key, "/v1/memory/scaffold")).scaffold).toEqual({ Diet: "vegan" });
    expect(edited.rev).toBe(4);
    expect(await getJson(u.key, "/v1/memory/working")).toMatchObject({ working_memory: "" });
    expect((await getJson<{ runs: { rev: number; kind: string }[] }>(u.key, "/v1/memory/runs")).runs.map((r) => [r.rev, r.kind])).toEqual([
      [4, "edit"],
      [3, "erase"],
    ]);
  });
});

describe("DELETE /v1/admin/users/{id}", () => {
  it("deleting an account stops its keys first, and a session that a request already let in starts during the erase is destroyed", async () => {
    const u = await createUser();
    await chat(u.key, { message: "hello" });
    let refused = 0;
    let late = "";
    const duringTheErase = async () => ({
      statements: [],
      // After the erase's batch, while the account still exists.
      after: async () => {
        refused = (await api(u.key, "GET", "/v1/sessions")).status;
        // A request that passed authentication before the revocation: stood in for by the key working once more.
        await env.DB.prepare("UPDATE api_keys SET revoked_at = NULL WHERE user_id = ?").bind(u.id).run();
        late = (await chat(u.key, { message: "my bank PIN is 4921" })).sessionId;
        return {};
      },
    });
    const ctx = { env, config: loadConfig(env), db: await userDb(u.id), userId: u.id, now: Date.now() };
    const receipt = await deleteUserAccount(directoryOf(env), [duringTheErase], ctx, (owner, id) => destroySessionObject(env, owner, id), null);
    expect(refused).toBe(401);
    expect(late).not.toBe("");
    expect(await conversation(u.id, late)).toBe(2);
    expect(receipt.pending).toEqual({ session_objects: 1 });
    expect(await pendingRows(u.id)).toEqual([{ session_id: late, attempts: 0 }]);
    const audit = await (await userD1(u.id))
      .prepare("SELECT detail FROM audit_logs WHERE target = ? AND action = 'admin.user_deleted'")
      .bind(u.id)
      .first<{ detail: string }>();
    expect(JSON.parse(audit?.detail ?? "{}")).toMatchObject({ erased: { sessions: 1 }, pending: { session_objects: 1 } });

    await cron();
    expect(await conversation(u.id, late)).toBeNull();
    expect(await pendingRows(u.id)).toEqual([]);
  });
});
