/**
 * A user's sites. A site is created explicitly (POST /v1/sites) or by the first write that names it
 * (a BIBLE save, a MEMORY entry about it, a sync); reads of a site the user does not have answer 404.
 * Every query is keyed by (user_id, id), so another user's site id only ever names one of your own.
 */
import { and, asc, eq, inArray, type SQL, sql } from "drizzle-orm";
import { allOf, changes, runBatch } from "../db/batch";
import type { Db } from "../db/client";
import { insertWhere } from "../db/insert-where";
import { snakeRow } from "../db/public-row";
import type { Plan } from "../db/schema";
import { brainDocuments, brainEntries, brainProposals, brainVersions, sites } from "../db/schema";
import { AppError, notFound } from "../lib/errors";
import { cleanMemoryText } from "../lib/sanitize";
import { BRAIN_LIMITS } from "./limits";

export type SiteRow = typeof sites.$inferSelect;

export const publicSite = (s: SiteRow) => snakeRow(s, ["id", "name", "syncedAt", "createdAt"]);

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

/** 403 `quota_exceeded`, like every other cap on stored objects (src/config/limits.ts). */
export const siteCapError = (plan: Plan) =>
  new AppError("quota_exceeded", `You have ${BRAIN_LIMITS[plan].sites} sites, the most the ${plan} plan allows; nothing was written. Delete one first.`);

/** True while the user has the site; a guard for statements later in a batch that registers it. */
export const siteExists = (userId: string, id: string) => sql`EXISTS (SELECT 1 FROM sites WHERE user_id = ${userId} AND id = ${id})`;

/**
 * Registers `id` unless it exists already (then nothing happens) or the user is at the plan's site cap:
 * the count is taken inside the INSERT, so concurrent writers cannot pass the cap. `also` guards it
 * further (the rest of its batch must apply too). Follow it with statements guarded by `siteExists`.
 */
export function siteInsert(db: Db, userId: string, plan: Plan, id: string, name: string | null = null, also?: SQL) {
  const underCap = sql`(SELECT count(*) FROM sites WHERE user_id = ${userId}) < ${BRAIN_LIMITS[plan].sites}`;
  const row: SiteRow = { userId, id, name, syncData: null, syncedAt: null, createdAt: Date.now() };
  return insertWhere(db, sites, row, allOf(underCap, also)).onConflictDoNothing();
}

/** A site's display name goes through the shared sanitizer like every stored name. */
const cleanName = (name: string | null) => (name === null ? null : cleanMemoryText(name, 200, "name"));

export async function createSite(db: Db, userId: string, plan: Plan, input: { id: string; name: string | null }): Promise<SiteRow> {
  const [inserted] = await runBatch(db, siteInsert(db, userId, plan, input.id, cleanName(input.name)));
  if (changes(inserted) === 0) throw (await findSite(db, userId, input.id)) ? new AppError("conflict", `site ${input.id} already exists`) : siteCapError(plan);
  return getSite(db, userId, input.id);
}

export async function renameSite(db: Db, userId: string, id: string, name: string | null): Promise<SiteRow> {
  const row = await db
    .update(sites)
    .set({ name: cleanName(name) })
    .where(mine(userId, id))
    .returning()
    .get();
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
