/**
 * Production vectors: Vectorize, which is eventually consistent. Recent writes are also kept in a D1
 * overlay (rows of `local_vectors` marked `overlay`) and scored in the Worker, so a fact is found by
 * similarity the moment it is stored; a sweep drops overlay rows once Vectorize has caught up.
 */
import { type SQL, sql } from "drizzle-orm";
import { runStatements } from "../db/batch";
import type { Db } from "../db/client";
import { inJson } from "../db/in-json";
import { literalLimit } from "../db/limit";
import { localVectors } from "../db/schema";
import { type SparseVector, toDense } from "./embed";
import { chunkByJsonSize, matchesOf, type VectorIndex, type VectorMatch, type VectorRecord } from "./vector";

/** How long a write stays in the overlay: comfortably longer than Vectorize's indexing delay. */
export const OVERLAY_WINDOW_MS = 10 * 60_000;

/**
 * The overlay vectors a search scores at most: the user's newest. Scoring costs rows x dimensions in SQL
 * (400 vectors of 768 dimensions, one bulk import, took ~3 s per search; 32 take ~40 ms), while what needs
 * reading one's own writes is the few facts a chat turn stores. Older writes of a large import are found
 * through Vectorize once it has indexed them, and through the full-text index at once.
 */
export const OVERLAY_SCORED = 32;

/**
 * The part of the Vectorize binding engram calls. `wrangler types` names the binding `VectorizeIndex` (the beta's
 * type) while a V2 index's binding is `Vectorize`; both have these methods.
 */
export interface VectorizeBinding {
  upsert(vectors: VectorizeVector[]): Promise<unknown>;
  query(vector: number[], options?: VectorizeQueryOptions): Promise<VectorizeMatches>;
  deleteByIds(ids: string[]): Promise<unknown>;
  describe(): Promise<unknown>;
}

/** Vectorize limits (its Limits page): ids and namespaces of 64 bytes, topK 100 without values or all metadata. */
const MAX_ID_BYTES = 64;
const MAX_TOP_K = 100;
/** Under the 1,000 vectors a Worker may upsert a call, and well under its 100 MB upload at 1,024 dimensions. */
const UPSERT_BATCH = 500;

const encoder = new TextEncoder();
const checkBytes = (what: string, value: string) => {
  if (encoder.encode(value).length > MAX_ID_BYTES) throw new Error(`${what} ${value.slice(0, 80)} is longer than Vectorize's ${MAX_ID_BYTES} bytes`);
};

/**
 * Each user's vectors are a Vectorize namespace named by the user id. A namespace is applied before the vector
 * search, needs no metadata index (which must exist before the first vector is written, or it never covers it),
 * and no filter can be left off by mistake. Its limit: 50,000 namespaces an index on Workers Paid (1,000 on Free),
 * so that many users an index. Metadata keeps the fact's connection, project, type and source, for inspection.
 */
export class VectorizeVectorIndex implements VectorIndex {
  readonly name = "vectorize";
  constructor(
    private readonly index: VectorizeBinding,
    private readonly embedder: { readonly model: string; readonly dimensions: number },
  ) {}

  async upsert(records: VectorRecord[]): Promise<void> {
    for (const r of records) {
      checkBytes("vector id", r.id);
      checkBytes("user id (a Vectorize namespace)", r.userId);
    }
    for (let i = 0; i < records.length; i += UPSERT_BATCH) {
      const batch = records.slice(i, i + UPSERT_BATCH);
      const vectors = batch.map((r) => ({ id: r.id, namespace: r.userId, values: toDense(r.vector, this.embedder.dimensions), metadata: r.metadata }));
      await this.checked("upsert", this.index.upsert(vectors));
    }
  }

  async query(userId: string, vector: SparseVector, topK: number): Promise<VectorMatch[]> {
    checkBytes("user id (a Vectorize namespace)", userId);
    const options = { topK: Math.max(1, Math.min(topK, MAX_TOP_K)), namespace: userId, returnMetadata: "none" } as const;
    const res = await this.checked("query", this.index.query(toDense(vector, this.embedder.dimensions), options));
    return res.matches.map((m) => ({ id: m.id, score: m.score }));
  }

