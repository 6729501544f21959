/**
 * The memory processor: for one user, the pending observations, the current working
 * memory and scaffold, and related facts go to the background model in one structured-output call; the
 * validated output is applied in one D1 batch guarded by the user's memory revision, and only then are
 * the events marked processed. A concurrent or repeated run of the same events cannot commit twice.
 * Learned facts count against the plan's facts quota like imported ones: a run that would pass it applies
 * nothing, and its observations become `failed` with the reason (kept, retryable once there is room).
 */
import { and, asc, eq, isNotNull, isNull, sql } from "drizzle-orm";
import type { Config } from "../config/config";
import { quotaMessage } from "../config/limits";
import { logWithheld, matchedPattern, neverRemember, type Withheld } from "../consent/sensitive";
import { readConsent } from "../consent/settings";
import { changes, isConstraintError, returnedIds, runStatements } from "../db/batch";
import { type Db, newId } from "../db/client";
import { inJson } from "../db/in-json";
import { insertWhere } from "../db/insert-where";
import {
  connections,
  contextEvents,
  facts,
  type Json,
  type JsonObject,
  memoryRuns,
  projects,
  type ScaffoldKeyMeta,
  type ScaffoldMeta,
  type SensitiveRule,
  users,
} from "../db/schema";
import { escapePromptJson } from "../lib/prompt-text";
import { cleanMemoryTextOrEmpty } from "../lib/sanitize";
import { capWords, wordCount } from "../lib/text";
import type { ModelClient } from "../model/anthropic";
import { callStructured } from "../model/structured";
import { recordUsage } from "../usage/record";
import { consolidationBudget, deferredReason } from "./budget";
import { cleanJsonObject, cleanKey } from "./clean";
import {
  CONSOLIDATION_SYSTEM,
  type ConsolidationInput,
  type ConsolidationOutput,
  consolidationFormat,
  consolidationPrompt,
  type FactItem,
  INPUT_CLOSE,
  INPUT_OPEN,
  MalformedOutput,
  mergeScaffold,
  parseConsolidationOutput,
  WORKING_MEMORY_WORDS,
} from "./consolidation-schema";
import type { MemoryDeps } from "./deps";
import type { EventRow } from "./events";
import { ownsAll } from "./facts";
import { type FactInput, factStatements, indexFacts, prepareFacts, withinFactQuota } from "./facts-write";
import { canonicalJson } from "./ids";
import { briefError, searchFacts } from "./retrieval";
import { dropOldCopies, isTombstone, keyMeta, type Tiers } from "./tiers";

export const BATCH_EVENTS = 50;
/** How many of the user's current keys the model is shown for reuse. */
const KNOWN_KEYS = 100;

export type ConsolidationModel = { client: ModelClient; model: string; prices?: Config["modelPrices"]; offline?: boolean };
export type ConsolidationOutcome = { status: "applied" | "nothing" | "deferred" | "refused"; events: number; more: string[]; rev?: number };

/** Another run committed this revision first; retrying re-reads the new state. */
export class ConsolidationConflict extends Error {
  override name = "ConsolidationConflict";
}

async function loadState(deps: MemoryDeps, userId: string) {
  const { db } = deps;
  const [user, rev, pending, conns, keys] = await db.batch([
    db.select().from(users).where(eq(users.id, userId)),
    db
      .select({ rev: sql<number>`coalesce(max(${memoryRuns.rev}), 0)` })
      .from(memoryRuns)
      .where(eq(memoryRuns.userId, userId)),
    db
      .select()
      .from(contextEvents)
      .where(and(eq(contextEvents.userId, userId), eq(contextEvents.status, "pending")))
      .orderBy(asc(contextEvents.createdAt))
      .limit(BATCH_EVENTS + 100),
    db.select({ id: connections.id, active: connections.active }).from(connections).where(eq(connections.userId, userId)),
    db
      .selectDistinct({ key: facts.key })
      .from(facts)
      .where(and(eq(facts.userId, userId), isNotNull(facts.key), isNull(facts.supersededBy)))
      .limit(KNOWN_KEYS),
  ]);
  return {
    user: user[0],
    rev: rev[0]?.rev ?? 0,
    events: pending.slice(0, BATCH_EVENTS),
    rest: pending.slice(BATCH_EVENTS).map((e) => e.id),
    connections: conns,
    knownKeys: keys.flatMap((k) => (k.key ? [k.key] : [])),
  };
}

/** The keys of the related facts (search hits carry none). */
async function keysOf(db: Db, userId: string, ids: readonly string[]): Promise<Map<string, string>> {
  if (!ids.length) return new Map();
  const rows = await db
    .select({ id: facts.id, key: facts.key })
    .from(facts)
    .where(and(eq(facts.userId, userId), inJson(facts.id, ids), isNotNull(facts.key)));
  return new Map(rows.flatMap((r) => (r.key ? [[r.id, r.key]] : [])));
}

