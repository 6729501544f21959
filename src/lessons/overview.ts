import { and, count, eq } from "drizzle-orm";
import type { OverviewSource } from "../core/capability";
import { lessons, transcripts } from "../db/schema";

/** Lessons' part of the overview: lessons still learned, and transcripts by sync state. */
export const lessonsOverview: OverviewSource = async ({ db, userId }) => {
  const [learned, byStatus] = await Promise.all([
    db
      .select({ n: count() })
      .from(lessons)
      .where(and(eq(lessons.userId, userId), eq(lessons.unlearned, false)))
      .get(),
    db.select({ status: transcripts.status, n: count() }).from(transcripts).where(eq(transcripts.userId, userId)).groupBy(transcripts.status).all(),
  ]);
  const sync = { transcripts_synced: 0, transcripts_pending: 0, transcripts_failed: 0 };
  for (const row of byStatus) sync[`transcripts_${row.status}`] = row.n;
  return { counts: { lessons: learned?.n ?? 0, ...sync } };
};