  async matchesQuery(userId: string, vector: SparseVector, topK: number): Promise<SQL> {
    return matchesOf(await this.query(userId, vector, topK));
  }

  // Vector ids are unique across the index (deleteByIds takes no namespace): fact ids are.
  async delete(_userId: string, ids: string[]): Promise<void> {
    for (let i = 0; i < ids.length; i += 1000) await this.checked("delete", this.index.deleteByIds(ids.slice(i, i + 1000)));
  }

  /**
   * Vectorize cannot drop a namespace (neither the binding nor wrangler has such an operation), so an erase deletes
   * by id: the vectors of the facts it deleted. One whose id nobody knows any more stays, unreachable: retrieval
   * hydrates matches from D1, where its fact is gone.
   */
  async erase(userId: string, ids: string[]): Promise<number> {
    await this.delete(userId, ids);
    return ids.length;
  }

  /**
   * Runs a Vectorize call beside a check of the index's dimension (read once per binding and isolate, so it adds
   * no round trip after the first): an index made for another model fails every call with one clear message.
   */
  private async checked<T>(op: string, call: Promise<T>): Promise<T> {
    const [dimensions, result] = await Promise.allSettled([dimensionsOf(this.index), call]);
    const actual = dimensions.status === "fulfilled" ? dimensions.value : undefined;
    const { model, dimensions: expected } = this.embedder;
    if (actual !== undefined && actual !== expected) {
      throw new Error(
        `the Vectorize index has ${actual} dimensions but ${model} makes ${expected}: bind an index created with --dimensions=${expected} --metric=cosine`,
      );
    }
    if (result.status === "fulfilled") return result.value;
    const why: unknown = result.reason;
    throw new Error(`Vectorize ${op} failed: ${why instanceof Error ? why.message : String(why)}`);
  }
}

const described = new WeakMap<VectorizeBinding, Promise<number | undefined>>();

/** The index's dimension as `describe()` reports it (V2: `dimensions`; the beta: `config.dimensions`); undefined if unknown. */
function dimensionsOf(index: VectorizeBinding): Promise<number | undefined> {
  const known = described.get(index);
  if (known) return known;
  const read = index.describe().then(
    (info) => dimensionsIn(info) ?? (info !== null && typeof info === "object" && "config" in info ? dimensionsIn(info.config) : undefined),
    () => {
      // Not known this time: the next call asks again.
      described.delete(index);
      return undefined;
    },
  );
  described.set(index, read);
  return read;
}

const dimensionsIn = (o: unknown) => (o !== null && typeof o === "object" && "dimensions" in o && typeof o.dimensions === "number" ? o.dimensions : undefined);

/** Wraps an eventually consistent index with a read-your-writes overlay of recent vectors in D1. */
export class FreshOverlayIndex implements VectorIndex {
  readonly name: string;
  constructor(
    private readonly primary: VectorIndex,
    private readonly db: Db,
    private readonly now: () => number,
  ) {
    this.name = `${primary.name}+overlay`;
  }

  async upsert(records: VectorRecord[]): Promise<void> {
    await this.primary.upsert(records);
    if (!records.length) return;
    // The rows go in as one JSON parameter a statement: D1 allows at most 100 bound parameters, so one
    // parameter per column and row failed past 24 records.
    // Stored in the form a search unpacks in one pass (`flatVector`; `flat` tells them from older rows).
    const metadata = JSON.stringify({ overlay: true, indexed_at: this.now(), flat: true });
    const rows = records.map((r) => [r.id, r.userId, JSON.stringify(flatVector(r.vector))]);
    await runStatements(
      this.db,
      chunkByJsonSize(rows).map(
        (chunk) => sql`INSERT INTO local_vectors (id, user_id, vector_values, metadata)
          SELECT value->>0, value->>1, value->>2, ${metadata} FROM json_each(${JSON.stringify(chunk)}) WHERE true
          ON CONFLICT(id) DO UPDATE SET vector_values = excluded.vector_values, metadata = excluded.metadata`,
      ),
    );
  }