/**
 * The consolidation prompt: the input's JSON escaped inside its block (`escapePromptJson`), so no observation, fact,
 * metadata or profile string can close the block or hide text in it, and the values read back unchanged. JSON has no
 * `<` outside its strings, so the block's own tags are the only ones left.
 */
export function renderConsolidationPrompt(input: ConsolidationInput): string {
  const framed = consolidationPrompt(input);
  return `${INPUT_OPEN}${escapePromptJson(framed.slice(INPUT_OPEN.length, framed.length - INPUT_CLOSE.length))}${INPUT_CLOSE}`;
}

const callModel = (model: ConsolidationModel, userId: string, prompt: string) =>
  callStructured({ client: model.client, model: model.model, system: CONSOLIDATION_SYSTEM, prompt, format: consolidationFormat, maxTokens: 8192, userId });

function scaffoldMeta(
  before: JsonObject,
  after: JsonObject,
  meta: Record<string, ScaffoldKeyMeta>,
  stated: Record<string, number>,
  fallback: number,
  now: number,
): { meta: ScaffoldMeta; changed: string[] } {
  const next: ScaffoldMeta = {};
  const changed: string[] = [];
  for (const key of Object.keys(after)) {
    const isChanged = canonicalJson(before[key]) !== canonicalJson(after[key]);
    if (isChanged) changed.push(key);
    const prev = meta[key];
    const confidence = stated[key] ?? (isChanged || !prev ? fallback : prev.confidence);
    // Who set a key is kept while it stays as they set it.
    next[key] = isChanged || !prev ? { confidence, updated_at: now } : { ...prev, confidence };
  }
  return { meta: next, changed };
}

