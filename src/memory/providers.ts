/**
 * Context providers, in injection order: working memory, scaffold, learned info, retrieved
 * facts. The first three are one D1 read shared by the turn; retrieval is hybrid search on the turn's
 * query, whose reads join the same batch. Retrieved facts are evidence (documents the model cites), not
 * prompt text. A provider that throws (e.g. the vector index is down) is left out and the audit row says why.
 */
import { and, eq } from "drizzle-orm";
import { type ContextEvidence, type ContextProvider, contextRead, type PromptContext } from "../core/context";
import { deferOrRun } from "../core/tool";
import { connections, type JsonObject, type ScaffoldKeyMeta, users } from "../db/schema";
import { clamp } from "../lib/sanitize";
import { memoryDeps } from "./deps";
import { recallWrites, recordRecall, searchFacts } from "./retrieval";
import { keyMeta } from "./tiers";

export const SCAFFOLD_CHARS = 4000;
export const LEARNED_INFO_CHARS = 3000;
export const RETRIEVED_FACTS = 5;
const FACT_CHARS = 400;

type MemoryView = {
  workingMemory: string;
  scaffold: JsonObject;
  /** The present keys' entries (keys the user removed are not keys). */
  scaffoldMeta: Record<string, ScaffoldKeyMeta>;
  learnedInfo: JsonObject;
  updatedAt: number;
  connections: { id: string; name: string; learnedInfo: JsonObject }[];
};

const views = new WeakMap<PromptContext, Promise<MemoryView>>();

/** One read per turn, shared by the providers (they run concurrently on the same context). */
function view(ctx: PromptContext): Promise<MemoryView> {
  const hit = views.get(ctx);
  if (hit) return hit;
  const load = contextRead(ctx, [
    ctx.db
      .select({
        workingMemory: users.workingMemory,
        scaffold: users.scaffold,
        scaffoldMeta: users.scaffoldMeta,
        learnedInfo: users.learnedInfo,
        updatedAt: users.updatedAt,
      })
      .from(users)
      .where(eq(users.id, ctx.userId)),
    ctx.db
      .select({ id: connections.id, name: connections.name, learnedInfo: connections.learnedInfo })
      .from(connections)
      .where(and(eq(connections.userId, ctx.userId), eq(connections.active, true))),
  ]).then(([[user], conns]) => ({
    workingMemory: user?.workingMemory ?? "",
    scaffold: user?.scaffold ?? {},
    scaffoldMeta: user ? keyMeta(user.scaffold, user.scaffoldMeta) : {},
    learnedInfo: user?.learnedInfo ?? {},
    updatedAt: user?.updatedAt ?? 0,
    connections: conns,
  }));
  views.set(ctx, load);
  return load;
}

/** Drops the least certain, then oldest, keys until the scaffold fits its share of the prompt. */
export function fitScaffold(scaffold: JsonObject, meta: Record<string, ScaffoldKeyMeta>, maxChars: number): JsonObject {
  const keys = Object.keys(scaffold).sort(
    (a, b) => (meta[b]?.confidence ?? 0.7) - (meta[a]?.confidence ?? 0.7) || (meta[b]?.updated_at ?? 0) - (meta[a]?.updated_at ?? 0),
  );
  const out: JsonObject = {};
  for (const key of keys) {
    const value = scaffold[key];
    if (value === undefined) continue;
    out[key] = value;
    if (JSON.stringify(out).length > maxChars) delete out[key];
  }
  return out;
}

export const workingMemoryProvider: ContextProvider = {
  name: "working_memory",
  async build(ctx) {
    const v = await view(ctx);
    if (!v.workingMemory.trim()) return null;
    return { name: "working_memory", title: "Your Context (working memory)", body: v.workingMemory, ids: [`working_memory@${v.updatedAt}`] };
  },
};

export const scaffoldProvider: ContextProvider = {
  name: "scaffold",
  async build(ctx) {
    const v = await view(ctx);
    const fitted = fitScaffold(v.scaffold, v.scaffoldMeta, SCAFFOLD_CHARS);
    const keys = Object.keys(fitted);
    if (!keys.length) return null;
    const unsure = keys.filter((k) => (v.scaffoldMeta[k]?.confidence ?? 0.7) < 0.6);
    const note = unsure.length ? `\nLess certain: ${unsure.join(", ")}` : "";
    return { name: "scaffold", title: "Structured Data (what you know about the user)", body: `${JSON.stringify(fitted)}${note}`, ids: keys };
  },
};

export const learnedInfoProvider: ContextProvider = {
  name: "learned_info",
  async build(ctx) {
    const v = await view(ctx);
    // Every active connection is listed, even with nothing learned yet: the model needs its id to save to it.
    const perConnection = v.connections;
    const hasUser = Object.keys(v.learnedInfo).length > 0;
    if (!hasUser && !perConnection.length) return null;
    const body: JsonObject = {};
    if (hasUser) body.user = v.learnedInfo;
    const included: string[] = [];
    const listed: JsonObject = {};
    for (const c of perConnection) {
      listed[`${c.name} (${c.id})`] = c.learnedInfo;
      if (JSON.stringify({ ...body, connections: listed }).length > LEARNED_INFO_CHARS) {
        delete listed[`${c.name} (${c.id})`];
        break;
      }
      included.push(c.id);
    }
    if (included.length) body.connections = listed;
    if (!hasUser && !included.length) return null;
    return { name: "learned_info", title: "Learned Info", body: JSON.stringify(body), ids: [...(hasUser ? ["user"] : []), ...included] };
  },
};

export const retrievedFactsProvider: ContextProvider = {
  name: "retrieved_facts",
  async build(ctx): Promise<ContextEvidence | null> {
    if (!ctx.query.trim()) return null;
    const deps = memoryDeps(ctx.env, ctx.config, ctx.db);
    // Its reads join the turn's one batch: nothing is awaited before they are queued.
    const found = await searchFacts(
      deps,
      { userId: ctx.userId, query: ctx.query, k: RETRIEVED_FACTS, connectionIds: "active", projectId: ctx.projectId },
      ctx.read,
    );
    // Without the vector half the block would silently change meaning; leave it out and say why.
    if (found.degraded) throw new Error(found.degraded);
    const recalled = found.results.map((r) => r.id);
    // Counted in the turn's bookkeeping batch when the caller takes writes, else deferred or written now.
    if (ctx.write) ctx.write(recallWrites(deps, ctx.userId, recalled, found.embeddingTokens));
    else await deferOrRun(ctx, () => recordRecall(deps, ctx.userId, recalled, found.embeddingTokens));
    if (!found.results.length) return null;
    // The id is in each document's source (engram:fact:<id>): the model names facts by it (forget_memory).
    const documents = found.results.map((r) => ({
      kind: "fact",
      id: r.id,
      title: r.supersededBy ? "Remembered fact (since replaced)" : "Remembered fact",
      text: clamp(r.text, FACT_CHARS),
    }));
    return { name: "retrieved_facts", documents };
  },
};

export const memoryProviders: readonly ContextProvider[] = [workingMemoryProvider, scaffoldProvider, learnedInfoProvider, retrievedFactsProvider];
