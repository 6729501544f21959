import { describe, expect, it } from "vitest";
import { ConsolidationConflict, consolidateUser } from "../src/memory/consolidate";
import { restoreRevision } from "../src/memory/edit";
import { forgetCopies, KEPT_COPIES } from "../src/memory/tiers";
import { api, chat, createUser, promptOf, script, seen, textReply } from "./helpers";
import { captured, consolidation, deliver, getJson, observe, slowModel } from "./memory-helpers";
import { userD1, userDb } from "./shard-helpers";

type Run = { rev: number; kind: string; summary: Record<string, unknown>; restorable: boolean };
type RunDetail = Run & { working_memory: string | null; scaffold: Record<string, unknown> | null; confidence: Record<string, unknown> | null };
type Scaffold = { scaffold: Record<string, unknown>; confidence: Record<string, { confidence: number; updated_at: number; by?: string }> };

const runs = async (key: string) => (await getJson<{ runs: Run[] }>(key, "/v1/memory/runs")).runs;
const working = async (key: string) => (await getJson<{ working_memory: string }>(key, "/v1/memory/working")).working_memory;
const restore = (key: string, rev: number | string) => api(key, "POST", `/v1/memory/runs/${rev}/restore`);

/** Consolidates one observation into the given tiers through the queue, as production does. */
async function consolidate(u: { id: string }, content: string, output: Record<string, unknown>) {
  const { sent } = await observe(u.id, [{ content }]);
  await script(u.id, consolidation({ facts_to_embed: [], ...output }));
  expect((await deliver(sent)).explicitAcks).toHaveLength(1);
}

