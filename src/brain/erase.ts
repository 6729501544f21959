import { eq } from "drizzle-orm";
import type { EraseHook } from "../core/capability";
import { brainDocuments, brainEntries, brainProposals, brainVersions, sites } from "../db/schema";

/** The brain's part of an erase: SOUL/BIBLE and every version, MEMORY entries, proposals and sites. */
export const eraseBrain: EraseHook = async ({ db, userId }) => ({
  statements: [
    { count: "brain_versions", statement: db.delete(brainVersions).where(eq(brainVersions.userId, userId)).returning({ id: brainVersions.id }) },
    { count: "brain_documents", statement: db.delete(brainDocuments).where(eq(brainDocuments.userId, userId)).returning({ id: brainDocuments.id }) },
    { count: "memory_entries", statement: db.delete(brainEntries).where(eq(brainEntries.userId, userId)).returning({ id: brainEntries.id }) },
    { count: "proposals", statement: db.delete(brainProposals).where(eq(brainProposals.userId, userId)).returning({ id: brainProposals.id }) },
    { count: "sites", statement: db.delete(sites).where(eq(sites.userId, userId)).returning({ id: sites.id }) },
  ],
});
