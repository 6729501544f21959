/**
 * The reads of fact search: the candidate lists ranking.ts orders. Full text ranks by FTS5 BM25 inside the
 * user's partition; the vector half by cosine similarity. Every read is filtered to user_id = me AND
 * (connection_id IN active OR NULL). Read-your-writes: full text reads D1 directly, and the vector index is
 * D1 too (locally) or has a D1 overlay of recent writes (Vectorize).
 */
import { type SQL, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import type { MemoryDeps } from "./deps";
import { needsFiller, type SearchPlan } from "./ranking";
import type { Candidate, Candidates, Scored, SearchInput, VectorCandidate } from "./search-types";
import { stem } from "./text";
import { inJson } from "./vector";

const CANDIDATES = 100;

/** An FTS5 query matching any of the words (quoted: no operator injection); null for none. */
export const quoted = (ws: readonly string[]): string | null => (ws.length ? ws.map((t) => `"${t}"`).join(" OR ") : null);

const columns = sql`f.id, f.rowid, f.text, f.metadata, f.confidence, f.recall_count, f.last_recalled_at, f.created_at, f.event_at, f.superseded_by`;

function scoped(input: SearchInput): SQL {
  const parts = [
    sql`f.user_id = ${input.userId}`,
    sql`(f.connection_id IS NULL OR f.connection_id IN (SELECT value FROM json_each(${JSON.stringify(input.connectionIds)})))`,
  ];
  if (!input.history) parts.push(sql`f.superseded_by IS NULL`);
  if (input.projectId !== undefined) parts.push(input.projectId ? sql`(f.project_id IS NULL OR f.project_id = ${input.projectId})` : sql`f.project_id IS NULL`);
  if (input.after !== undefined) parts.push(sql`coalesce(f.event_at, f.created_at) >= ${input.after}`);
  if (input.before !== undefined) parts.push(sql`coalesce(f.event_at, f.created_at) < ${input.before}`);
  return sql.join(parts, sql` AND `);
}

/** The user's partition of `facts_fts` (see migration 0005): `facts.owner` is the user id without underscores. */
const ownerToken = (userId: string) => `"${userId.replace(/_/g, "").replace(/"/g, '""')}"`;

function fullText(db: Db, input: SearchInput, terms: string | null): Promise<Scored[]> {
  if (!terms) return Promise.resolve([]);
  const match = `owner : ${ownerToken(input.userId)} AND text : (${terms})`;
  // Ranked inside FTS5 first (its ORDER BY rank LIMIT fast path), then scoped and hydrated. A time filter
  // drops many of the best-ranked rows, so it reads deeper.
  const depth = input.after !== undefined || input.before !== undefined || input.history ? CANDIDATES * 20 : CANDIDATES * 4;
  return db.all<Scored>(sql`SELECT ${columns}, -h.rank AS lexical FROM (SELECT rowid, rank FROM facts_fts WHERE facts_fts MATCH ${match} ORDER BY rank LIMIT ${depth}) h
    JOIN facts f ON f.rowid = h.rowid WHERE ${scoped(input)} ORDER BY h.rank LIMIT ${Math.max(CANDIDATES, input.k * 2)}`);
}

async function vectorSearch(deps: MemoryDeps, input: SearchInput): Promise<{ hits: VectorCandidate[]; tokens: number }> {
  const { vectors, tokens } = await deps.embedder.embed([input.query]);
  const [vector] = vectors;
  if (!vector) return { hits: [], tokens };
  const matches = (await deps.vectors.query(input.userId, vector, CANDIDATES)).filter((m) => m.score >= deps.embedder.minScore);
  if (!matches.length) return { hits: [], tokens };
  const rows = await deps.db.all<Candidate>(
    sql`SELECT ${columns} FROM facts f WHERE ${inJson(
      sql`f.id`,
      matches.map((m) => m.id),
    )} AND ${scoped(input)}`,
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  return {
    hits: matches.flatMap((m) => {
      const c = byId.get(m.id);
      return c ? [{ ...c, cosine: m.score }] : [];
    }),
    tokens,
  };
}

/**
 * The statements of the user's attribute a question asks about ("Where am I based these days?" -> where the
 * user lives), newest first: the current one even when it shares no word with the question, and with `history`
 * the ones it replaced. One range read on the (user_id, slot) index.
 */
function slotFacts(db: Db, input: SearchInput, slot: string): Promise<Candidate[]> {
  return db.all<Candidate>(
    sql`SELECT ${columns} FROM facts f WHERE f.slot = ${slot} AND ${scoped(input)} ORDER BY coalesce(f.event_at, f.created_at) DESC LIMIT 10`,
  );
}

/** Document frequencies above this count as this: rarity barely changes past it, and counting stops there. */
const DF_CAP = 200;

/** How many of this user's own facts (their partition of the full-text index) contain each word, by stem. */
async function docFrequency(db: Db, userId: string, plan: SearchPlan): Promise<Map<string, number>> {
  if (!plan.stems.size) return new Map();
  const owner = ownerToken(userId);
  // Words are letters and digits only (see `words`), so quoting them needs no escaping.
  const rows = await db.all<{ term: string; doc: number }>(
    sql`SELECT value AS term, (SELECT count(*) FROM (SELECT 1 FROM facts_fts WHERE facts_fts MATCH ${`owner : ${owner} AND text : "`} || value || '"' LIMIT ${DF_CAP})) AS doc
      FROM json_each(${JSON.stringify([...plan.stems.values()])})`,
  );
  return new Map(rows.map((r) => [stem(r.term), r.doc]));
}

/** The root cause in one short line: audit rows and API answers carry no query text. */
export function briefError(err: unknown): string {
  const root = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  return (root instanceof Error ? root.message : String(root)).split("\n")[0]?.slice(0, 200) ?? "unknown error";
}

/** Every candidate list the plan calls for. A vector index that fails degrades the search, it does not fail it. */
export async function readCandidates(deps: MemoryDeps, plan: SearchPlan): Promise<Candidates> {
  const { input, mode } = plan;
  let degraded: string | null = null;
  const [text, expanded, vector, df, slotted] = await Promise.all([
    mode === "vector" ? [] : fullText(deps.db, input, quoted(plan.terms)),
    mode === "vector" ? [] : fullText(deps.db, input, quoted(plan.extra)),
    mode === "fulltext"
      ? { hits: [], tokens: 0 }
      : vectorSearch(deps, input).catch((err: unknown) => {
          degraded = `vector search unavailable: ${briefError(err)}`;
          return { hits: [], tokens: 0 };
        }),
    docFrequency(deps.db, input.userId, plan),
    plan.slot ? slotFacts(deps.db, input, plan.slot) : [],
  ]);
  const filler = needsFiller(plan, text, expanded) ? await fullText(deps.db, input, quoted(plan.everyWord)) : [];
  return { text, expanded, filler, slotted, vector: vector.hits, docFrequency: df, embeddingTokens: vector.tokens, degraded };
}
