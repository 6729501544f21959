/**
 * The memory tools the model calls. Observations go onto the event bus and are
 * consolidated in the background; connection learned info is written directly.
 */
import { and, eq, inArray } from "drizzle-orm";
import { z } from "zod";
import { logWithheld, matchedPattern, WITHHELD_NOTE } from "../consent/sensitive";
import { readConsent } from "../consent/settings";
import type { TurnScope } from "../core/context";
import { deferOrRun, defineTool, ReasonText, type ToolContext, type ToolResult, TURN_BASE } from "../core/tool";
import { facts, type JsonObject, users } from "../db/schema";
import { SESSION_GONE } from "../db/session-live";
import { AppError, describeFailure } from "../lib/errors";
import { clamp } from "../lib/sanitize";
import { removedSentences } from "../lib/sentences";
import { learnAboutConnection } from "./connections";
import { memoryDeps } from "./deps";
import { editTiers } from "./edit";
import { INTERACTIVE_TYPES, type ObservationInput, recordObservations } from "./events";
import { deleteFacts } from "./facts";
import { canonicalJson, uuidv5 } from "./ids";
import { readTiers } from "./inspect";
import { recordRecall, searchAnswer, searchFacts } from "./retrieval";

/** What the model is told of an observation a sensitive pattern kept out (it must not say it will remember it). */
export const WITHHELD = WITHHELD_NOTE;

/** A runaway model must not flood the bus within one turn. */
export const OBSERVATIONS_PER_TURN = 10;

const source = (ctx: ToolContext, kind: "interactive" | "autonomous"): JsonObject => ({
  source: kind,
  session_id: ctx.sessionId,
  ...(ctx.projectId ? { project_id: ctx.projectId } : {}),
  ...(ctx.siteId ? { site_id: ctx.siteId } : {}),
});

async function observe(ctx: ToolContext, inputs: ObservationInput[]): Promise<ToolResult> {
  const used = ctx.turn.get("memory.observations") ?? 0;
  if (used + inputs.length > OBSERVATIONS_PER_TURN) {
    return { content: `At most ${OBSERVATIONS_PER_TURN} observations per turn; nothing was recorded.`, isError: true };
  }
  ctx.turn.set("memory.observations", used + inputs.length);
  // Keyed by session, turn and content: a turn retried after the model failed past this call (its history is
  // rolled back, this write is not) records the same observation once, answering with the stored event; the same
  // words in a later turn ("blue", "green", "blue again") are a new observation.
  const key = `obs:${await uuidv5(canonicalJson([ctx.sessionId, ctx.turn.get(TURN_BASE) ?? null, inputs]))}`;
  const deps = memoryDeps(ctx.env, ctx.config, ctx.db);
  const { events, budget, withheld } = await recordObservations(deps, { id: ctx.userId, plan: ctx.plan }, inputs, key, ctx.sessionId);
  if (!events.length) return { content: withheld ? WITHHELD : SESSION_GONE, isError: true };
  for (const e of events) ctx.emit({ type: "memory_saved", target: "observation", entry_id: e.id });
  const left = withheld ? ` ${withheld} more: ${WITHHELD}` : "";
  return budget.exhausted
    ? {
        content: `Noted (${events.length}), but today's memory budget is used up: it will be consolidated after ${new Date(budget.resets_at).toISOString()}.${left}`,
      }
    : { content: `Noted (${events.map((e) => e.id).join(", ")}); it will be consolidated into memory shortly.${left}` };
}

export const recordObservation = defineTool({
  name: "record_observation",
  description:
    "Record something durable you learned about the user (a fact, a preference, project details, or a correction " +
    "of something you had wrong). It is consolidated into long-term memory in the background. Use sparingly: " +
    "only for information worth remembering across conversations.",
  input: z.object({
    content: z.string().trim().min(1).max(2000).describe("The observation, self-contained"),
    category: z.enum(INTERACTIVE_TYPES),
  }),
  runs: "server",
  needsApproval: false,
  remembers: { kinds: ["facts"] },
  describe: (input) => `Remembering a ${input.category.replace("_", " ")}`,
  run: (ctx, input) => observe(ctx, [{ type: input.category, content: input.content, sourceMetadata: source(ctx, "interactive") }]),
});

