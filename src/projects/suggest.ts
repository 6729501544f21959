/**
 * Where a new memory goes. The assistant saves a memory with a suggested project and a confidence: at or
 * above the threshold the memory is scoped to that project; below it, it stays at user level (seen in
 * every conversation) and the suggestion is kept in the activity log for the user to review.
 */
import { sql } from "drizzle-orm";
import type { Config } from "../config/config";
import type { Env } from "../config/env";
import { quotaOf } from "../config/limits";
import type { Db } from "../db/client";
import type { Plan } from "../db/schema";
import { memoryDeps } from "../memory/deps";
import { importFacts } from "../memory/facts";
import { type Actor, activityRow } from "./activity-row";
import { getProject } from "./store";

/** Confidence at or above which a suggestion scopes the memory. */
export const SUGGESTION_THRESHOLD = 0.7;

export type Suggestion = { content: string; projectId: string | null; confidence: number; reason: string | null };

export type Placed = { factId: string; scoped: boolean; projectId: string | null; projectName: string | null; activityId: string | null };

export async function placeMemory(deps: { env: Env; config: Config; db: Db; plan: Plan }, who: Actor, s: Suggestion): Promise<Placed> {
  const { db } = deps;
  const project = s.projectId ? await getProject(db, who.userId, s.projectId) : null;
  const scoped = project !== null && project.archivedAt === null && s.confidence >= SUGGESTION_THRESHOLD;
  const saved = await importFacts(
    memoryDeps(deps.env, deps.config, db),
    who.userId,
    [
      {
        text: s.content,
        metadata: {
          ...(scoped && project ? { project_id: project.id } : {}),
          source: "system_learned",
          confidence: Math.min(1, Math.max(0, s.confidence)),
          ...(who.sessionId ? { session_id: who.sessionId } : {}),
        },
      },
    ],
    quotaOf(deps.config.quotas, deps.plan, "facts"),
  );
  const factId = saved.facts[0]?.id;
  if (!factId) throw new Error("the memory was not written");
  if (!project) return { factId, scoped: false, projectId: null, projectName: null, activityId: null };
  const log = activityRow(
    db,
    { ...who, reason: s.reason },
    {
      projectId: project.id,
      action: scoped ? "scope_memory" : "suggest_memory",
      summary: scoped
        ? `Filed a memory under "${project.name}" (confidence ${s.confidence})`
        : `Suggested "${project.name}" for a memory kept at user level (confidence ${s.confidence} is under ${SUGGESTION_THRESHOLD})`,
      detail: { memory_id: factId, memory: s.content.slice(0, 200), suggested_project_id: project.id, confidence: s.confidence },
      undo: scoped ? { op: "move", kind: "fact", memory_id: factId, project_id: null } : null,
      when: sql`1`,
    },
  );
  await log.statement;
  return { factId, scoped, projectId: scoped ? project.id : null, projectName: project.name, activityId: log.id };
}
