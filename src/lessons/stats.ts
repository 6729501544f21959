/** The lessons dashboard: counts by type and signal, recalls per day, the most recalled, projects and sync health. */
import { and, desc, eq, gt, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { lessonRecalls, lessons, transcripts } from "../db/schema";

const DAY = 86_400_000;

export async function lessonStats(db: Db, userId: string, now: number, days = 30) {
  const active = and(eq(lessons.userId, userId), eq(lessons.unlearned, false));
  const [byType, bySignal, perDay, top, projects, sync] = await db.batch([
    db.select({ key: lessons.type, n: sql<number>`count(*)` }).from(lessons).where(active).groupBy(lessons.type),
    db.select({ key: lessons.signal, n: sql<number>`count(*)` }).from(lessons).where(active).groupBy(lessons.signal),
    db
      .select({ day: sql<string>`strftime('%Y-%m-%d', ${lessonRecalls.createdAt} / 1000, 'unixepoch')`, count: sql<number>`count(*)` })
      .from(lessonRecalls)
      .where(and(eq(lessonRecalls.userId, userId), gt(lessonRecalls.createdAt, now - days * DAY)))
      .groupBy(sql`1`)
      .orderBy(sql`1`),
    db
      .select({ id: lessons.id, title: lessons.title, recalls: lessons.recalls })
      .from(lessons)
      .where(and(active, gt(lessons.recalls, 0)))
      .orderBy(desc(lessons.recalls), desc(lessons.lastRecalledAt))
      .limit(10),
    db.select({ project: lessons.project, lessons: sql<number>`count(*)` }).from(lessons).where(active).groupBy(lessons.project).orderBy(desc(sql`count(*)`)),
    db
      .select({
        transcripts: sql<number>`count(*)`,
        pending: sql<number>`coalesce(sum(${transcripts.status} = 'pending'), 0)`,
        failed: sql<number>`coalesce(sum(${transcripts.status} = 'failed'), 0)`,
        last_synced_at: sql<number | null>`max(${transcripts.syncedAt})`,
      })
      .from(transcripts)
      .where(eq(transcripts.userId, userId)),
  ]);
  return {
    by_type: Object.fromEntries(byType.map((r) => [r.key, r.n])),
    by_signal: Object.fromEntries(bySignal.map((r) => [r.key, r.n])),
    recalls_per_day: perDay,
    top_recalled: top,
    projects,
    sync: sync[0] ?? { transcripts: 0, pending: 0, failed: 0, last_synced_at: null },
  };
}
