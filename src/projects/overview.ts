import { and, count, desc, eq, isNull } from "drizzle-orm";
import type { OverviewSource } from "../core/capability";
import { projectActivity, projects } from "../db/schema";

/** Projects' part of the overview: active and archived projects, the assistant's newest actions (not undone). */
export const projectsOverview: OverviewSource = async ({ db, userId }) => {
  const [active, total, recent] = await Promise.all([
    db
      .select({ n: count() })
      .from(projects)
      .where(and(eq(projects.userId, userId), isNull(projects.archivedAt)))
      .get(),
    db.select({ n: count() }).from(projects).where(eq(projects.userId, userId)).get(),
    db
      .select({ id: projectActivity.id, summary: projectActivity.summary, at: projectActivity.createdAt })
      .from(projectActivity)
      .where(and(eq(projectActivity.userId, userId), eq(projectActivity.actor, "assistant"), isNull(projectActivity.undoneAt)))
      .orderBy(desc(projectActivity.createdAt), desc(projectActivity.id))
      .limit(3)
      .all(),
  ]);
  const activeCount = active?.n ?? 0;
  return {
    counts: { projects: activeCount, projects_archived: (total?.n ?? 0) - activeCount },
    recent: recent.map((r) => ({ kind: "project_action", id: r.id, title: r.summary.slice(0, 120), at: r.at })),
  };
};