describe("restoring the working memory and scaffold of an earlier revision", () => {
  it("puts back the narrative and scaffold a later consolidation changed, with their confidence; facts stay", async () => {
    const u = await createUser();
    await consolidate(u, "I live in Porto", {
      updated_scaffold: { City: "Porto" },
      scaffold_confidence: { City: 0.95 },
      updated_working_memory: "Ana lives in Porto.",
    });
    expect((await api(u.key, "PATCH", "/v1/memory/scaffold", { scaffold: { Diet: "vegetarian" } })).status).toBe(200);
    const before = await getJson<Scaffold>(u.key, "/v1/memory/scaffold");
    await consolidate(u, "maybe moving to Lyon", {
      updated_scaffold: { City: "Lyon" },
      scaffold_confidence: { City: 0.4 },
      updated_working_memory: "Ana may be moving to Lyon.",
      facts_to_embed: ["User may move to Lyon"],
    });
    expect(await working(u.key)).toBe("Ana may be moving to Lyon.");

    // The list says which runs can be restored, without their copies of the tiers.
    const listed = await runs(u.key);
    expect(listed.map((r) => [r.rev, r.kind, r.restorable])).toEqual([
      [3, "consolidation", true],
      [2, "edit", true],
      [1, "consolidation", true],
    ]);
    expect(listed[0]).not.toHaveProperty("working_memory");
    const detail = (await getJson<{ run: RunDetail }>(u.key, "/v1/memory/runs/2")).run;
    expect(detail).toMatchObject({ rev: 2, kind: "edit", working_memory: "Ana lives in Porto.", scaffold: { City: "Porto", Diet: "vegetarian" } });

    const res = await restore(u.key, 2);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ restored: 2, rev: 4, working_memory: "Ana lives in Porto.", scaffold: { City: "Porto", Diet: "vegetarian" } });
    expect(await working(u.key)).toBe("Ana lives in Porto.");
    // Each key comes back with its own entry: the model's confidence and time for City, the user's mark on Diet.
    expect(await getJson<Scaffold>(u.key, "/v1/memory/scaffold")).toEqual(before);
    expect((await runs(u.key))[0]).toEqual(expect.objectContaining({ rev: 4, kind: "restore", summary: { restored_rev: 2 }, restorable: true }));
    // The next turn is told the restored memory, not the rolled-back one.
    await script(u.id, textReply("Olá"));
    await chat(u.key, { message: "hi" });
    const prompt = promptOf((await seen(u.id)).at(-1));
    expect(prompt).toContain("Ana lives in Porto.");
    expect(prompt).not.toContain("Ana may be moving to Lyon.");
    // Facts are not rolled back: they are forgotten one by one.
    const facts = await getJson<{ facts: { text: string }[] }>(u.key, "/v1/memory/facts");
    expect(facts.facts.map((f) => f.text)).toContain("User may move to Lyon");
  });

  it("a revision's copy never shows a key the user removed: its confidence lists only the keys present", async () => {
    const u = await createUser();
    await consolidate(u, "I live in Porto and I'm vegetarian", {
      updated_scaffold: { City: "Porto", Diet: "vegetarian" },
      scaffold_confidence: { City: 0.95, Diet: 0.8 },
      updated_working_memory: "Ana lives in Porto.",
    });
    expect((await api(u.key, "PATCH", "/v1/memory/scaffold", { scaffold: { City: null } })).status).toBe(200);
    const removal = (await getJson<{ run: RunDetail }>(u.key, "/v1/memory/runs/2")).run;
    expect(removal).toMatchObject({ rev: 2, kind: "edit", scaffold: { Diet: "vegetarian" } });
    expect(removal.scaffold).not.toHaveProperty("City");
    expect(Object.keys(removal.confidence ?? {})).toEqual(["Diet"]);
    expect(removal.confidence).toEqual((await getJson<Scaffold>(u.key, "/v1/memory/scaffold")).confidence);
    // The revision before the removal still shows the key with its entry.
    const earlier = (await getJson<{ run: RunDetail }>(u.key, "/v1/memory/runs/1")).run;
    expect(Object.keys(earlier.confidence ?? {}).sort()).toEqual(["City", "Diet"]);
  });

  it("a key removed after a revision comes back with that revision; a revision after the removal leaves it removed", async () => {
    const u = await createUser();
    await consolidate(u, "I live in Porto", {
      updated_scaffold: { City: "Porto" },
      scaffold_confidence: { City: 0.95 },
      updated_working_memory: "Ana lives in Porto.",
    });
    const before = await getJson<Scaffold>(u.key, "/v1/memory/scaffold");
    expect(before.confidence.City).toMatchObject({ confidence: 0.95 });
    // An observation made before the removal, not consolidated yet.
    const { sent: older } = await observe(u.id, [{ content: "Still in Porto, and I adopted a cat" }]);
    expect((await api(u.key, "PATCH", "/v1/memory/scaffold", { scaffold: { City: null } })).status).toBe(200);
    expect((await getJson<Scaffold>(u.key, "/v1/memory/scaffold")).scaffold).toEqual({});

    // Revision 1 was taken before the removal: City comes back with its value and the model's entry.
    expect(await (await restore(u.key, 1)).json()).toMatchObject({ restored: 1, rev: 3, scaffold: { City: "Porto" } });
    expect(await getJson<Scaffold>(u.key, "/v1/memory/scaffold")).toEqual(before);

    // Revision 2 was taken after it: City is removed again, and still guarded as the user's removal.
    expect(await (await restore(u.key, 2)).json()).toMatchObject({ restored: 2, rev: 4, scaffold: {} });
    expect(await getJson<Scaffold>(u.key, "/v1/memory/scaffold")).toEqual({ scaffold: {}, confidence: {} });
    // The older observation is consolidated now: the model brings City back, and it stays removed; the rest applies.
    await script(u.id, consolidation({ updated_scaffold: { City: "Porto", Pets: ["cat"] }, updated_working_memory: "Ana has a cat.", facts_to_embed: [] }));
    expect((await deliver(older)).explicitAcks).toHaveLength(1);
    expect(await working(u.key)).toBe("Ana has a cat.");
    expect((await getJson<Scaffold>(u.key, "/v1/memory/scaffold")).scaffold).toEqual({ Pets: ["cat"] });
  });

  it("a consolidation running while the user restores is redone on top of the restored memory", async () => {
    const u = await createUser();
    await consolidate(u, "I live in Porto", { updated_scaffold: { City: "Porto" }, updated_working_memory: "Ana lives in Porto." });
    expect((await api(u.key, "PUT", "/v1/memory/working", { working_memory: "Ana lives in Lyon." })).status).toBe(200);
    await observe(u.id, [{ content: "I adopted a cat" }]);
    const prompts: string[] = [];
    let restored: Response | undefined;
    // A model that takes its time: the user restores revision 1 while it thinks.
    const client = slowModel(async (body) => {
      prompts.push(body);
      restored ??= await restore(u.key, 1);
      const memory = prompts.length === 1 ? "Ana lives in Lyon with a cat." : "Ana lives in Porto with a cat.";
      return { updated_scaffold: { Pets: ["cat"] }, updated_working_memory: memory, facts_to_embed: [] };
    });
    const { deps } = await captured(u.id);
    await expect(consolidateUser(deps, { client, model: "m" }, u.id)).rejects.toBeInstanceOf(ConsolidationConflict);
    expect(restored?.status).toBe(200);
    expect(await working(u.key)).toBe("Ana lives in Porto.");
    // The retry reads the restored memory, not the one it started from.
    expect(await consolidateUser(deps, { client, model: "m" }, u.id)).toMatchObject({ status: "applied", rev: 4 });
    expect(prompts[0]).toContain("Ana lives in Lyon.");
    expect(prompts[1]).toContain("Ana lives in Porto.");
    expect(prompts[1]).not.toContain("Lyon");
    expect(await working(u.key)).toBe("Ana lives in Porto with a cat.");
    expect((await getJson<Scaffold>(u.key, "/v1/memory/scaffold")).scaffold).toEqual({ City: "Porto", Pets: ["cat"] });
    expect((await runs(u.key)).map((r) => r.kind)).toEqual(["consolidation", "restore", "edit", "consolidation"]);
  });

  it("another user's revision is 404, and a revision must be a positive integer", async () => {
    const u = await createUser();
    const other = await createUser();
    expect((await api(u.key, "PUT", "/v1/memory/working", { working_memory: "Mine." })).status).toBe(200);
    for (const text of ["Theirs.", "Theirs, later."]) expect((await api(other.key, "PUT", "/v1/memory/working", { working_memory: text })).status).toBe(200);
    // Revision 2 exists only for the other user.
    for (const res of [await restore(u.key, 2), await api(u.key, "GET", "/v1/memory/runs/2")]) {
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ error: { code: "not_found" } });
    }
    expect(await working(u.key)).toBe("Mine.");
    expect(await working(other.key)).toBe("Theirs, later.");
    for (const rev of ["abc", "1.5", "0", "-1"]) {
      expect((await restore(u.key, rev)).status).toBe(400);
      expect((await api(u.key, "GET", `/v1/memory/runs/${rev}`)).status).toBe(400);
    }
    expect(await runs(u.key)).toHaveLength(1);
  });

  it("a run recorded before copies were kept is listed but cannot be restored (409)", async () => {
    const u = await createUser();
    // As every run written before migration 0019: no copy of the tiers.
    await (await userD1(u.id))
      .prepare("INSERT INTO memory_runs (id, user_id, rev, kind, summary) VALUES (?, ?, 1, 'consolidation', '{}')")
      .bind(`run_${u.id}`, u.id)
      .run();
    expect((await api(u.key, "PUT", "/v1/memory/working", { working_memory: "Current." })).status).toBe(200);
    expect((await runs(u.key)).map((r) => [r.rev, r.restorable])).toEqual([
      [2, true],
      [1, false],
    ]);
    expect((await getJson<{ run: RunDetail }>(u.key, "/v1/memory/runs/1")).run).toMatchObject({ working_memory: null, scaffold: null, confidence: null });
    const res = await restore(u.key, 1);
    expect(res.status).toBe(409);
    expect(await res.json()).toMatchObject({ error: { code: "conflict", message: expect.stringContaining("cannot be restored") } });
    expect(await working(u.key)).toBe("Current.");
    expect(await runs(u.key)).toHaveLength(2);
  });

  it("only the latest revisions keep their copy: an older one stays listed but cannot be restored", async () => {
    const u = await createUser();
    // A long history, as months of consolidations leave: revisions 1..KEPT_COPIES, each with its copy.
    await (await userD1(u.id))
      .prepare(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?2)
       INSERT INTO memory_runs (id, user_id, rev, kind, summary, working_memory, scaffold, scaffold_meta)
       SELECT 'run_' || ?1 || '_' || i, ?1, i, 'edit', '{}', 'Narrative ' || i, '{}', '{}' FROM n`,
      )
      .bind(u.id, KEPT_COPIES)
      .run();
    const restorable = async (rev: number) => (await getJson<{ run: RunDetail }>(u.key, `/v1/memory/runs/${rev}`)).run.restorable;
    expect(await restorable(1)).toBe(true);
    // An edit and a consolidation each push the oldest copy out.
    expect((await api(u.key, "PUT", "/v1/memory/working", { working_memory: "Newest." })).status).toBe(200);
    expect([await restorable(1), await restorable(2)]).toEqual([false, true]);
    await consolidate(u, "I live in Porto", { updated_scaffold: { City: "Porto" }, updated_working_memory: "Lives in Porto." });
    expect([await restorable(2), await restorable(3)]).toEqual([false, true]);
    expect((await restore(u.key, 2)).status).toBe(409);
    const res = await restore(u.key, 3);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ restored: 3, working_memory: "Narrative 3" });
  });

  it("after an erase nothing from before it can be restored", async () => {
    const u = await createUser();
    await consolidate(u, "I live in Porto", { updated_scaffold: { City: "Porto" }, updated_working_memory: "Ana lives in Porto." });
    expect((await api(u.key, "PUT", "/v1/memory/working", { working_memory: "Ana lives in Porto and bakes." })).status).toBe(200);
    expect((await api(u.key, "DELETE", "/v1/memory")).status).toBe(200);
    for (const rev of [1, 2]) {
      expect((await restore(u.key, rev)).status).toBe(404);
      expect((await api(u.key, "GET", `/v1/memory/runs/${rev}`)).status).toBe(404);
    }
    expect(await working(u.key)).toBe("");
    expect((await getJson<Scaffold>(u.key, "/v1/memory/scaffold")).scaffold).toEqual({});
    // The erase is a revision whose copy is the empty memory.
    expect(await runs(u.key)).toEqual([expect.objectContaining({ rev: 3, kind: "erase", restorable: true })]);
    expect((await getJson<{ run: RunDetail }>(u.key, "/v1/memory/runs/3")).run).toMatchObject({ working_memory: "", scaffold: {} });
  });
});

describe("forgetting the earlier versions runs keep", () => {
  it("drops every copy but the latest, so corrected-away text can no longer be read or restored; the current memory and other users' copies stay", async () => {
    const u = await createUser();
    const other = await createUser();
    await consolidate(u, "my PIN is on a sticky note", {
      updated_scaffold: { Note: "PIN on a sticky note" },
      updated_working_memory: "Keeps the PIN on a note.",
    });
    await consolidate(other, "I live in Porto", { updated_scaffold: { City: "Porto" }, updated_working_memory: "Lives in Porto." });
    // The user corrects the text away; the first run still holds it.
    expect((await api(u.key, "PUT", "/v1/memory/working", { working_memory: "Likes tidy desks." })).status).toBe(200);
    expect((await api(u.key, "PATCH", "/v1/memory/scaffold", { scaffold: { Note: null } })).status).toBe(200);
    expect((await getJson<{ run: RunDetail }>(u.key, "/v1/memory/runs/1")).run.working_memory).toBe("Keeps the PIN on a note.");

    const res = await api(u.key, "DELETE", "/v1/memory/runs/copies");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ cleared: 2 });
    const first = (await getJson<{ run: RunDetail }>(u.key, "/v1/memory/runs/1")).run;
    expect(first).toMatchObject({ restorable: false, working_memory: null, scaffold: null, confidence: null });
    expect((await restore(u.key, 1)).status).toBe(409);
    // The runs stay listed; the latest keeps its copy, which is the memory as it is now.
    expect((await runs(u.key)).map((r) => [r.rev, r.restorable])).toEqual([
      [3, true],
      [2, false],
      [1, false],
    ]);
    expect(await working(u.key)).toBe("Likes tidy desks.");
    expect((await getJson<{ run: RunDetail }>(u.key, "/v1/memory/runs/3")).run).toMatchObject({ working_memory: "Likes tidy desks.", scaffold: {} });
    // Nothing of another user's changes, and a second call has nothing left to drop.
    expect((await getJson<{ run: RunDetail }>(other.key, "/v1/memory/runs/1")).run.working_memory).toBe("Lives in Porto.");
    expect(await (await api(u.key, "DELETE", "/v1/memory/runs/copies")).json()).toEqual({ cleared: 0 });
  });

  it("a restore that read a copy just before it was forgotten writes nothing and answers conflict", async () => {
    const u = await createUser();
    await consolidate(u, "my PIN is on a sticky note", { updated_scaffold: {}, updated_working_memory: "Keeps the PIN on a note." });
    expect((await api(u.key, "PUT", "/v1/memory/working", { working_memory: "Likes tidy desks." })).status).toBe(200);
    // The user's other tab forgets the copies between the restore's read and its write.
    const db = await userDb(u.id);
    const read = db.batch.bind(db);
    const readThenForget = async (queries: Parameters<typeof read>[0]) => {
      const out = await read(queries);
      await forgetCopies(await userDb(u.id), u.id);
      return out;
    };
    db.batch = readThenForget as unknown as typeof db.batch;
    await expect(restoreRevision(db, u.id, 1)).rejects.toMatchObject({ code: "conflict" });
    expect(await working(u.key)).toBe("Likes tidy desks.");
    expect((await runs(u.key)).map((r) => [r.rev, r.kind, r.restorable])).toEqual([
      [2, "edit", true],
      [1, "consolidation", false],
    ]);
  });
});
