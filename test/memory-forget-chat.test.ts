// Forgetting and searching memory from the chat: the fake model scripts the calls; the real loop, bridge (the
// approval), storage and retrieval run them. The offline model's rule for "forget that ..." runs end to end too.
import { describe, expect, it } from "vitest";
import type { ChatEvent } from "../src/core/events";
import { chatTurn, resume } from "./bridge-helpers";
import { api, createUser, newSession, recalledIn, script, seen, textReply, toolCall, turnWithEnv } from "./helpers";
import { getJson, importFacts } from "./memory-helpers";

const T = 60_000;

type FactBody = { id: string; text: string; superseded_by: string | null };
type Scaffold = { scaffold: Record<string, unknown> };

const factStatus = async (key: string, id: string) => (await api(key, "GET", `/v1/memory/facts/${id}`)).status;

/** The tool_result the model was sent for one call, from the fake's log. */
async function resultSent(userId: string, callId: string) {
  for (const r of await seen(userId))
    for (const m of r.messages) if (Array.isArray(m.content)) for (const b of m.content) if (b.type === "tool_result" && b.tool_use_id === callId) return b;
  return undefined;
}

const toolResults = (events: ChatEvent[]) => events.flatMap((e) => (e.type === "tool_result" ? [e] : []));

/** Where the user lived: Berlin, then Lyon (which replaces it). Returns [berlin, lyon] ids. */
async function moved(key: string): Promise<[string, string]> {
  const berlin = (await importFacts(key, [{ text: "I live in Berlin", key: "user.home_city", metadata: { date: "2023-01-01" } }])).facts[0]?.id ?? "";
  const lyon = (await importFacts(key, [{ text: "I live in Lyon", key: "user.home_city", metadata: { date: "2025-01-01" } }])).facts[0]?.id ?? "";
  return [berlin, lyon];
}

