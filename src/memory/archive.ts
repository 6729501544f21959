/**
 * Memory's part of an account import (docs/account.md): the imported live facts are indexed like any other write,
 * after the import answered, a batch at a time; a batch that fails is left to the sweep (`embedded_at` stays null).
 */
import { and, eq, isNull } from "drizzle-orm";
import type { ArchivePart } from "../core/capability";
import { inJson } from "../db/in-json";
import { facts } from "../db/schema";
import { memoryDeps } from "./deps";
import { indexFacts, storedFact } from "./facts-write";

/** Facts per indexing call: the embedder takes a batch at a time. */
const INDEX_BATCH = 100;

export const memoryArchive: ArchivePart = {
  imported: async ({ env, config, db, userId }, ids) => {
    const deps = memoryDeps(env, config, db);
    const all = ids.fact ?? [];
    for (let i = 0; i < all.length; i += INDEX_BATCH) {
      // A later turn of the event loop for each batch: embedding locally is CPU work that must not hold up the answer.
      await new Promise((resolve) => setTimeout(resolve, 0));
      const rows = await db
        .select()
        .from(facts)
        .where(and(eq(facts.userId, userId), inJson(facts.id, all.slice(i, i + INDEX_BATCH)), isNull(facts.supersededBy), isNull(facts.embeddedAt)))
        .all();
      if (rows.length) await indexFacts(deps, userId, rows.map(storedFact), []);
    }
  },
};