export async function consolidateUser(deps: MemoryDeps, model: ConsolidationModel, userId: string): Promise<ConsolidationOutcome> {
  const { db } = deps;
  const state = await loadState(deps, userId);
  const { user } = state;
  if (!user || !state.events.length) return { status: "nothing", events: 0, more: [] };
  const consent = await readConsent(db, userId);
  if (consent.modes.facts === "off") {
    // Observations recorded before the user turned facts off: kept, not learned from, retryable once it is back on.
    const ids = [...state.events.map((e) => e.id), ...state.rest];
    await failEvents(db, userId, ids, "consent_off: remembering facts and observations is turned off in your settings");
    await logWithheld(db, userId, null, [{ kind: "facts", why: "consent", rule: "off", via: "consolidation", what: `${ids.length} observations` }]);
    return { status: "refused", events: ids.length, more: [] };
  }
  const events = await withoutPatterns(db, userId, consent.sensitive, state.events);
  if (!events.length) return { status: "nothing", events: 0, more: state.rest };
  const eventIds = events.map((e) => e.id);
  const budget = await consolidationBudget(db, userId, user.plan, deps.now());
  if (budget.exhausted) {
    const ids = [...eventIds, ...state.rest];
    await db
      .update(contextEvents)
      .set({ status: "deferred", error: deferredReason(budget) })
      .where(and(eq(contextEvents.userId, userId), inJson(contextEvents.id, ids), eq(contextEvents.status, "pending")));
    return { status: "deferred", events: ids.length, more: [] };
  }
  const cap = deps.quotas?.[user.plan].facts;
  const refuse = async (ids: readonly string[], more: string[] = []): Promise<ConsolidationOutcome> => {
    await failEvents(db, userId, ids, `quota_exceeded: ${quotaMessage("facts", user.plan, cap ?? 0, "; these observations were not consolidated")}`);
    return { status: "refused", events: ids.length, more };
  };
  // A user already at the cap would spend a model call on a run that can only be refused.
  if (cap !== undefined && (await db.$count(facts, eq(facts.userId, userId))) >= cap) return refuse([...eventIds, ...state.rest]);
  try {
    const active = state.connections.filter((c) => c.active).map((c) => c.id);
    const related = await searchFacts(deps, {
      userId,
      query: events
        .map((e) => e.content)
        .join("\n")
        .slice(0, 2000),
      k: 10,
      connectionIds: active,
    });
    const keys = await keysOf(
      db,
      userId,
      related.results.map((r) => r.id),
    );
    const prompt = renderConsolidationPrompt({
      working_memory: user.workingMemory,
      scaffold: user.scaffold,
      related_facts: related.results.map((r) => {
        const key = keys.get(r.id);
        return { id: r.id, text: r.text, confidence: r.confidence, ...(key ? { key } : {}) };
      }),
      known_keys: state.knownKeys,
      observations: events.map((e) => ({ id: e.id, type: e.eventType, content: e.content, source: e.sourceMetadata })),
      ...(consent.sensitive.length ? { never_remember: neverRemember(consent.sensitive) } : {}),
    });
    const reply = await callModel(model, userId, prompt);
    // Spent whether or not the output is usable: the budget counts it either way.
    await recordUsage(db, { userId, kind: "consolidation", model: model.model, usage: reply.usage, prices: model.prices, offline: model.offline });
    if (reply.error) throw new MalformedOutput(`no consolidation: ${reply.error.message}`);
    const output = withoutSensitive(parseConsolidationOutput(reply.value), consent.sensitive, user.workingMemory, eventIds);

    const now = deps.now();
    const corrected = events.some((e) => e.eventType === "correction");
    // The model's output is cleaned as the user's own edit would be (invisible characters, secrets) before it is merged.
    const scaffold = mergeScaffold(user.scaffold, cleanJsonObject(output.updated_scaffold));
    const stated = Object.fromEntries(Object.entries(output.scaffold_confidence ?? {}).map(([k, c]) => [cleanKey(k), c]));
    // A key the user set or removed after every observation of this batch was made stays as they left it: an
    // older observation (pending, deferred or retried) does not undo their correction. Later observations can.
    const newest = Math.max(...events.map((e) => e.createdAt));
    const userSince = Object.entries(user.scaffoldMeta).filter(([, m]) => m.by === "user" && m.updated_at >= newest);
    for (const [key, m] of userSince) {
      if (isTombstone(m)) delete scaffold[key];
      else if (key in user.scaffold) scaffold[key] = user.scaffold[key] as Json;
    }
    const present = keyMeta(user.scaffold, user.scaffoldMeta);
    const { meta, changed } = scaffoldMeta(user.scaffold, scaffold, present, stated, corrected ? 0.9 : 0.7, now);
    for (const [key, m] of userSince) if (!isTombstone(m) && key in user.scaffold) meta[key] = m;
    // A removal is remembered while its key stays away (an older observation may yet be retried); a later
    // observation that brings the key back ends it.
    for (const [key, m] of Object.entries(user.scaffoldMeta)) if (isTombstone(m) && !(key in scaffold)) meta[key] = m;
    const owned = new Set(state.connections.map((c) => c.id));
    const sessions = [...new Set(events.flatMap((e) => (typeof e.sourceMetadata.session_id === "string" ? [e.sourceMetadata.session_id] : [])))];
    // Facts of a batch observed within one project belong to it; a batch spanning projects stays at user level,
    // and so does one naming a project that is not the user's (an observation's metadata is the caller's word).
    const projectsSeen = new Set(events.map((e) => (typeof e.sourceMetadata.project_id === "string" ? e.sourceMetadata.project_id : null)));
    const seen = projectsSeen.size === 1 ? ([...projectsSeen][0] ?? null) : null;
    const projectId = seen && (await ownsAll(db, projects, userId, [seen])) ? seen : null;
    const inputs: FactInput[] = output.facts_to_embed.map((f) => {
      const item: Exclude<FactItem, string> = typeof f === "string" ? { text: f } : f;
      return {
        text: item.text,
        confidence: item.confidence ?? (corrected ? 0.9 : 0.7),
        key: item.key,
        supersedes: item.supersedes,
        connectionId: item.connection_id && owned.has(item.connection_id) ? item.connection_id : null,
        projectId,
        source: "system_learned",
        metadata: { event_ids: eventIds, session_ids: sessions },
      };
    });
    const prepared = await prepareFacts(userId, inputs);
    // Every statement carries the same quota guard (its value does not change as the batch writes), so the
    // run is applied whole or not at all.
    const guarded = cap !== undefined && prepared.length > 0;
    const quota = guarded
      ? withinFactQuota(
          userId,
          prepared.map((p) => p.id),
          cap,
        )
      : sql`true`;
    const writes = factStatements(deps, userId, prepared, { maxFacts: guarded ? cap : undefined });
    const rev = state.rev + 1;
    const workingMemory = capWords(cleanMemoryTextOrEmpty(output.updated_working_memory), WORKING_MEMORY_WORDS);
    const tiers: Tiers = { workingMemory, scaffold, scaffoldMeta: meta };
    const results = await runStatements(db, [
      // First, so that a second run based on the same revision fails here and nothing of it is applied.
      insertWhere(
        db,
        memoryRuns,
        {
          id: newId("run"),
          userId,
          rev,
          kind: "consolidation",
          eventIds,
          summary: { facts: prepared.map((p) => p.id), scaffold_changed: changed, working_memory_words: wordCount(workingMemory) },
          model: model.model,
          inputTokens: reply.usage.input_tokens,
          outputTokens: reply.usage.output_tokens,
          ...tiers,
          createdAt: now,
        },
        quota,
      ),
      db
        .update(users)
        .set({ ...tiers, updatedAt: now })
        .where(and(eq(users.id, userId), quota)),
      ...writes.statements,
      db
        .update(contextEvents)
        .set({ status: "processed", processed: true, processedAt: now, error: null })
        .where(and(eq(contextEvents.userId, userId), inJson(contextEvents.id, eventIds), eq(contextEvents.status, "pending"), quota)),
      dropOldCopies(db, userId, rev, quota),
    ]).catch((err: unknown) => {
      if (isConstraintError(err, "memory_runs")) throw new ConsolidationConflict(`memory revision ${rev} was committed by another run`);
      throw err;
    });
    if (guarded && changes(results[0]) === 0) return refuse(eventIds, state.rest);
    const superseded = writes.supersedingAt.flatMap((i) => returnedIds(results[i + 2]));
    await indexFacts(deps, userId, prepared, superseded);
    await logWithheld(db, userId, null, output.withheldLog);
    return { status: "applied", events: events.length, more: state.rest, rev };
  } catch (err) {
    const message = `${err instanceof Error ? err.name : "Error"}: ${briefError(err)}`;
    await db
      .update(contextEvents)
      .set({ attempts: sql`${contextEvents.attempts} + 1`, error: message.slice(0, 500) })
      .where(and(eq(contextEvents.userId, userId), inJson(contextEvents.id, eventIds), eq(contextEvents.status, "pending")));
    throw err;
  }
}