describe("forgetting from the chat", () => {
  it(
    "waits for the user's approval: denied, nothing is forgotten; allowed, the fact and the statement it replaced are gone",
    async () => {
      const u = await createUser();
      const [berlin, lyon] = await moved(u.key);
      await importFacts(u.key, [{ text: "I play the cello" }]);

      // The model sees the facts it may name, with their ids (in each search result's source).
      await script(u.id, textReply("You live in Lyon."));
      const asked = await chatTurn(u.key, { message: "where do I live?" });
      expect(recalledIn((await seen(u.id)).at(-1))).toContain(`I live in Lyon (engram:fact:${lyon})`);

      const reason = "You asked me to forget where you live";
      await script(u.id, toolCall("forget_memory", { fact_ids: [lyon], reason }, "toolu_fg1"), textReply("Kept."));
      const first = await chatTurn(u.key, { message: "forget where I live", session_id: asked.sessionId });
      expect(first.pending).toMatchObject({ tool_name: "forget_memory", pending_calls: [{ call_id: "toolu_fg1", runs: "server", needs_approval: true }] });
      expect(await factStatus(u.key, lyon)).toBe(200);

      const denied = await resume(u.key, asked.sessionId, { call_id: "toolu_fg1", action: "deny" });
      expect(toolResults(denied.events)).toEqual([{ type: "tool_result", id: "toolu_fg1", name: "forget_memory", ok: false }]);
      expect(await factStatus(u.key, lyon)).toBe(200);

      await script(u.id, toolCall("forget_memory", { fact_ids: [lyon], reason }, "toolu_fg2"), textReply("Forgotten."));
      await chatTurn(u.key, { message: "yes, really forget where I live", session_id: asked.sessionId });
      const allowed = await resume(u.key, asked.sessionId, { call_id: "toolu_fg2", action: "allow", tool_name: "forget_memory" });
      expect(toolResults(allowed.events)).toEqual([{ type: "tool_result", id: "toolu_fg2", name: "forget_memory", ok: true }]);
      expect(await factStatus(u.key, lyon)).toBe(404);
      expect(await factStatus(u.key, berlin)).toBe(404);
      const left = await getJson<{ facts: FactBody[] }>(u.key, "/v1/memory/facts?include_superseded=true");
      expect(left.facts.map((f) => f.text)).toEqual(["I play the cello"]);
      expect((await resultSent(u.id, "toolu_fg2"))?.content).toBe(
        "Forgot 1 fact from long-term memory: “I live in Lyon” and 1 earlier statement it had replaced.",
      );
    },
    T,
  );

  it(
    "never reaches another user's facts: their id is reported as not found and their fact stays",
    async () => {
      const [a, b] = [await createUser(), await createUser()];
      const theirs = (await importFacts(b.key, [{ text: "I live in Oslo" }])).facts[0]?.id ?? "";
      const mine = (await importFacts(a.key, [{ text: "I live in Porto" }])).facts[0]?.id ?? "";
      await script(a.id, toolCall("forget_memory", { fact_ids: [theirs, mine], reason: "forget it all" }, "toolu_fx1"), textReply("Done."));
      const turn = await chatTurn(a.key, { message: "forget where I live" });
      await resume(a.key, turn.sessionId, { call_id: "toolu_fx1", action: "allow", tool_name: "forget_memory" });
      expect(await factStatus(b.key, theirs)).toBe(200);
      expect(await factStatus(a.key, mine)).toBe(404);
      expect((await resultSent(a.id, "toolu_fx1"))?.content).toBe(
        `Forgot 1 fact from long-term memory: “I live in Porto”. No fact of the user's has the id ${theirs}: nothing was removed for it.`,
      );
    },
    T,
  );

  it(
    "removes profile keys as the user's own edit (restorable from history), and says which keys the profile does not have",
    async () => {
      const u = await createUser();
      expect((await api(u.key, "PATCH", "/v1/memory/scaffold", { scaffold: { City: "Lyon", Diet: "vegetarian" } })).status).toBe(200);
      await script(u.id, toolCall("forget_memory", { profile_keys: ["City", "Pets"], reason: "forget my city" }, "toolu_fp1"), textReply("Done."));
      const turn = await chatTurn(u.key, { message: "forget my city" });
      await resume(u.key, turn.sessionId, { call_id: "toolu_fp1", action: "allow", tool_name: "forget_memory" });
      expect((await getJson<Scaffold>(u.key, "/v1/memory/scaffold")).scaffold).toEqual({ Diet: "vegetarian" });
      expect((await resultSent(u.id, "toolu_fp1"))?.content).toBe("Removed City from the profile. The profile has no key Pets.");
      const runs = await getJson<{ runs: { rev: number; kind: string; summary: Record<string, unknown> }[] }>(u.key, "/v1/memory/runs");
      expect(runs.runs[0]).toMatchObject({ kind: "edit", summary: { scaffold_removed: ["City"] } });
    },
    T,
  );

  it(
    "takes it out of working memory too, says what left from where, and a restore from before asks first",
    async () => {
      const u = await createUser();
      const narrative = "Ana is a translator. They live in Lisbon. They are learning the cello.";
      expect((await api(u.key, "PUT", "/v1/memory/working", { working_memory: narrative })).status).toBe(200);
      expect((await api(u.key, "PATCH", "/v1/memory/scaffold", { scaffold: { Location: "Lisbon", Name: "Ana" } })).status).toBe(200);
      const before = (await getJson<{ runs: { rev: number }[] }>(u.key, "/v1/memory/runs?limit=1")).runs[0]?.rev ?? 0;
      const rewritten = "Ana is a translator. They are learning the cello.";
      await script(
        u.id,
        toolCall("forget_memory", { profile_keys: ["Location"], working_memory: rewritten, reason: "forget that I live in Lisbon" }, "toolu_fw1"),
        textReply("Done."),
      );
      const turn = await chatTurn(u.key, { message: "forget that I live in Lisbon" });
      await resume(u.key, turn.sessionId, { call_id: "toolu_fw1", action: "allow", tool_name: "forget_memory" });
      expect((await resultSent(u.id, "toolu_fw1"))?.content).toBe("Removed Location from the profile. Removed from working memory: “They live in Lisbon.”.");
      expect((await getJson<{ working_memory: string }>(u.key, "/v1/memory/working")).working_memory).toBe(rewritten);
      expect((await getJson<Scaffold>(u.key, "/v1/memory/scaffold")).scaffold).toEqual({ Name: "Ana" });

      // Restoring the revision from before the forget would bring both back: refused, in words, nothing changed.
      const refused = await api(u.key, "POST", `/v1/memory/runs/${before}/restore`);
      expect(refused.status).toBe(409);
      const message = ((await refused.json()) as { error: { message: string } }).error.message;
      expect(message).toContain("the profile key Location");
      expect(message).toContain("“They live in Lisbon.” in working memory");
      expect((await getJson<{ working_memory: string }>(u.key, "/v1/memory/working")).working_memory).toBe(rewritten);
      // Asked and confirmed, it is restored.
      expect((await api(u.key, "POST", `/v1/memory/runs/${before}/restore?bring_back_forgotten=true`)).status).toBe(200);
      expect((await getJson<{ working_memory: string }>(u.key, "/v1/memory/working")).working_memory).toBe(narrative);
    },
    T,
  );

  it(
    "asks again on every call: an answer of 'always' covers only the call it answers",
    async () => {
      const u = await createUser();
      const [tea = "", cello = ""] = (await importFacts(u.key, [{ text: "I drink green tea" }, { text: "I play the cello" }])).facts.map((f) => f.id);
      await script(
        u.id,
        {
          reply: {
            content: [
              { type: "tool_use", id: "toolu_al1", name: "forget_memory", input: { fact_ids: [tea], reason: "forget my tea" } },
              { type: "tool_use", id: "toolu_al2", name: "forget_memory", input: { fact_ids: [cello], reason: "and the cello" } },
            ],
          },
        },
        textReply("Done."),
      );
      const turn = await chatTurn(u.key, { message: "forget my tea and my cello" });
      const always = await resume(u.key, turn.sessionId, { call_id: "toolu_al1", action: "always", tool_name: "forget_memory" });
      // The other call of the same message still waits for its own answer.
      expect(always.pending).toMatchObject({ call_id: "toolu_al2", pending_calls: [{ call_id: "toolu_al2", needs_approval: true }] });
      expect(await factStatus(u.key, tea)).toBe(404);
      expect(await factStatus(u.key, cello)).toBe(200);
      await resume(u.key, turn.sessionId, { call_id: "toolu_al2", action: "deny" });
      // A later turn's call waits too.
      await script(u.id, toolCall("forget_memory", { fact_ids: [cello], reason: "forget the cello" }, "toolu_al3"), textReply("Done."));
      const later = await chatTurn(u.key, { message: "now forget the cello", session_id: turn.sessionId });
      expect(later.pending).toMatchObject({ tool_name: "forget_memory", pending_calls: [{ call_id: "toolu_al3", needs_approval: true }] });
      expect(await factStatus(u.key, cello)).toBe(200);
    },
    T,
  );

  it(
    "shows the user a cleaned reason on the approval: no invisible characters, no secret",
    async () => {
      const u = await createUser();
      const tea = (await importFacts(u.key, [{ text: "I drink green tea" }])).facts[0]?.id ?? "";
      const reason = "forget my tea\u202e\u200b; token=abcd1234efgh5678ijkl";
      await script(u.id, toolCall("forget_memory", { fact_ids: [tea], reason }, "toolu_fr1"), textReply("Done."));
      const turn = await chatTurn(u.key, { message: "forget my tea" });
      const shown = turn.events.find((e) => e.type === "tool_use");
      expect(shown?.type === "tool_use" ? shown.reason : "").toBe("Forgetting what you asked: forget my tea; token=[REDACTED]");
    },
    T,
  );

  it(
    "refuses a call that names nothing to forget, before asking the user",
    async () => {
      const u = await createUser();
      await script(u.id, toolCall("forget_memory", { reason: "forget everything" }, "toolu_fe1"), textReply("I need to know what."));
      const turn = await chatTurn(u.key, { message: "forget everything" });
      expect(turn.pending).toBeNull();
      expect((await resultSent(u.id, "toolu_fe1"))?.content).toContain("give fact_ids, profile_keys or working_memory");
    },
    T,
  );
});

