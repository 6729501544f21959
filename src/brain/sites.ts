/**
 * A user's sites. A site is created explicitly (POST /v1/sites) or by the first write that names it
 * (a BIBLE save, a sync); reads of a site the user does not have answer 404. Every query is keyed by
 * (user_id, id), so another user's site id only ever names one of your own.
 */
import { and, asc, count, eq, inArray, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Plan } from "../auth/service";
import type { Db } from "../db/client";
import { brainDocuments, brainEntries, brainProposals, brainVersions, sites } from "../db/schema";
import { AppError, notFound } from "../http/errors";
import { BRAIN_LIMITS } from "./limits";
import { runBatch } from "./batch";

export type SiteRow = typeof sites.$inferSelect;

export const publicSite = (s: SiteRow) => ({ id: s.id, name: s.name, synced_at: s.syncedAt, created_at: s.createdAt });

const mine = (userId: string, id: string) => and(eq(sites.userId, userId), eq(sites.id, id));

export async function findSite(db: Db, userId: string, id: string): Promise<SiteRow | undefined> {
  return db.select().from(sites).where(mine(userId, id)).get();
}

export async function getSite(db: Db, userId: string, id: string): Promise<SiteRow> {
  const row = await findSite(db, userId, id);
  if (!row) throw notFound("site");
  return row;
}

export async function listSites(db: Db, userId: string): Promise<SiteRow[]> {
  return db.select().from(sites).where(eq(sites.userId, userId)).orderBy(asc(sites.createdAt), asc(sites.id)).all();
}

async function checkSiteCap(db: Db, userId: string, plan: Plan): Promise<void> {
  const cap = BRAIN_LIMITS[plan].sites;
  const row = await db.select({ n: count() }).from(sites).where(eq(sites.userId, userId)).get();
  if ((row?.n ?? 0) >= cap) {
    throw new AppError("conflict", `You have ${cap} sites, the most the ${plan} plan allows; delete one first.`);
  }
}

/**
 * The statements that register `id` as part of a write's batch (none when the site exists).
 * Checks the plan's site cap first, so a write over the cap fails before anything is written.
 * (An array, not the bare query: a drizzle query returned from an async function would be awaited, i.e. run.)
 */
export async function siteStatements(db: Db, userId: string, plan: Plan, id: string): Promise<BatchItem<"sqlite">[]> {
  if (await findSite(db, userId, id)) return [];
  await checkSiteCap(db, userId, plan);
  return [db.insert(sites).values({ userId, id, name: null }).onConflictDoNothing()];
}

export async function createSite(db: Db, userId: string, plan: Plan, input: { id: string; name: string | null }): Promise<SiteRow> {
  if (await findSite(db, userId, input.id)) throw new AppError("conflict", `site ${input.id} already exists`);
  await checkSiteCap(db, userId, plan);
  const row = await db.insert(sites).values({ userId, id: input.id, name: input.name }).onConflictDoNothing().returning().get();
  if (!row) throw new AppError("conflict", `site ${input.id} already exists`);
  return row;
}

export async function renameSite(db: Db, userId: string, id: string, name: string | null): Promise<SiteRow> {
  const row = await db.update(sites).set({ name }).where(mine(userId, id)).returning().get();
  if (!row) throw notFound("site");
  return row;
}

/** Forgets a site: its BIBLE (with versions), HEARTBEAT, its MEMORY entries and pending proposals. */
export async function deleteSite(db: Db, userId: string, id: string): Promise<void> {
  await getSite(db, userId, id);
  const siteDocs = db
    .select({ id: brainDocuments.id })
    .from(brainDocuments)
    .where(and(eq(brainDocuments.userId, userId), eq(brainDocuments.site, id), sql`${brainDocuments.kind} <> 'soul'`));
  await runBatch(
    db,
    db.delete(brainVersions).where(and(eq(brainVersions.userId, userId), inArray(brainVersions.documentId, siteDocs))),
    db.delete(brainDocuments).where(and(eq(brainDocuments.userId, userId), eq(brainDocuments.site, id), sql`${brainDocuments.kind} <> 'soul'`)),
    db.delete(brainEntries).where(and(eq(brainEntries.userId, userId), eq(brainEntries.site, id))),
    db.delete(brainProposals).where(and(eq(brainProposals.userId, userId), eq(brainProposals.site, id), eq(brainProposals.status, "pending"))),
    db.delete(sites).where(mine(userId, id)),
  );
}
