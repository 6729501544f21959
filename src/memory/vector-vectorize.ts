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
 * (400 vectors of 768 dimensions, one bulk import, took ~3 s per search; 32 take ~85 ms), while what needs
 * reading one's own writes is the few facts a chat turn stores. Older writes of a large import are found
 * through Vectorize once it has indexed them, and through the full-text index at once.
 */
export const OVERLAY_SCORED = 32;

export class VectorizeVectorIndex implements VectorIndex {
  readonly name = "vectorize";
  constructor(
    private readonly index: VectorizeIndex,
    private readonly dimensions: number,
  ) {}

  async upsert(records: VectorRecord[]): Promise<void> {
    for (let i = 0; i < records.length; i += 500) {
      const batch = records.slice(i, i + 500);
      await this.index.upsert(batch.map((r) => ({ id: r.id, values: toDense(r.vector, this.dimensions), metadata: { ...r.metadata, user_id: r.userId } })));
    }
  }

  async query(userId: string, vector: SparseVector, topK: number): Promise<VectorMatch[]> {
    const res = await this.index.query(toDense(vector, this.dimensions), { topK: Math.min(topK, 100), filter: { user_id: userId }, returnMetadata: "none" });
    return res.matches.map((m) => ({ id: m.id, score: m.score }));
  }

  async matchesQuery(userId: string, vector: SparseVector, topK: number): Promise<SQL> {
    return matchesOf(await this.query(userId, vector, topK));
  }

  async delete(_userId: string, ids: string[]): Promise<void> {
    for (let i = 0; i < ids.length; i += 1000) await this.index.deleteByIds(ids.slice(i, i + 1000));
  }

  async erase(userId: string, ids: string[]): Promise<number> {
    await this.delete(userId, ids);
    return ids.length;
  }
}

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
    const metadata = JSON.stringify({ overlay: true, indexed_at: this.now() });
    const rows = records.map((r) => [r.id, r.userId, JSON.stringify(r.vector)]);
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
   * Each overlay vector's JSON is unpacked once into (dimension, value) rows and the query's dimensions are
   * matched through an index on them. Pairing the two with `json_extract('$.values[k]')` instead re-parsed
   * the whole vector for every dimension, and the unmaterialized query list re-parsed its JSON for every
   * pair: measured in plain SQLite for 768-dimension vectors, 2.5 s for three overlay vectors (now 26 ms),
   * quadratic in the dimensions, with the same scores.
   */
  async matchesQuery(userId: string, vector: SparseVector, topK: number): Promise<SQL> {
    const since = this.now() - OVERLAY_WINDOW_MS;
    const primary = await this.primary.query(userId, vector, topK);
    const q = JSON.stringify(vector.indices.map((dim, k) => [dim, vector.values[k] ?? 0]));
    return sql`WITH q(dim, w) AS MATERIALIZED (SELECT value->>0, value->>1 FROM json_each(${q})),
        lv AS MATERIALIZED (SELECT id, vector_values FROM local_vectors WHERE user_id = ${userId} AND metadata->>'indexed_at' > ${since}
          ORDER BY metadata->>'indexed_at' DESC, rowid DESC LIMIT ${literalLimit(OVERLAY_SCORED)}),
        d AS MATERIALIZED (SELECT lv.id, d.key, d.value AS dim FROM lv, json_each(lv.vector_values, '$.indices') d),
        x AS MATERIALIZED (SELECT lv.id, x.key, x.value AS v FROM lv, json_each(lv.vector_values, '$.values') x)
      SELECT id, max(score) AS score FROM (${matchesOf(primary)}
        UNION ALL
        SELECT d.id AS id, SUM(q.w * x.v) AS score
        FROM q CROSS JOIN d ON d.dim = q.dim CROSS JOIN x ON x.id = d.id AND x.key = d.key
        GROUP BY d.id)
      GROUP BY id ORDER BY score DESC LIMIT ${literalLimit(topK)}`;
  }

  async delete(userId: string, ids: string[]): Promise<void> {
    await this.primary.delete(userId, ids);
    if (ids.length) await this.db.run(sql`DELETE FROM local_vectors WHERE user_id = ${userId} AND ${inJson(localVectors.id, ids)}`);
  }

  async erase(userId: string, ids: string[]): Promise<number> {
    const removed = await this.primary.erase(userId, ids);
    await this.db.run(sql`DELETE FROM local_vectors WHERE user_id = ${userId}`);
    return removed;
  }
}

/** Drops overlay rows older than the window (production only: locally these rows are the index). */
export async function pruneOverlay(db: Db, now: number): Promise<number> {
  const res = await db.run(sql`DELETE FROM local_vectors WHERE metadata->>'overlay' = 1 AND metadata->>'indexed_at' < ${now - OVERLAY_WINDOW_MS}`);
  return res.meta.changes;
}
