import { and, count, desc, eq } from "drizzle-orm";
import type { OverviewSource } from "../core/capability";
import { brainDocuments, brainEntries, brainProposals } from "../db/schema";

/** Brain's part of the overview: documents, MEMORY entries, proposals waiting for review, newest entries. */
export const brainOverview: OverviewSource = async ({ db, userId }) => {
  const [docs, entries, proposals, recent] = await Promise.all([
    db.select({ n: count() }).from(brainDocuments).where(eq(brainDocuments.userId, userId)).get(),
    db.select({ n: count() }).from(brainEntries).where(eq(brainEntries.userId, userId)).get(),
    db
      .select({ n: count() })
      .from(brainProposals)
      .where(and(eq(brainProposals.userId, userId), eq(brainProposals.status, "pending")))
      .get(),
    db
      .select({ id: brainEntries.id, content: brainEntries.content, at: brainEntries.createdAt })
      .from(brainEntries)
      .where(eq(brainEntries.userId, userId))
      .orderBy(desc(brainEntries.createdAt), desc(brainEntries.id))
      .limit(3)
      .all(),
  ]);
  return {
    counts: { brain_documents: docs?.n ?? 0, memory_entries: entries?.n ?? 0, pending_proposals: proposals?.n ?? 0 },
    recent: recent.map((r) => ({ kind: "memory_entry", id: r.id, title: r.content.slice(0, 120), at: r.at })),
  };
};
