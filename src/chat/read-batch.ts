/**
 * The turn's one context read: reads queued with `read` before `flush` go to D1 as one batch (one
 * round trip), and each caller gets the results of its own queries. A read queued after the flush runs
 * as its own batch. If the batch fails, every read queued in it fails.
 */
import type { BatchResponse } from "drizzle-orm/batch";
import type { BatchedRead, BatchReads } from "../core/context";
import type { Db } from "../db/client";

type Queued = { queries: BatchReads; resolve(results: unknown[]): void; reject(err: unknown): void };

export function readBatch(db: Db): { read: BatchedRead; flush(): Promise<void> } {
  const queued: Queued[] = [];
  let flushed = false;
  const read = <T extends BatchReads>(queries: T): Promise<BatchResponse<T>> => {
    if (flushed) return db.batch(queries);
    // The slice of the batch's results for these queries, in their order: drizzle's BatchResponse<T>.
    return new Promise((resolve, reject) => queued.push({ queries, resolve: (r) => resolve(r as BatchResponse<T>), reject }));
  };
  const flush = async () => {
    if (flushed) return;
    flushed = true;
    const [first, ...rest] = queued.flatMap((q) => q.queries);
    if (!first) return;
    try {
      const results: unknown[] = await db.batch([first, ...rest]);
      let at = 0;
      for (const q of queued) {
        q.resolve(results.slice(at, at + q.queries.length));
        at += q.queries.length;
      }
    } catch (err) {
      for (const q of queued) q.reject(err);
    }
  };
  return { read, flush };
}
