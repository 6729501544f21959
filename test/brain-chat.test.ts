import { describe, expect, it } from "vitest";
import { type ProposalRow, proposalInsert, propose } from "../src/brain/review";
import { updateCustomerBrain } from "../src/brain/tool";
import { toAnthropicTool } from "../src/core/tool";
import { brainRows, call, createProject, type Entry, lastToolResults, memory, ofType, seedEntries, soul, testDb } from "./brain-helpers";
import { api, chat, createUser, readSse, script, seen, shape, textReply, toolCall } from "./helpers";
import { shardOf } from "./shard-helpers";

const brain = (target: string, content: string, id?: string, text?: string) => toolCall("update_customer_brain", { target, content }, id, text);

describe("update_customer_brain in a chat turn", () => {
  it("has exactly the documented input schema (docs/brain.md), on the wire too", async () => {
    const documented = {
      type: "object",
      properties: { target: { type: "string", enum: ["soul", "bible", "memory"] }, content: { type: "string" } },
      required: ["target", "content"],
    };
    expect(toAnthropicTool(updateCustomerBrain).input_schema).toEqual(documented);
    const u = await createUser();
    await chat(u.key, { message: "hi" });
    const wire = (await seen(u.id))[0]?.tools?.find((t) => t.name === "update_customer_brain");
    expect(JSON.stringify(wire?.input_schema)).toBe(JSON.stringify(documented));
  });

  it("streams: saves SOUL, the model sees the result and its answer references the save in the same stream", async () => {
    const u = await createUser();
    await script(u.id, brain("soul", "Ana runs a small bakery in Porto.", "toolu_s1", "Noted. "), textReply("I saved that you run a bakery in Porto."));
    const { events, sessionId, text } = await chat(u.key, { message: "I run a small bakery in Porto" });
    const types = shape(events);
    expect(types).toEqual(["session", "tool_use", "memory_saved", "tool_result", "done"]);
    expect(ofType(events, "memory_saved")[0]).toEqual({ type: "memory_saved", target: "soul", version: 1 });
    expect(ofType(events, "tool_use")[0]).toMatchObject({ reason: "Updating what I know about you" });
    expect(text).toBe("Noted. I saved that you run a bakery in Porto.");
    const [result] = lastToolResults((await seen(u.id))[1]);
    expect(result).toMatchObject({ tool_use_id: "toolu_s1", content: expect.stringContaining("Saved SOUL as version 1") });
    expect(result?.is_error).toBeUndefined();
    expect(await soul(u.key)).toMatchObject({ content: "Ana runs a small bakery in Porto.", version: 1 });
    const versions = await call<{ versions: { author: string; session_id: string }[] }>(u.key, "GET", "/v1/brain/soul/versions");
    expect(versions.body.versions).toEqual([expect.objectContaining({ version: 1, author: "assistant", session_id: sessionId })]);
  });

  it("answers stream:false with the same events: a MEMORY entry is appended and reported by id", async () => {
    const u = await createUser();
    const project = await createProject(u.id);
    await script(u.id, brain("memory", "Prefers answers in bullet points"), textReply("Got it, bullets from now on."));
    const res = await api(u.key, "POST", "/v1/chat", { message: "please use bullet points", stream: false, project_id: project });
    const body = (await res.json()) as { reply: string; session_id: string; events: { type: string; entry_id?: string }[] };
    expect(body.reply).toBe("Got it, bullets from now on.");
    const saved = body.events.find((e) => e.type === "memory_saved");
    expect(saved).toMatchObject({ target: "memory", entry_id: expect.stringMatching(/^mem_/) });
    const { entries } = await memory(u.key);
    expect(entries).toEqual([
      expect.objectContaining({
        id: saved?.entry_id,
        content: "Prefers answers in bullet points",
        author: "assistant",
        session_id: body.session_id,
        project_id: project,
      }),
    ]);
  });

  it("writes the active site's BIBLE and registers the site; without a site, BIBLE is an is_error and nothing is written", async () => {
    const u = await createUser();
    await script(u.id, brain("bible", "Shop on Shopify, ships to the EU."), textReply("Which site?"));
    const none = await chat(u.key, { message: "my shop runs on Shopify" });
    expect(ofType(none.events, "tool_result")[0]?.ok).toBe(false);
    expect(none.events.at(-1)?.type).toBe("done");
    expect(lastToolResults((await seen(u.id))[1])[0]).toMatchObject({ is_error: true, content: expect.stringContaining("no active site") });
    expect(await brainRows(u.id)).toMatchObject({ documents: 0, versions: 0, sites: 0 });

    await script(u.id, brain("bible", "Shop on Shopify, ships to the EU."), textReply("Saved."));
    const withSite = await chat(u.key, { message: "my shop runs on Shopify", site_id: "shop-1" });
    expect(ofType(withSite.events, "memory_saved")[0]).toMatchObject({ target: "bible", version: 1 });
    expect((await call(u.key, "GET", "/v1/sites/shop-1/bible")).body).toMatchObject({ content: "Shop on Shopify, ships to the EU.", site: "shop-1" });
    expect((await call(u.key, "GET", "/v1/sites/shop-1")).status).toBe(200);
  });

  it("gives invalid input (wrong target, missing content, invisible-only, 1 MB) an is_error result and the turn completes", async () => {
    const u = await createUser();
    const inputs = [
      { target: "diary", content: "x" },
      { target: "memory" },
      { target: "memory", content: "\u200B\u202E\u0000 \n" },
      { target: "memory", content: "a".repeat(1024 * 1024) },
    ];
    const calls = inputs.map((input, i) => ({ type: "tool_use" as const, id: `toolu_bad${i}`, name: "update_customer_brain", input }));
    // Large deltas: the megabyte arrives in one input_json_delta instead of 150k small ones.
    await script(u.id, { reply: { content: calls }, chunk: 1 << 21 }, textReply("Sorry."));
    const { events, text } = await chat(u.key, { message: "remember this" });
    expect(ofType(events, "tool_result").map((r) => r.ok)).toEqual([false, false, false, false]);
    expect(ofType(events, "memory_saved")).toEqual([]);
    expect(events.at(-1)).toMatchObject({ type: "done", stop_reason: "end_turn" });
    expect(text).toBe("Sorry.");
    const results = lastToolResults((await seen(u.id))[1]);
    expect(results.map((r) => r.is_error)).toEqual([true, true, true, true]);
    expect(results[0]?.content).toMatch(/target/);
    expect(results[1]?.content).toMatch(/content/);
    expect(results[2]?.content).toMatch(/empty/);
    expect(results[3]?.content).toMatch(/at most 500 characters on the free plan; this one has 1048576\./);
    expect(await brainRows(u.id)).toMatchObject({ documents: 0, versions: 0, entries: 0 });
  });

  it("refuses a chat turn in a project that is not the user's: 404, no model call, nothing written", async () => {
    const u = await createUser();
    const other = await createUser();
    const res = await api(u.key, "POST", "/v1/chat", { message: "the deadline is friday", project_id: await createProject(other.id) });
    expect(res.status).toBe(404);
    // The same words as for an unknown or archived project of one's own: nothing about the other user's shows.
    expect(await res.json()).toMatchObject({
      error: { code: "not_found", message: "project not found (an archived project takes no new chats: unarchive it first)" },
    });
    expect(await seen(u.id)).toEqual([]);
    expect((await brainRows(u.id)).entries).toBe(0);
    const sessions = (await (await api(u.key, "GET", "/v1/sessions")).json()) as { sessions: unknown[] };
    expect(sessions.sessions).toEqual([]);
  });

  it("strips control and invisible characters from what the model saves", async () => {
    const u = await createUser();
    await script(u.id, brain("memory", "  Likes\u200B tea\u202E\u2066 \u0007and e\u0301clairs\r\nsecond line\t(tab)\uFEFF  "), textReply("ok"));
    await chat(u.key, { message: "note it" });
    expect((await memory(u.key)).entries[0]?.content).toBe("Likes tea and \u00e9clairs\nsecond line\t(tab)");
  });

  it("caps brain writes per turn: a runaway model gets is_error results after the fifth", async () => {
    const u = await createUser("pro");
    const calls = Array.from({ length: 8 }, (_, i) => ({
      type: "tool_use" as const,
      id: `toolu_run${i}`,
      name: "update_customer_brain",
      input: { target: "memory", content: `insight ${i}` },
    }));
    await script(u.id, { reply: { content: calls } }, textReply("done"));
    const { events } = await chat(u.key, { message: "remember everything" });
    expect(ofType(events, "tool_result").map((r) => r.ok)).toEqual([true, true, true, true, true, false, false, false]);
    expect(lastToolResults((await seen(u.id))[1])[5]?.content).toMatch(/5 brain writes this turn/);
    expect((await memory(u.key)).total).toBe(5);
  });

  it("at the plan's MEMORY cap the tool explains the limit and writes nothing", async () => {
    const u = await createUser();
    await seedEntries(u.id, 100);
    await script(u.id, brain("memory", "one more thing"), textReply("MEMORY is full."));
    const { events } = await chat(u.key, { message: "remember one more thing" });
    expect(ofType(events, "tool_result")[0]?.ok).toBe(false);
    expect(lastToolResults((await seen(u.id))[1])[0]?.content).toMatch(/MEMORY is full.*100 entries/);
    expect((await brainRows(u.id)).entries).toBe(100);
  });

  it("flags a replacement that drops most of SOUL, keeping the old text as a version", async () => {
    const u = await createUser();
    const long = Array.from({ length: 12 }, (_, i) => `Fact ${i}: something durable about the user.`).join("\n");
    expect((await call(u.key, "PUT", "/v1/brain/soul", { content: long })).status).toBe(200);
    await script(u.id, brain("soul", "Ana likes tea."), textReply("updated"));
    const { events } = await chat(u.key, { message: "I like tea" });
    expect(ofType(events, "memory_saved")[0]).toEqual({ type: "memory_saved", target: "soul", version: 2, truncated: true });
    expect(lastToolResults((await seen(u.id))[1])[0]?.content).toMatch(/Version 1 still holds the previous text/);
    const v = await call<{ versions: { version: number; truncated: boolean; note: string | null }[] }>(u.key, "GET", "/v1/brain/soul/versions");
    expect(v.body.versions[0]).toMatchObject({ version: 2, truncated: true, note: expect.stringContaining("possible truncation") });
    expect((await call<{ content: string }>(u.key, "GET", "/v1/brain/soul/versions/1")).body.content).toBe(long);
  });
});