describe("searching memory from the chat", () => {
  it(
    "answers with the facts and their ids; with history, the replaced statement too, marked",
    async () => {
      const u = await createUser();
      const [berlin, lyon] = await moved(u.key);
      await script(
        u.id,
        toolCall("search_memory", { query: "which city do I live in" }, "toolu_sm1"),
        toolCall("search_memory", { query: "which city did I live in", history: true }, "toolu_sm2"),
        textReply("Lyon, Berlin before that."),
      );
      await chatTurn(u.key, { message: "hi" });
      const now = String((await resultSent(u.id, "toolu_sm1"))?.content);
      expect(now).toContain(`- I live in Lyon (id ${lyon})`);
      expect(now).not.toContain("Berlin");
      const before = String((await resultSent(u.id, "toolu_sm2"))?.content);
      expect(before).toContain(`- I live in Berlin (id ${berlin}, since replaced)`);
    },
    T,
  );

  it(
    "sees only the user's own facts",
    async () => {
      const [a, b] = [await createUser(), await createUser()];
      await importFacts(b.key, [{ text: "My locker code is 4417" }]);
      await script(a.id, toolCall("search_memory", { query: "locker code" }, "toolu_sx1"), textReply("I don't know."));
      await chatTurn(a.key, { message: "what is my locker code?" });
      expect((await resultSent(a.id, "toolu_sx1"))?.content).toBe("No matching facts.");
    },
    T,
  );
});

