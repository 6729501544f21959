/**
 * HEARTBEAT: a per-site status sheet regenerated from the site's sync data, deterministically and
 * without a model call (same data and time, same text), stamped with the sync time. A cron job marks
 * heartbeats that have not been refreshed for `STALE_AFTER_MS` as stale; the next sync clears it.
 */

import { z } from "@hono/zod-openapi";
import { and, eq, lt, sql } from "drizzle-orm";
import { runBatch } from "../db/batch";
import type { Db } from "../db/client";
import { newId } from "../db/client";
import { insertWhere } from "../db/insert-where";
import type { Plan } from "../db/schema";
import { brainDocuments, type JsonObject, sites } from "../db/schema";
import { EpochMs } from "../http/openapi";
import { AppError, notFound } from "../lib/errors";
import { type DocumentRow, findDocument } from "./documents";
import { SYNC_MAX_BYTES } from "./limits";
import { inlineText, sanitizeBrainContent } from "./sanitize";
import { siteCapError, siteExists, siteInsert } from "./sites";

export const STALE_AFTER_MS = 24 * 60 * 60 * 1000;

const Line = z.string().trim().min(1).max(500);
const Key = z.string().regex(/^[\w .:-]{1,64}$/, "keys are 1-64 letters, digits, space, _ . : -");
const Scalar = z.union([z.string().max(500), z.number(), z.boolean()]);

/** What a site pushes on sync. Validated and size-limited; unknown fields are rejected. */
export const SiteSync = z
  .strictObject({
    name: z.string().trim().min(1).max(200).optional(),
    url: z.url().max(2000).optional(),
    platform: z.string().trim().min(1).max(100).optional(),
    status: z.enum(["ok", "degraded", "down"]).optional(),
    metrics: z
      .record(Key, z.number())
      .refine((m) => Object.keys(m).length <= 100, "at most 100 metrics")
      .optional(),
    attributes: z
      .record(Key, Scalar)
      .refine((m) => Object.keys(m).length <= 100, "at most 100 attributes")
      .optional(),
    alerts: z
      .array(z.strictObject({ level: z.enum(["info", "warning", "critical"]), message: Line }))
      .max(50)
      .optional(),
    recent_changes: z
      .array(z.strictObject({ at: EpochMs.optional(), summary: Line }))
      .max(50)
      .optional(),
  })
  .openapi("SiteSync");

export type SiteSyncData = z.infer<typeof SiteSync>;

const LEVELS = ["critical", "warning", "info"] as const;
const iso = (t: number) => new Date(t).toISOString();
const sorted = <T>(record: Record<string, T>) => Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/**
 * The status sheet, from the data alone: sorted keys and fixed section order make it reproducible.
 * Every value from the site passes `inlineText`, so each line starts with the label written here: a
 * value cannot start a line of its own (a forged `## SOUL` header) or close the prompt's markup.
 */
export function renderHeartbeat(siteId: string, data: SiteSyncData, syncedAt: number): string {
  const v = (value: string | number | boolean) => inlineText(String(value));
  const lines = [`Site: ${v(data.name ?? siteId)} (${v(siteId)})`, `Synced: ${iso(syncedAt)}`];
  if (data.status) lines.push(`Status: ${data.status}`);
  if (data.url) lines.push(`URL: ${v(data.url)}`);
  if (data.platform) lines.push(`Platform: ${v(data.platform)}`);
  const section = (title: string, items: string[]) => items.length && lines.push("", `${title}:`, ...items.map((i) => `- ${i}`));
  section(
    "Metrics",
    sorted(data.metrics ?? {}).map(([k, n]) => `${v(k)}: ${v(n)}`),
  );
  const alerts = [...(data.alerts ?? [])].sort((a, b) => LEVELS.indexOf(a.level) - LEVELS.indexOf(b.level));
  section(
    "Alerts",
    alerts.map((a) => `[${a.level}] ${v(a.message)}`),
  );
  const changes = [...(data.recent_changes ?? [])].sort((a, b) => (b.at ?? 0) - (a.at ?? 0)).slice(0, 20);
  section(
    "Recent changes",
    changes.map((c) => (c.at === undefined ? v(c.summary) : `${iso(c.at)} ${v(c.summary)}`)),
  );
  section(
    "Attributes",
    sorted(data.attributes ?? {}).map(([k, a]) => `${v(k)}: ${v(a)}`),
  );
  return lines.join("\n");
}

export type HeartbeatInput = { userId: string; plan: Plan; site: string; data: SiteSyncData; now: number };

/**
 * Stores the sync data and regenerates HEARTBEAT in one batch; registers the site on its first sync
 * (within the plan's site cap, checked in the batch: the HEARTBEAT is written only if the site exists).
 */
export async function syncSite(db: Db, input: HeartbeatInput): Promise<DocumentRow> {
  const { userId, plan, site, data, now } = input;
  const bytes = new TextEncoder().encode(JSON.stringify(data)).length;
  if (bytes > SYNC_MAX_BYTES) throw new AppError("limit_exceeded", `sync data is ${bytes} bytes; the limit is ${SYNC_MAX_BYTES}`);
  // Sync data is injected into the prompt as HEARTBEAT, so it is as untrusted as any other brain text.
  const content = sanitizeBrainContent(renderHeartbeat(site, data, now));
  const fresh: DocumentRow = { id: newId("doc"), userId, kind: "heartbeat", site, content, version: 1, stale: false, updatedAt: now };
  const [, upserted] = await runBatch(
    db,
    siteInsert(db, userId, plan, site),
    insertWhere(db, brainDocuments, fresh, siteExists(userId, site))
      .onConflictDoUpdate({
        target: [brainDocuments.userId, brainDocuments.kind, brainDocuments.site],
        set: { content, version: sql`${brainDocuments.version} + 1`, stale: false, updatedAt: now },
      })
      .returning(),
    db
      .update(sites)
      .set({ syncData: data as JsonObject, syncedAt: now, name: sql`coalesce(${sites.name}, ${data.name ?? null})` })
      .where(and(eq(sites.userId, userId), eq(sites.id, site))),
  );
  const doc = upserted[0];
  if (!doc) throw siteCapError(plan);
  return doc;
}

export async function getHeartbeat(db: Db, userId: string, site: string): Promise<DocumentRow> {
  const doc = await findDocument(db, userId, "heartbeat", site);
  if (!doc) throw notFound("HEARTBEAT (the site has not synced yet)");
  return doc;
}

/** Cron: flags heartbeats not refreshed within `STALE_AFTER_MS`, across all users. */
export async function markStaleHeartbeats(db: Db, now: number): Promise<{ marked: number }> {
  const rows = await db
    .update(brainDocuments)
    .set({ stale: true })
    .where(and(eq(brainDocuments.kind, "heartbeat"), eq(brainDocuments.stale, false), lt(brainDocuments.updatedAt, now - STALE_AFTER_MS)))
    .returning({ id: brainDocuments.id })
    .all();
  return { marked: rows.length };
}
