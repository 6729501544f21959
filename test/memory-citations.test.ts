/**
 * Recall that shows its evidence: retrieved facts reach the model as search_result blocks (citations on) in the
 * turn's user message, never in the system prompt or in stored history, and an answer's citations reach the client
 * as a `citations` event naming the facts. The fake Messages API checks the blocks and cites as the API does.
 */
import { describe, expect, it } from "vitest";
import type { ChatEvent } from "../src/core/events";
import { chatTurn, lookupOrder, resume, state } from "./bridge-helpers";
import { api, createUser, recalledIn, script, searchResultsOf, seen, systemOf, textReply } from "./helpers";
import { getJson, importFacts } from "./memory-helpers";

const T = 60_000;

const citationsOf = (events: ChatEvent[]) => events.flatMap((e) => (e.type === "citations" ? [e.cited] : []));

/** A text block citing the request's first search result, in words that do not repeat it. */
const cited = (text = "You live there.") => ({ type: "text" as const, text, cites: [{ search_result: 0 }] });
const citedReply = (text?: string) => ({ reply: { content: [cited(text)] } });

type Log = { injected: { sections: { name: string; ids: string[] }[]; evidence?: { source: string; text: string }[] } };

describe("retrieved facts as search results", () => {
  it(
    "reach the model as search_result blocks with citations on, before the user's words; the system prompt stays byte for byte",
    async () => {
      const u = await createUser();
      const [lyon, cello] = (await importFacts(u.key, [{ text: "I live in Lyon" }, { text: "I play the cello" }])).facts.map((f) => f.id);
      await script(u.id, textReply("Lyon."), textReply("The cello."));
      const first = await chatTurn(u.key, { message: "where do I live?" });
      await chatTurn(u.key, { message: "which instrument do I play?", session_id: first.sessionId });
      const [one, two] = await seen(u.id);

      const opening = one?.messages.at(-1)?.content;
      const results = searchResultsOf(one);
      expect(Array.isArray(opening) && opening.map((b) => b.type)).toEqual(["text", ...results.map(() => "search_result"), "text"]);
      // Ranked: the fact the question is about first.
      expect(results[0]).toEqual({
        type: "search_result",
        source: `engram:fact:${lyon}`,
        title: "Remembered fact",
        content: [{ type: "text", text: "I live in Lyon" }],
        citations: { enabled: true },
      });
      expect(Array.isArray(opening) && opening.at(-1)).toEqual({ type: "text", text: "where do I live?" });
      // The second turn's request carries its own retrieval only, in its own message: the first turn's went with that turn.
      expect(recalledIn(two)[0]).toBe(`I play the cello (engram:fact:${cello})`);
      expect(two?.messages.slice(0, -1).flatMap((m) => (Array.isArray(m.content) ? m.content.map((b) => b.type) : []))).not.toContain("search_result");
      expect(systemOf(two)).toBe(systemOf(one));
      expect(systemOf(one)).not.toMatch(/Lyon|cello/);

      // The audit row still names the injected facts, and shows the documents themselves.
      const logs = (await getJson<{ context_logs: Log[] }>(u.key, "/v1/memory/context-logs")).context_logs;
      const ids = logs.map((l) => l.injected.sections.find((s) => s.name === "retrieved_facts")?.ids);
      const idsOf = (r: typeof one) => searchResultsOf(r).map((b) => b.source.slice("engram:fact:".length));
      expect(ids).toEqual([idsOf(two), idsOf(one)]);
      expect(logs[1]?.injected.evidence?.[0]).toEqual({ source: `engram:fact:${lyon}`, title: "Remembered fact", text: "I live in Lyon" });
      // History keeps what the user said, not the documents.
      const stored = (await state(u.key, first.sessionId)).messages.flatMap((m) => m.content.map((b) => b.type));
      expect(stored).not.toContain("search_result");
    },
    T,
  );

  it(
    "a cited answer sends a citations event naming the fact, after its text; history keeps the citation for a reload",
    async () => {
      const u = await createUser();
      const [lyon] = (await importFacts(u.key, [{ text: "I live in Lyon" }])).facts.map((f) => f.id);
      await script(u.id, { reply: { content: [{ type: "text", text: "From what you told me: " }, cited()] } });
      const turn = await chatTurn(u.key, { message: "where do I live?" });
      expect(citationsOf(turn.events)).toEqual([[{ kind: "fact", id: lyon, cited_text: "I live in Lyon" }]]);
      const types = turn.events.map((e) => e.type);
      expect(types.indexOf("citations")).toBeGreaterThan(types.lastIndexOf("text"));
      expect(types.at(-1)).toBe("done");

      const assistant = (await state(u.key, turn.sessionId)).messages.find((m) => m.role === "assistant");
      expect(assistant?.content.find((b) => b.type === "text" && b.citations)).toMatchObject({
        text: "You live there.",
        citations: [{ type: "search_result_location", source: `engram:fact:${lyon}`, cited_text: "I live in Lyon", search_result_index: 0 }],
      });

      // The same turn as JSON lists the event too.
      await script(u.id, citedReply());
      const res = await api(u.key, "POST", "/v1/chat", { message: "where do I live?", stream: false, session_id: turn.sessionId });
      const body = (await res.json()) as { events: ChatEvent[] };
      expect(citationsOf(body.events)).toEqual([[{ kind: "fact", id: lyon, cited_text: "I live in Lyon" }]]);
    },
    T,
  );

  it(
    "never shows another user's fact, and a citation names only this turn's own documents",
    async () => {
      const [a, b] = [await createUser(), await createUser()];
      await importFacts(b.key, [{ text: "My locker code is 4417" }]);
      await script(a.id, textReply("I don't know."));
      const turn = await chatTurn(a.key, { message: "what is my locker code?" });
      expect(searchResultsOf((await seen(a.id)).at(-1))).toEqual([]);
      expect(JSON.stringify(await seen(a.id))).not.toContain("4417");
      expect(citationsOf(turn.events)).toEqual([]);

      // A reply citing a source the turn was not given (another user's fact id) is not evidence.
      const theirs = (await getJson<{ facts: { id: string }[] }>(b.key, "/v1/memory/facts")).facts[0]?.id;
      await importFacts(a.key, [{ text: "I keep my locker key on a red lanyard" }]);
      await script(a.id, {
        reply: {
          content: [
            {
              type: "text",
              text: "Your locker.",
              citations: [
                {
                  type: "search_result_location",
                  source: `engram:fact:${theirs}`,
                  title: "Remembered fact",
                  cited_text: "My locker code is 4417",
                  search_result_index: 0,
                  start_block_index: 0,
                  end_block_index: 1,
                },
              ],
            },
          ],
        },
      });
      const forged = await chatTurn(a.key, { message: "where is my locker key?", session_id: turn.sessionId });
      expect(citationsOf(forged.events)).toEqual([]);
    },
    T,
  );

  it(
    "does not send a forgotten fact on a later turn: not as a search result, nor in the earlier reply's citation",
    async () => {
      const u = await createUser();
      const [lyon] = (await importFacts(u.key, [{ text: "I live in Lyon" }])).facts.map((f) => f.id);
      await script(u.id, citedReply());
      const first = await chatTurn(u.key, { message: "where do I live?" });
      expect(citationsOf(first.events)).toHaveLength(1);
      expect((await api(u.key, "DELETE", `/v1/memory/facts/${lyon}`)).status).toBe(200);

      await script(u.id, textReply("I don't know any more."));
      await chatTurn(u.key, { message: "where do I live again?", session_id: first.sessionId });
      const later = (await seen(u.id)).at(-1);
      expect(JSON.stringify(later)).not.toContain("Lyon");
      expect(JSON.stringify(later)).not.toContain(String(lyon));
      // The earlier reply is still sent, as the text it was.
      expect(later?.messages.find((m) => m.role === "assistant")?.content).toEqual([{ type: "text", text: "You live there." }]);
    },
    T,
  );

  it(
    "keeps the turn's documents across a suspension: the resumed request carries them unchanged, the next turn does not",
    async () => {
      const u = await createUser();
      const [lyon] = (await importFacts(u.key, [{ text: "I live in Lyon; my order A-17 ships there" }])).facts.map((f) => f.id);
      await script(
        u.id,
        { reply: { content: [{ type: "tool_use", id: "toolu_ord", name: "lookup_order", input: { id: "A-17" } }] } },
        citedReply("It ships to where you live."),
        textReply("Hello again."),
      );
      const asked = await chatTurn(u.key, { message: "where does order A-17 ship?", client_tools: [lookupOrder] });
      expect(asked.pending?.tool_name).toBe("lookup_order");
      const done = await resume(u.key, asked.sessionId, { call_id: "toolu_ord", content: "A-17: shipped" });
      // The fake verified the thinking block of the first call against the same prefix, documents included.
      expect(done.end?.type).toBe("done");
      expect(citationsOf(done.events)).toEqual([[{ kind: "fact", id: lyon, cited_text: "I live in Lyon; my order A-17 ships there" }]]);
      const [call, resumed] = await seen(u.id);
      expect(searchResultsOf(resumed)).toEqual(searchResultsOf(call));
      expect(searchResultsOf(resumed)).toHaveLength(1);

      await chatTurn(u.key, { message: "hi", session_id: asked.sessionId });
      const next = (await seen(u.id)).at(-1);
      expect(next?.messages.slice(0, -1).flatMap((m) => (Array.isArray(m.content) ? m.content.map((b) => b.type) : []))).not.toContain("search_result");
    },
    T,
  );
});
