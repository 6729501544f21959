import { and, eq, isNull } from "drizzle-orm";
import type { Db } from "../db/client";
import { projects } from "../db/schema";
import { notFound } from "../http/errors";

/** A project the user owns and has not archived, or 404: another user's project id is never usable. */
export async function requireProject(db: Db, userId: string, id: string) {
  const row = await db
    .select({ id: projects.id })
    .from(projects)
    .where(and(eq(projects.id, id), eq(projects.userId, userId), isNull(projects.archivedAt)))
    .get();
  if (!row) throw notFound("project");
  return row;
}