export const updateUserContext = defineTool({
  name: "update_user_context",
  description:
    "For autonomous runs: submit structured profile updates (scaffold_updates: key -> value) and/or learned " +
    "facts (persistent_info_additions). Each becomes an observation consolidated in the background.",
  input: z
    .object({
      scaffold_updates: z.record(z.string().min(1).max(100), z.json()).optional(),
      persistent_info_additions: z.array(z.string().trim().min(1).max(2000)).max(OBSERVATIONS_PER_TURN).optional(),
    })
    .refine(
      (v) => Object.keys(v.scaffold_updates ?? {}).length + (v.persistent_info_additions ?? []).length > 0,
      "give scaffold_updates or persistent_info_additions",
    ),
  runs: "server",
  needsApproval: false,
  remembers: { kinds: ["facts"] },
  describe: () => "Updating what I know about you",
  run: (ctx, input) =>
    observe(ctx, [
      ...Object.entries(input.scaffold_updates ?? {}).map(([key, value]) => ({
        type: "scaffold_update",
        content: JSON.stringify({ [key]: value }),
        sourceMetadata: source(ctx, "autonomous"),
      })),
      ...(input.persistent_info_additions ?? []).map((content) => ({ type: "learned_fact", content, sourceMetadata: source(ctx, "autonomous") })),
    ]),
});

export const updateConnectionContext = defineTool({
  name: "update_connection_context",
  description:
    "Save what you learned about one of the user's tool connections (e.g. its default project), by connection " +
    "id from the Learned Info section. Keys merge into what is stored; null removes a key.",
  input: z.object({
    connection_id: z.string().min(1).max(100),
    learned_info: z.record(z.string().min(1).max(100), z.json()),
  }),
  runs: "server",
  needsApproval: false,
  remembers: { kinds: ["facts"] },
  describe: () => "Saving what I learned about this connection",
  async run(ctx, input) {
    const rule = matchedPattern((await readConsent(ctx.db, ctx.userId)).sensitive, JSON.stringify(input.learned_info));
    if (rule) {
      await logWithheld(ctx.db, ctx.userId, ctx.sessionId, [{ kind: "facts", why: "pattern", rule: rule.text, via: "chat", what: "connection info" }]);
      return { content: WITHHELD, isError: true };
    }
    try {
      const updated = await learnAboutConnection(ctx.db, ctx.userId, input.connection_id, input.learned_info, ctx.sessionId);
      ctx.emit({ type: "memory_saved", target: "connection", entry_id: updated.id });
      return { content: `Saved to connection ${updated.name}: ${JSON.stringify(updated.learnedInfo)}` };
    } catch (err) {
      if (err instanceof AppError) return { content: err.message, isError: true };
      throw err;
    }
  },
});

export const searchMemory = defineTool({
  name: "search_memory",
  description:
    "Search the user's long-term facts with your own words when the facts recalled for the turn (search results " +
    "with source engram:fact:<id>) do not answer (try the thing asked about, and other words for it). Each " +
    "result gives its id. Set history to see statements since replaced (where the user lived or worked before).",
  input: z.object({
    query: z.string().trim().min(1).max(2000),
    k: z.number().int().min(1).max(20).default(5),
    history: z.boolean().default(false).describe("Include statements a newer one has replaced, marked as such"),
    current: z.boolean().default(false).describe("The question is about how things stand now: of near-equal matches, prefer the latest"),
  }),
  runs: "server",
  needsApproval: false,
  describe: (input) => `Searching memory for ${clamp(input.query, 60)}`,
  async run(ctx, input) {
    const deps = memoryDeps(ctx.env, ctx.config, ctx.db);
    const found = await searchFacts(deps, {
      userId: ctx.userId,
      query: input.query,
      k: input.k,
      history: input.history,
      preferLatest: input.current || undefined,
      connectionIds: "active",
      projectId: ctx.projectId,
    });
    // The query's embedding is usage; a search is not a recall (no fact counts it), as for the API's search.
    await deferOrRun(ctx, () => recordRecall(deps, ctx.userId, [], found.embeddingTokens));
    return { content: `${found.degraded ? "Full-text matches only (the vector index is unavailable).\n" : ""}${searchAnswer(found)}` };
  },
});

const MAX_FORGET = 20;

/** " and 2 earlier statements they had replaced": what forgetting took with the asked-for facts. */
const replaced = (earlier: number, asked: number) => ` and ${earlier} earlier statement${earlier === 1 ? "" : "s"} ${asked === 1 ? "it" : "they"} had replaced`;

/** The listed keys the user's profile (scaffold) holds now. */
async function profileKeysHeld(ctx: ToolContext, keys: readonly string[]): Promise<string[]> {
  const [row] = await ctx.db.select({ scaffold: users.scaffold }).from(users).where(eq(users.id, ctx.userId));
  return keys.filter((k) => Object.hasOwn(row?.scaffold ?? {}, k));
}

/** The texts of the user's facts among `ids`, by id (read before they go, so the reply can say what went). */
async function factTexts(ctx: ToolContext, ids: readonly string[]): Promise<Map<string, string>> {
  const rows = await ctx.db
    .select({ id: facts.id, text: facts.text })
    .from(facts)
    .where(and(eq(facts.userId, ctx.userId), inArray(facts.id, [...ids])));
  return new Map(rows.map((r) => [r.id, r.text]));
}

const quoted = (texts: readonly string[]) => texts.map((t) => `“${clamp(t, 200)}”`).join(", ");

