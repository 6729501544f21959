/**
 * Review mode (a user setting, off by default): the assistant's writes wait as pending proposals,
 * already sanitized and limit-checked, and nothing is applied until the user approves. Approval goes
 * through the same write path as any other write, with the proposal's status flipped in the same batch.
 */
import { and, desc, eq, sql } from "drizzle-orm";
import { allOf, changes, runBatch } from "../db/batch";
import type { Db } from "../db/client";
import { newId } from "../db/client";
import { insertWhere } from "../db/insert-where";
import { snakeRow } from "../db/public-row";
import type { Plan } from "../db/schema";
import { brainProposals, users } from "../db/schema";
import { AppError, notFound } from "../lib/errors";
import { diffText } from "./diff";
import { findDocument, prepareContent, staleVersion, writeDocument } from "./documents";
import { ownsProject, projectIsMine } from "./guards";
import { BRAIN_LIMITS, type BrainTarget, LABEL } from "./limits";
import { addMemory, countEntries, memoryFull, memoryHasRoom, prepareEntry } from "./memory";

export type ProposalRow = typeof brainProposals.$inferSelect;

export async function getReviewMode(db: Db, userId: string): Promise<boolean> {
  const row = await db.select({ on: users.reviewMode }).from(users).where(eq(users.id, userId)).get();
  return row?.on ?? false;
}

export async function setReviewMode(db: Db, userId: string, on: boolean): Promise<boolean> {
  await db.update(users).set({ reviewMode: on, updatedAt: Date.now() }).where(eq(users.id, userId));
  return on;
}

/** What the proposal would change: a diff against the current document, or the new entry. */
async function proposalDiff(db: Db, p: Pick<ProposalRow, "userId" | "target" | "site" | "content">): Promise<string> {
  if (p.target === "memory") return diffText("", p.content, "MEMORY", "MEMORY + new entry").diff;
  const doc = await findDocument(db, p.userId, p.target, p.site);
  return diffText(doc?.content ?? "", p.content, `${LABEL[p.target]} v${doc?.version ?? 0}`, `${LABEL[p.target]} proposed`).diff;
}

export type ProposeInput = {
  userId: string;
  plan: Plan;
  target: BrainTarget;
  site: string | null;
  projectId: string | null;
  content: string;
  sessionId: string | null;
  /** SOUL/BIBLE: the version the proposer read (0: must not exist yet); 409 when the document has moved on. */
  expectedVersion?: number;
};

const proposalsFull = (plan: Plan) =>
  new AppError("conflict", `${BRAIN_LIMITS[plan].pendingProposals} proposals are already waiting for the user's review; nothing was proposed.`);

/** The INSERT of one proposal, guarded by the plan's pending cap (and MEMORY's room and project for an entry). */
export function proposalInsert(db: Db, row: ProposalRow, plan: Plan) {
  const underCap = sql`(SELECT count(*) FROM brain_proposals WHERE user_id = ${row.userId} AND status = 'pending') < ${BRAIN_LIMITS[plan].pendingProposals}`;
  const entry = row.target === "memory" ? allOf(memoryHasRoom(row.userId, plan), projectIsMine(row.userId, row.projectId)) : undefined;
  return insertWhere(db, brainProposals, row, allOf(underCap, entry));
}

export async function propose(db: Db, input: ProposeInput): Promise<{ proposal: ProposalRow; diff: string }> {
  const { userId, plan, target } = input;
  const content = target === "memory" ? prepareEntry(plan, input.content) : prepareContent(plan, target, input.site, input.content);
  const site = target === "soul" ? null : input.site;
  const base = target === "memory" ? null : ((await findDocument(db, userId, target, site))?.version ?? 0);
  if (target !== "memory" && input.expectedVersion !== undefined && input.expectedVersion !== base)
    throw staleVersion(target, base ?? 0, input.expectedVersion);
  const projectId = target === "memory" ? input.projectId : null;
  const proposal: ProposalRow = {
    id: newId("prp"),
    userId,
    target,
    site,
    projectId,
    content,
    baseVersion: base,
    status: "pending",
    sessionId: input.sessionId,
    createdAt: Date.now(),
    decidedAt: null,
  };
  const [inserted] = await runBatch(db, proposalInsert(db, proposal, plan));
  if (changes(inserted) === 0) {
    if (projectId && !(await ownsProject(db, userId, projectId))) throw notFound("project");
    if (target === "memory" && (await countEntries(db, userId)) >= BRAIN_LIMITS[plan].memoryEntries) throw memoryFull(plan);
    throw proposalsFull(plan);
  }
  return { proposal, diff: await proposalDiff(db, proposal) };
}

export async function listProposals(db: Db, userId: string, status: ProposalRow["status"], limit: number) {
  const rows = await db
    .select()
    .from(brainProposals)
    .where(and(eq(brainProposals.userId, userId), eq(brainProposals.status, status)))
    .orderBy(desc(brainProposals.createdAt))
    .limit(limit)
    .all();
  return Promise.all(rows.map(async (p) => ({ proposal: p, diff: status === "pending" ? await proposalDiff(db, p) : null })));
}

async function pendingProposal(db: Db, userId: string, id: string): Promise<ProposalRow> {
  const p = await db
    .select()
    .from(brainProposals)
    .where(and(eq(brainProposals.id, id), eq(brainProposals.userId, userId)))
    .get();
  if (!p) throw notFound("proposal");
  if (p.status !== "pending") throw new AppError("conflict", `this proposal was already ${p.status}`);
  return p;
}

export type Applied = { target: BrainTarget; version?: number; entry_id?: string; truncated?: boolean };

/** Applies a proposal. A SOUL/BIBLE proposal applies only to the version it was made against (409 otherwise). */
export async function approveProposal(db: Db, userId: string, plan: Plan, id: string): Promise<Applied> {
  const p = await pendingProposal(db, userId, id);
  const common = { userId, plan, content: p.content, author: "assistant" as const, sessionId: p.sessionId, approves: p.id };
  if (p.target === "memory") {
    const entry = await addMemory(db, { ...common, site: p.site, projectId: p.projectId });
    return { target: "memory", entry_id: entry.id };
  }
  const w = await writeDocument(db, { ...common, kind: p.target, site: p.site, expectedVersion: p.baseVersion ?? 0, note: `approved proposal ${p.id}` });
  return { target: p.target, version: w.version, truncated: w.truncated };
}

export async function rejectProposal(db: Db, userId: string, id: string): Promise<void> {
  await pendingProposal(db, userId, id);
  const done = await db
    .update(brainProposals)
    .set({ status: "rejected", decidedAt: Date.now() })
    .where(and(eq(brainProposals.id, id), eq(brainProposals.userId, userId), eq(brainProposals.status, "pending")))
    .returning({ id: brainProposals.id })
    .get();
  if (!done) throw new AppError("conflict", "this proposal was already decided");
}

export const publicProposal = (p: ProposalRow, diff: string | null) => ({
  ...snakeRow(p, ["id", "target", "site", "content", "baseVersion", "status", "sessionId", "createdAt", "decidedAt"]),
  diff,
});
