import { and, count, desc, eq, isNull } from "drizzle-orm";
import type { OverviewSource } from "../core/capability";
import { contextEvents, facts } from "../db/schema";

/** Memory's part of the overview: current facts, observations by status, the newest facts. */
export const memoryOverview: OverviewSource = async ({ db, userId }) => {
  const current = and(eq(facts.userId, userId), isNull(facts.supersededBy));
  const [factCount, byStatus, recent] = await Promise.all([
    db.select({ n: count() }).from(facts).where(current).get(),
    db.select({ status: contextEvents.status, n: count() }).from(contextEvents).where(eq(contextEvents.userId, userId)).groupBy(contextEvents.status).all(),
    db.select({ id: facts.id, text: facts.text, at: facts.createdAt }).from(facts).where(current).orderBy(desc(facts.createdAt), desc(facts.id)).limit(3).all(),
  ]);
  const observations = Object.fromEntries(byStatus.map((r) => [`observations_${r.status}`, r.n]));
  return {
    counts: { facts: factCount?.n ?? 0, ...observations },
    recent: recent.map((r) => ({ kind: "fact", id: r.id, title: r.text.slice(0, 120), at: r.at })),
  };
};