export const forgetMemory = defineTool({
  name: "forget_memory",
  description:
    "Forget what the user asks you to forget, everywhere it is kept: facts by id (the <id> of a recalled fact's " +
    "source engram:fact:<id>, or from search_memory; each goes with the earlier statements it had replaced), " +
    "profile keys (from Structured Data), and, when the working-memory narrative (Your Context) mentions it, " +
    "working_memory: the whole narrative rewritten without it, everything else word for word. Only name a fact " +
    "that is about what the user asked to forget: a fact that also holds something else goes whole. The user sees " +
    "and approves every call before anything is removed; what is forgotten cannot be brought back.",
  input: z
    .object({
      fact_ids: z.array(z.string().min(1).max(100)).max(MAX_FORGET).default([]),
      profile_keys: z.array(z.string().min(1).max(100)).max(MAX_FORGET).default([]),
      working_memory: z.string().max(20_000).optional().describe("The working-memory narrative without what is forgotten (omit when it does not mention it)"),
      reason: ReasonText.min(1).describe("What the user asked you to forget, in their words"),
    })
    .refine((v) => v.fact_ids.length + v.profile_keys.length > 0 || v.working_memory !== undefined, "give fact_ids, profile_keys or working_memory"),
  runs: "server",
  // Removing personal data for good: never on the model's word alone (a prompt injection could ask for it), and
  // each time the user's own answer (an earlier "always" does not cover it).
  needsApproval: "every call",
  describe: (input) => `Forgetting what you asked: ${input.reason}`,
  async run(ctx, input) {
    const deps = memoryDeps(ctx.env, ctx.config, ctx.db);
    const said: string[] = [];
    if (input.fact_ids.length) {
      const texts = await factTexts(ctx, input.fact_ids);
      const { forgotten, missing } = await deleteFacts(deps, ctx.userId, input.fact_ids);
      const asked = forgotten.filter((id) => input.fact_ids.includes(id));
      const earlier = forgotten.length - asked.length;
      if (asked.length)
        said.push(
          `Forgot ${asked.length} fact${asked.length === 1 ? "" : "s"} from long-term memory: ${quoted(asked.map((id) => texts.get(id) ?? id))}` +
            `${earlier ? replaced(earlier, asked.length) : ""}.`,
        );
      if (missing.length) said.push(`No fact of the user's has the id ${missing.join(", ")}: nothing was removed for ${missing.length === 1 ? "it" : "them"}.`);
    }
    const held = input.profile_keys.length ? await profileKeysHeld(ctx, input.profile_keys) : [];
    const absent = input.profile_keys.filter((k) => !held.includes(k));
    if (held.length || input.working_memory !== undefined) {
      try {
        // One revision of the two injected tiers, remembered as a forget: a restore from before it asks first.
        const before = input.working_memory === undefined ? "" : (await readTiers(ctx.db, ctx.userId)).workingMemory;
        await editTiers(ctx.db, ctx.userId, { forget: { keys: held, ...(input.working_memory === undefined ? {} : { workingMemory: input.working_memory }) } });
        if (held.length) said.push(`Removed ${held.join(", ")} from the profile.`);
        const gone = input.working_memory === undefined ? [] : removedSentences(before, input.working_memory);
        if (gone.length) said.push(`Removed from working memory: ${quoted(gone)}.`);
      } catch (err) {
        // The facts above are gone already: say so, rather than the generic "nothing was changed".
        if (!(err instanceof AppError)) console.error(JSON.stringify({ tool: "forget_memory", error: describeFailure(err) }));
        const why = err instanceof AppError ? err.message : "an unexpected error";
        return { content: [...said, `The profile and working memory were not changed (${why}); ask again in a moment.`].join(" "), isError: true };
      }
    }
    if (absent.length) said.push(`The profile has no key ${absent.join(", ")}.`);
    return { content: said.join(" ") || "Nothing matched: nothing was removed." };
  },
});

export const memoryTools = [recordObservation, updateUserContext, updateConnectionContext, searchMemory, forgetMemory];

/** Observations the chat core found (facts stated in turns it summarised): recorded on the bus like the tool's. */
export async function observeFromCore(scope: TurnScope, observations: readonly { content: string; category: string }[]): Promise<void> {
  // No one can approve these in `ask`, and `off` records nothing.
  if (!observations.length || (await readConsent(scope.db, scope.userId)).modes.facts !== "auto") return;
  const sourceMetadata: JsonObject = { source: "session_summary", session_id: scope.sessionId, ...(scope.projectId ? { project_id: scope.projectId } : {}) };
  const inputs = observations.slice(0, OBSERVATIONS_PER_TURN).map((o) => ({ type: o.category, content: o.content, sourceMetadata }));
  await recordObservations(memoryDeps(scope.env, scope.config, scope.db), { id: scope.userId, plan: scope.plan }, inputs, undefined, scope.sessionId);
}