describe("review mode", () => {
  it("turns assistant writes into proposals that apply only when approved", async () => {
    const u = await createUser();
    expect((await call(u.key, "GET", "/v1/brain/settings")).body).toEqual({ review_mode: false });
    expect((await call(u.key, "PUT", "/v1/brain/settings", { review_mode: true })).body).toEqual({ review_mode: true });
    await script(u.id, brain("soul", "Ana is a baker."), brain("memory", "Wakes up at 4am"), textReply("Both await your review."));
    const { events } = await chat(u.key, { message: "I'm a baker and wake at 4" });
    const pending = ofType(events, "memory_pending");
    expect(pending.map((p) => p.target)).toEqual(["soul", "memory"]);
    expect(pending[0]?.diff).toContain("+Ana is a baker.");
    expect(ofType(events, "memory_saved")).toEqual([]);
    expect(lastToolResults((await seen(u.id))[1])[0]?.content).toMatch(/NOT saved yet/);
    expect(await soul(u.key)).toMatchObject({ version: 0 });
    expect((await memory(u.key)).total).toBe(0);

    const list = await call<{ proposals: { id: string; target: string; diff: string }[] }>(u.key, "GET", "/v1/brain/proposals");
    const [mem, sou] = list.body.proposals;
    expect(list.body.proposals.map((p) => p.target)).toEqual(["memory", "soul"]);
    expect((await call(u.key, "POST", `/v1/brain/proposals/${sou?.id}/approve`)).body).toEqual({ applied: { target: "soul", version: 1, truncated: false } });
    expect(await soul(u.key)).toMatchObject({ content: "Ana is a baker.", version: 1 });
    expect((await call(u.key, "POST", `/v1/brain/proposals/${sou?.id}/approve`)).status).toBe(409);
    expect((await call(u.key, "POST", `/v1/brain/proposals/${mem?.id}/reject`)).status).toBe(200);
    expect((await memory(u.key)).total).toBe(0);
    expect((await call(u.key, "POST", `/v1/brain/proposals/${mem?.id}/approve`)).status).toBe(409);
  });

  it("refuses to approve a SOUL proposal made against a version that has since changed", async () => {
    const u = await createUser();
    await call(u.key, "PUT", "/v1/brain/settings", { review_mode: true });
    await script(u.id, brain("soul", "Version from the assistant."), textReply("proposed"));
    await chat(u.key, { message: "x" });
    await call(u.key, "PUT", "/v1/brain/soul", { content: "The user's own words." });
    const id = (await call<{ proposals: { id: string }[] }>(u.key, "GET", "/v1/brain/proposals")).body.proposals[0]?.id;
    const res = await call<{ error: { code: string } }>(u.key, "POST", `/v1/brain/proposals/${id}/approve`);
    expect(res.status).toBe(409);
    expect(await soul(u.key)).toMatchObject({ content: "The user's own words.", version: 1 });
  });

  it("holds the pending-proposal cap inside the INSERT, and MEMORY's cap for a MEMORY proposal", async () => {
    const u = await createUser();
    const db = await testDb(u.id);
    const row = (i: number): ProposalRow => ({
      id: `prp_cap_${u.id}_${i}`,
      userId: u.id,
      target: "memory",
      site: null,
      projectId: null,
      content: `insight ${i}`,
      baseVersion: null,
      status: "pending",
      sessionId: null,
      createdAt: Date.now(),
      decidedAt: null,
    });
    const [first, ...rest] = Array.from({ length: 21 }, (_, i) => proposalInsert(db, row(i), "free"));
    if (!first) throw new Error("no statements");
    const results = await db.batch([first, ...rest]);
    expect(results.map((r) => r.meta.changes).filter((n) => n === 1)).toHaveLength(20);
    const input = { userId: u.id, plan: "free" as const, target: "memory" as const, site: null, projectId: null, content: "one more", sessionId: null };
    await expect(propose(db, input)).rejects.toMatchObject({ code: "conflict", message: expect.stringMatching(/20 proposals are already waiting/) });

    // On u's shard, where `db` writes.
    const full = await createUser("free", await shardOf(u.id));
    await seedEntries(full.id, 100);
    await expect(propose(db, { ...input, userId: full.id })).rejects.toMatchObject({ message: expect.stringMatching(/MEMORY is full/) });
    expect((await brainRows(full.id)).proposals).toBe(0);
  });

  it("approves a MEMORY proposal into an entry", async () => {
    const u = await createUser();
    await call(u.key, "PUT", "/v1/brain/settings", { review_mode: true });
    const project = await createProject(u.id);
    await script(u.id, brain("memory", "Allergic to nuts"), textReply("proposed"));
    await readSse(await api(u.key, "POST", "/v1/chat", { message: "I'm allergic to nuts", project_id: project }));
    const id = (await call<{ proposals: { id: string }[] }>(u.key, "GET", "/v1/brain/proposals")).body.proposals[0]?.id;
    const applied = await call<{ applied: { entry_id: string } }>(u.key, "POST", `/v1/brain/proposals/${id}/approve`);
    const { entries } = await memory(u.key);
    expect(entries.map((e: Entry) => [e.id, e.content, e.author, e.project_id])).toEqual([
      [applied.body.applied.entry_id, "Allergic to nuts", "assistant", project],
    ]);
  });
});