describe("the offline model forgets what it is asked to", () => {
  it(
    "offers the matching fact and profile key for approval, and names nothing it was not shown",
    async () => {
      const u = await createUser();
      const lyon = (await importFacts(u.key, [{ text: "I live in Lyon" }])).facts[0]?.id ?? "";
      await importFacts(u.key, [{ text: "I play the cello" }]);
      expect((await api(u.key, "PATCH", "/v1/memory/scaffold", { scaffold: { Location: "Lyon", Instrument: "cello" } })).status).toBe(200);
      const sessionId = await newSession(u.id);
      const events = await turnWithEnv({ ANTHROPIC_API_KEY: "" }, { userId: u.id, sessionId, message: "Please forget that I live in Lyon" });
      const end = events.at(-1);
      expect(end).toMatchObject({ type: "tool_pending", tool_name: "forget_memory", pending_calls: [{ runs: "server", needs_approval: true }] });
      const call = events.find((e) => e.type === "tool_use");
      expect(call?.type === "tool_use" ? call.input : null).toEqual({
        fact_ids: [lyon],
        profile_keys: ["Location"],
        reason: "Please forget that I live in Lyon",
      });
      // Nothing is gone before the user says yes.
      expect(await factStatus(u.key, lyon)).toBe(200);
    },
    T,
  );

  it(
    "rewrites the working memory without it, and leaves a fact that is mostly about something else, saying so",
    async () => {
      const u = await createUser();
      const lyon = (await importFacts(u.key, [{ text: "I live in Lyon" }])).facts[0]?.id ?? "";
      const mixed = (await importFacts(u.key, [{ text: "My name is Ana, I teach chemistry and I live in Lyon" }])).facts[0]?.id ?? "";
      const narrative = "Recent context:\n- Ana teaches chemistry.\n- They live in Lyon near the river.\n- They play the cello.";
      expect((await api(u.key, "PUT", "/v1/memory/working", { working_memory: narrative })).status).toBe(200);
      const sessionId = await newSession(u.id);
      const events = await turnWithEnv({ ANTHROPIC_API_KEY: "" }, { userId: u.id, sessionId, message: "Please forget that I live in Lyon" });
      const call = events.find((e) => e.type === "tool_use");
      expect(call?.type === "tool_use" ? call.input : null).toMatchObject({
        fact_ids: [lyon],
        working_memory: "Recent context:\n- Ana teaches chemistry.\n- They play the cello.",
      });
      const said = events.flatMap((e) => (e.type === "text" ? [e.delta] : [])).join("");
      expect(said).toContain("“My name is Ana, I teach chemistry and I live in Lyon”");
      expect(mixed).not.toBe("");
    },
    T,
  );
});
