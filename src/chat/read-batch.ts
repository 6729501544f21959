/**
 * The turn's one context read: reads queued with `read` before `flush` go to D1 as one batch (one
 * round trip), and each caller gets the results of its own queries. A read queued as a promise of its
 * queries holds the flush until they are ready. A read queued after the flush runs as its own batch.
 * D1 fails a whole batch for one failing statement: then each read runs alone, so only its caller fails.
 */
import type { BatchResponse } from "drizzle-orm/batch";
import type { BatchedRead, BatchReads } from "../core/context";
import type { Db } from "../db/client";

type Queued = { queries: BatchReads; resolve(results: readonly unknown[]): void; reject(err: unknown): void };

/**
 * A read's failure reaches whoever awaits it; a turn that already failed on another read may never await
 * this one, and its rejection must not surface as an unhandled error.
 */
function settledLater<T>(p: Promise<T>): Promise<T> {
  p.catch(() => undefined);
  return p;
}

export function readBatch(db: Db): { read: BatchedRead; flush(): Promise<void> } {
  const queued: Queued[] = [];
  const preparing: Promise<void>[] = [];
  let flushed = false;
  function read<T extends BatchReads>(queries: T): Promise<BatchResponse<T>>;
  function read<T extends BatchReads>(queries: Promise<T | null>): Promise<BatchResponse<T> | null>;
  function read<T extends BatchReads>(queries: T | Promise<T | null>): Promise<BatchResponse<T> | null> {
    if (flushed) return settledLater(Promise.resolve(queries).then((q) => (q ? db.batch(q) : null)));
    // The slice of the batch's results for these queries, in their order: drizzle's BatchResponse<T>.
    return settledLater(
      new Promise((resolve, reject) => {
        const enqueue = (q: T | null) => {
          if (q) queued.push({ queries: q, resolve: (r) => resolve(r as BatchResponse<T>), reject });
          else resolve(null);
        };
        if (Array.isArray(queries)) enqueue(queries as T);
        else preparing.push((queries as Promise<T | null>).then(enqueue, reject));
      }),
    );
  }
  const flush = async () => {
    if (flushed) return;
    flushed = true;
    await Promise.all(preparing);
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
      if (queued.length === 1) return queued[0]?.reject(err);
      await Promise.all(queued.map((q) => db.batch(q.queries).then(q.resolve, q.reject)));
    }
  };
  return { read, flush };
}
