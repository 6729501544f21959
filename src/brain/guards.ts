/**
 * Conditions that brain writes evaluate inside their own statements (a proposal still pending, a
 * project being the user's), so a decision made elsewhere between a read and a write cannot be lost.
 * Each comes with the read that explains, afterwards, why a guarded write did not apply.
 */
import { and, eq, type SQL, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { brainProposals, projects } from "../db/schema";
import { AppError } from "../lib/errors";

export const proposalPending = (userId: string, proposalId: string) =>
  sql`EXISTS (SELECT 1 FROM brain_proposals WHERE id = ${proposalId} AND user_id = ${userId} AND status = 'pending')`;

export async function isPending(db: Db, userId: string, proposalId: string): Promise<boolean> {
  const p = await db
    .select({ status: brainProposals.status })
    .from(brainProposals)
    .where(and(eq(brainProposals.id, proposalId), eq(brainProposals.userId, userId)))
    .get();
  return p?.status === "pending";
}

export const alreadyDecided = () => new AppError("conflict", "this proposal was already decided");

/** Marks a pending proposal approved, only while it is pending and `also` holds (the write it approves applied). */
export const approveStatement = (db: Db, userId: string, proposalId: string, now: number, also?: SQL) =>
  db
    .update(brainProposals)
    .set({ status: "approved", decidedAt: now })
    .where(and(eq(brainProposals.id, proposalId), eq(brainProposals.userId, userId), eq(brainProposals.status, "pending"), also));

/** A MEMORY entry or proposal may name a project only if it is the user's. */
export const projectIsMine = (userId: string, projectId: string | null) =>
  projectId === null ? undefined : sql`EXISTS (SELECT 1 FROM projects WHERE id = ${projectId} AND user_id = ${userId})`;

export async function ownsProject(db: Db, userId: string, projectId: string): Promise<boolean> {
  return !!(await db
    .select({ id: projects.id })
    .from(projects)
    .where(and(eq(projects.id, projectId), eq(projects.userId, userId)))
    .get());
}