/**
 * Observations holding one of the user's sensitive patterns (recorded before the rule, or the rule since widened):
 * marked processed without reaching the model, and logged without their text. The rest go on.
 */
async function withoutPatterns(db: Db, userId: string, rules: readonly SensitiveRule[], events: readonly EventRow[]): Promise<EventRow[]> {
  const held = events.filter((e) => matchedPattern(rules, e.content));
  if (!held.length) return [...events];
  await db
    .update(contextEvents)
    .set({ status: "processed", processed: true, processedAt: Date.now(), error: "withheld: it holds one of your sensitive patterns" })
    .where(
      and(
        eq(contextEvents.userId, userId),
        inJson(
          contextEvents.id,
          held.map((e) => e.id),
        ),
        eq(contextEvents.status, "pending"),
      ),
    );
  await logWithheld(
    db,
    userId,
    null,
    held.map((e) => ({
      kind: "facts",
      why: "pattern",
      rule: matchedPattern(rules, e.content)?.text ?? "",
      via: "consolidation",
      what: "observation",
      ref: e.id,
    })),
  );
  return events.filter((e) => !held.includes(e));
}

/**
 * The model's output with what the user never wants remembered taken out: facts holding a pattern dropped, a
 * narrative holding one replaced by the previous narrative, profile changes holding one left unmade. What the model
 * said it withheld for a topic is logged by the rule it named, when that is one of the user's rules (its words are
 * never logged), and the observation, when it is one of this run's.
 */
function withoutSensitive(out: ConsolidationOutput, rules: readonly SensitiveRule[], previousNarrative: string, eventIds: readonly string[]) {
  const withheldLog: Withheld[] = [];
  const held = (what: string, ...texts: string[]) => {
    const rule = matchedPattern(rules, ...texts);
    if (rule) withheldLog.push({ kind: "facts", why: "pattern", rule: rule.text, via: "consolidation", what });
    return rule !== null;
  };
  const listed = neverRemember(rules);
  for (const w of out.withheld) {
    const i = listed.findIndex((entry) => entry.toLowerCase() === w.rule.trim().toLowerCase());
    const rule = rules[i] ?? rules.find((r) => r.text.toLowerCase() === w.rule.trim().toLowerCase());
    withheldLog.push({
      kind: "facts",
      why: rule?.kind ?? "topic",
      rule: rule?.text ?? "(a rule the model did not name)",
      via: "consolidation",
      what: "observation",
      ...(eventIds.includes(w.observation_id) ? { ref: w.observation_id } : {}),
    });
  }
  const facts = out.facts_to_embed.filter((f) => !held("fact", typeof f === "string" ? f : f.text));
  const narrative = held("working memory update", out.updated_working_memory) ? previousNarrative : out.updated_working_memory;
  const scaffold = Object.fromEntries(Object.entries(out.updated_scaffold).filter(([k, v]) => !held("profile key", k, JSON.stringify(v) ?? "")));
  return { ...out, facts_to_embed: facts, updated_working_memory: narrative, updated_scaffold: scaffold, withheldLog };
}

/** Observations a run will not consolidate: `failed` with the reason, shown to the user and retryable. */
async function failEvents(db: Db, userId: string, ids: readonly string[], error: string): Promise<void> {
  await db
    .update(contextEvents)
    .set({ status: "failed", error: error.slice(0, 500) })
    .where(and(eq(contextEvents.userId, userId), inJson(contextEvents.id, ids), eq(contextEvents.status, "pending")));
}