  async query(userId: string, vector: SparseVector, topK: number): Promise<VectorMatch[]> {
    return this.db.all<VectorMatch>(await this.matchesQuery(userId, vector, topK));
  }

  /**
   * The primary's matches and the overlay's recent vectors, scored in SQL (the dot product over shared
   * dimensions), best score per id: the overlay costs no D1 round trip of its own.
   * Each overlay vector's JSON is unpacked once into (dimension, value) rows (`flatVector`: a dense vector's
   * position is its dimension, so it needs no parsing per element) and the query's dimensions are matched
   * through an index on them. Pairing indices and values with `json_extract('$.values[k]')` instead re-parsed
   * the whole vector for every dimension (2.5 s for three 768-dimension vectors in plain SQLite), and two
   * unpackings joined by position cost three times the present form.
   */
  async matchesQuery(userId: string, vector: SparseVector, topK: number): Promise<SQL> {
    const since = this.now() - OVERLAY_WINDOW_MS;
    const primary = await this.primary.query(userId, vector, topK);
    const q = JSON.stringify(vector.indices.map((dim, k) => [dim, vector.values[k] ?? 0]));
    return sql`WITH q(dim, w) AS MATERIALIZED (SELECT value->>0, value->>1 FROM json_each(${q})),
        lv AS MATERIALIZED (SELECT id, vector_values FROM local_vectors
          WHERE user_id = ${userId} AND metadata->>'indexed_at' > ${since} AND metadata->>'flat' = 1
          ORDER BY metadata->>'indexed_at' DESC, rowid DESC LIMIT ${literalLimit(OVERLAY_SCORED)}),
        p AS MATERIALIZED (SELECT lv.id, iif(p.type = 'array', p.value->>0, p.key) AS dim, iif(p.type = 'array', p.value->>1, p.value) AS v
          FROM lv, json_each(lv.vector_values) p)
      SELECT id, max(score) AS score FROM (${matchesOf(primary)}
        UNION ALL
        SELECT p.id AS id, SUM(q.w * p.v) AS score FROM q CROSS JOIN p ON p.dim = q.dim GROUP BY p.id)
      GROUP BY id ORDER BY score DESC LIMIT ${literalLimit(topK)}`;
  }

  // The overlay's rows go first: if Vectorize then fails, no embedding of a forgotten fact stays in D1 (retrieval
  // hydrates from D1, so the remote vector left behind is never returned).
  async delete(userId: string, ids: string[]): Promise<void> {
    if (ids.length) await this.db.run(sql`DELETE FROM local_vectors WHERE user_id = ${userId} AND ${inJson(localVectors.id, ids)}`);
    await this.primary.delete(userId, ids);
  }

  async erase(userId: string, ids: string[]): Promise<number> {
    await this.db.run(sql`DELETE FROM local_vectors WHERE user_id = ${userId}`);
    return this.primary.erase(userId, ids);
  }
}

/**
 * An overlay vector as stored: a dense one (every dimension from 0, as Workers AI's are) as its values alone,
 * position = dimension; a sparse one as (dimension, value) pairs. Either unpacks in one pass, the dense form with
 * no parsing per element.
 */
function flatVector(v: SparseVector): number[] | [number, number][] {
  const dense = v.indices.every((dim, k) => dim === k);
  return dense ? v.values : v.indices.map((dim, k): [number, number] => [dim, v.values[k] ?? 0]);
}

/** Drops overlay rows older than the window (production only: locally these rows are the index). */
export async function pruneOverlay(db: Db, now: number): Promise<number> {
  const res = await db.run(sql`DELETE FROM local_vectors WHERE metadata->>'overlay' = 1 AND metadata->>'indexed_at' < ${now - OVERLAY_WINDOW_MS}`);
  return res.meta.changes;
}
