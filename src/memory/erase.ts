/**
 * DELETE /v1/memory: erases everything engram remembers about a user (adaptive memory, brain documents and
 * their versions, MEMORY entries, proposals, sites, projects, coding lessons, sessions) and returns a
 * receipt with counts. The account, its keys, usage and settings stay.
 * Sessions go first (their Durable Object storage too), then one D1 batch, then the vectors. The batch
 * also writes an `erase` revision, so a consolidation already in flight cannot write the old memory back.
 */
import { eq, lte, and, sql } from "drizzle-orm";
import { newId } from "../db/client";
import {
  auditLogs,
  brainDocuments,
  brainEntries,
  brainProposals,
  brainVersions,
  connections,
  contextEvents,
  contextLogs,
  facts,
  lessons,
  memoryRuns,
  projects,
  sessions,
  sites,
  transcripts,
  users,
} from "../db/schema";
import { returnedIds, runStatements } from "../db/batch";
import type { MemoryDeps } from "./deps";

export type EraseReceipt = {
  erased: {
    facts: number;
    vectors: number;
    events: number;
    context_logs: number;
    sessions: number;
    memory_runs: number;
    connections_reset: number;
    working_memory: boolean;
    scaffold: boolean;
    brain_documents: number;
    brain_versions: number;
    memory_entries: number;
    proposals: number;
    sites: number;
    projects: number;
    lessons: number;
    transcripts: number;
  };
  kept: string[];
  erased_at: number;
  vector_error?: string;
};

export async function eraseMemory(deps: MemoryDeps, userId: string, destroySession: (sessionId: string) => Promise<void>, requestId: string | null): Promise<EraseReceipt> {
  const { db } = deps;
  const [factIds, sessionIds, rev] = await db.batch([
    db.select({ id: facts.id }).from(facts).where(eq(facts.userId, userId)),
    db.select({ id: sessions.id }).from(sessions).where(eq(sessions.userId, userId)),
    db.select({ rev: sql<number>`coalesce(max(${memoryRuns.rev}), 0)` }).from(memoryRuns).where(eq(memoryRuns.userId, userId)),
  ]);
  for (const s of sessionIds) await destroySession(s.id);
  const base = rev[0]?.rev ?? 0;
  const now = deps.now();
  // Counted from RETURNING rows: D1's change counts include the FTS triggers' writes.
  const results = await runStatements(db, [
    db.delete(memoryRuns).where(and(eq(memoryRuns.userId, userId), lte(memoryRuns.rev, base))).returning({ id: memoryRuns.id }),
    db.insert(memoryRuns).values({ id: newId("run"), userId, rev: base + 1, kind: "erase" }),
    db.delete(facts).where(eq(facts.userId, userId)).returning({ id: facts.id }),
    db.delete(contextEvents).where(eq(contextEvents.userId, userId)).returning({ id: contextEvents.id }),
    db.delete(contextLogs).where(eq(contextLogs.userId, userId)).returning({ id: contextLogs.id }),
    db.delete(sessions).where(eq(sessions.userId, userId)).returning({ id: sessions.id }),
    db.update(connections).set({ learnedInfo: {} }).where(eq(connections.userId, userId)).returning({ id: connections.id }),
    db.update(users).set({ workingMemory: "", scaffold: {}, scaffoldMeta: {}, learnedInfo: {}, updatedAt: now }).where(eq(users.id, userId)),
    db.delete(brainVersions).where(eq(brainVersions.userId, userId)).returning({ id: brainVersions.id }),
    db.delete(brainDocuments).where(eq(brainDocuments.userId, userId)).returning({ id: brainDocuments.id }),
    db.delete(brainEntries).where(eq(brainEntries.userId, userId)).returning({ id: brainEntries.id }),
    db.delete(brainProposals).where(eq(brainProposals.userId, userId)).returning({ id: brainProposals.id }),
    db.delete(sites).where(eq(sites.userId, userId)).returning({ id: sites.id }),
    db.delete(projects).where(eq(projects.userId, userId)).returning({ id: projects.id }),
    db.delete(lessons).where(eq(lessons.userId, userId)).returning({ id: lessons.id }),
    db.delete(transcripts).where(eq(transcripts.userId, userId)).returning({ id: transcripts.id }),
  ]);
  const [runs, , factsN, events, logs, sessionsN, conns, , versions, documents, entries, proposals, sitesN, projectsN, lessonsN, transcriptsN] = results.map(
    (r) => returnedIds(r).length,
  );
  let vectors = 0;
  let vectorError: string | undefined;
  try {
    vectors = await deps.vectors.erase(userId, factIds.map((f) => f.id));
  } catch (err) {
    vectorError = `vectors could not be removed now (${err instanceof Error ? err.message : String(err)}); they are unreachable, as their facts are gone`;
  }
  const receipt: EraseReceipt = {
    erased: {
      facts: factsN ?? 0,
      vectors,
      events: events ?? 0,
      context_logs: logs ?? 0,
      sessions: sessionsN ?? 0,
      memory_runs: runs ?? 0,
      connections_reset: conns ?? 0,
      working_memory: true,
      scaffold: true,
      brain_documents: documents ?? 0,
      brain_versions: versions ?? 0,
      memory_entries: entries ?? 0,
      proposals: proposals ?? 0,
      sites: sitesN ?? 0,
      projects: projectsN ?? 0,
      lessons: lessonsN ?? 0,
      transcripts: transcriptsN ?? 0,
    },
    kept: ["usage (billing records)", "audit_logs (this erasure, without content)", "connections (configuration; their learned info is cleared)"],
    erased_at: now,
    ...(vectorError ? { vector_error: vectorError } : {}),
  };
  await db.insert(auditLogs).values({ id: newId("aud"), userId, action: "memory.erase", target: userId, detail: { erased: receipt.erased }, requestId });
  return receipt;
}
