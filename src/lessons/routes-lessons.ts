import { createRoute, z } from "@hono/zod-openapi";
import { desc, eq } from "drizzle-orm";
import { quotaOf } from "../config/limits";
import { requireAuto } from "../consent/settings";
import { CursorParam, nextCursor } from "../db/cursor";
import { lessonRecalls } from "../db/schema";
import { afterResponse } from "../http/after-response";
import { errors, json, jsonBody, newRouter, quotaOrConsentErrors, security } from "../http/openapi";
import { compactLessons } from "./compact";
import { LESSON_TYPES } from "./extraction-schema";
import { LESSON_ID_RE } from "./ids";
import { recall } from "./recall";
import { RememberInput, remember } from "./remember";
import { lessonStats } from "./stats";
import { getLesson, listLessons, publicLesson, setUnlearned } from "./store";

const Lesson = z
  .object({
    id: z.string(),
    type: z.enum(LESSON_TYPES),
    signal: z.enum(["HIGH", "MED", "LOW"]),
    flags: z.array(z.string()),
    title: z.string(),
    content: z.string(),
    tags: z.array(z.string()),
    project: z.string().nullable(),
    source_session: z.string().nullable(),
    origin: z.enum(["extracted", "cor", "remembered"]),
    unlearned: z.boolean(),
    merged_into: z.string().nullable(),
    confirmations: z.number().describe("Times the lesson, after being recalled, came back in a later session"),
    recalls: z.number(),
    last_recalled_at: z.number().nullable(),
    created_at: z.number(),
    updated_at: z.number(),
    score: z.number().optional().describe("Search only: relevance weighted by signal, confirmations and recency"),
  })
  .openapi("Lesson");

const LessonIdParam = z.object({ id: z.string().regex(LESSON_ID_RE, "must be a lesson id (les_...)") });
const Project = z.string().trim().min(1).max(200);

/** Which client recalled: a short label from `x-engram-client`, else "api". */
const clientOf = (header: string | undefined) => (header && /^[\w.:/ -]{1,40}$/.test(header) ? header : "api");

const listRoute = createRoute({
  method: "get",
  path: "/v1/lessons",
  operationId: "listLessons",
  tags: ["lessons"],
  summary: "Search your lessons (q: project first, then global; logged as a recall) or list them newest first",
  security,
  request: {
    query: z.object({
      q: z.string().trim().min(1).max(2000).optional(),
      project: Project.optional().describe("Search: this project's lessons rank first. List: only this project's and global lessons"),
      type: z.enum(LESSON_TYPES).optional(),
      limit: z.coerce.number().int().min(1).max(200).default(20),
      cursor: CursorParam.describe("List only (search returns one page)"),
    }),
  },
  responses: { 200: json(z.object({ lessons: z.array(Lesson), next_cursor: z.string().nullable() }), "Lessons"), ...errors },
});

const createRouteDef = createRoute({
  method: "post",
  path: "/v1/lessons",
  operationId: "rememberLesson",
  tags: ["lessons"],
  summary: "Save a lesson now, without waiting for extraction (idempotent: the same lesson keeps its id)",
  security,
  request: jsonBody(RememberInput),
  responses: { 201: json(z.object({ lesson: Lesson, created: z.boolean() }), "Saved"), ...errors, ...quotaOrConsentErrors },
});

const getRoute = createRoute({
  method: "get",
  path: "/v1/lessons/{id}",
  operationId: "getLesson",
  tags: ["lessons"],
  summary: "One lesson (unlearned ones too)",
  security,
  request: { params: LessonIdParam },
  responses: { 200: json(z.object({ lesson: Lesson }), "Lesson"), ...errors },
});

const unlearnRoute = createRoute({
  method: "delete",
  path: "/v1/lessons/{id}",
  operationId: "unlearnLesson",
  tags: ["lessons"],
  summary: "Unlearn a lesson (soft delete: never recalled again, restorable)",
  security,
  request: { params: LessonIdParam },
  responses: { 200: json(z.object({ lesson: Lesson }), "Unlearned"), ...errors },
});

const restoreRoute = createRoute({
  method: "post",
  path: "/v1/lessons/{id}/restore",
  operationId: "restoreLesson",
  tags: ["lessons"],
  summary: "Restore an unlearned (or merged) lesson; past the lesson quota 403 quota_exceeded, nothing changed",
  security,
  request: { params: LessonIdParam },
  responses: { 200: json(z.object({ lesson: Lesson }), "Restored"), ...errors },
});

const compactRoute = createRoute({
  method: "post",
  path: "/v1/lessons/compact",
  operationId: "compactLessons",
  tags: ["lessons"],
  summary: "Merge near-duplicate lessons (dry_run lists what would merge)",
  security,
  request: jsonBody(z.strictObject({ dry_run: z.boolean().default(true) })),
  responses: {
    200: json(
      z.object({ merged: z.array(z.object({ keep: z.string(), drop: z.array(z.string()), reason: z.string() })), dry_run: z.boolean() }),
      "Merges (done, or planned when dry_run)",
    ),
    ...errors,
  },
});

const recallsRoute = createRoute({
  method: "get",
  path: "/v1/lessons/recalls",
  operationId: "listLessonRecalls",
  tags: ["lessons"],
  summary: "The recall log, newest first: what was asked, by which client, what came back",
  security,
  request: { query: z.object({ limit: z.coerce.number().int().min(1).max(200).default(20) }) },
  responses: {
    200: json(
      z.object({
        recalls: z.array(
          z.object({ id: z.string(), query: z.string(), client: z.string(), project: z.string().nullable(), result_ids: z.array(z.string()), at: z.number() }),
        ),
      }),
      "Recalls",
    ),
    ...errors,
  },
});

const statsRoute = createRoute({
  method: "get",
  path: "/v1/lessons/stats",
  operationId: "lessonStats",
  tags: ["lessons"],
  summary: "Counts by type and signal, recalls per day (30 days), most recalled, projects and sync health",
  security,
  responses: {
    200: json(
      z.object({
        by_type: z.record(z.string(), z.number()),
        by_signal: z.record(z.string(), z.number()),
        recalls_per_day: z.array(z.object({ day: z.string(), count: z.number() })),
        top_recalled: z.array(z.object({ id: z.string(), title: z.string(), recalls: z.number() })),
        projects: z.array(z.object({ project: z.string().nullable(), lessons: z.number() })),
        sync: z.object({ transcripts: z.number(), pending: z.number(), failed: z.number(), last_synced_at: z.number().nullable() }),
      }),
      "Stats",
    ),
    ...errors,
  },
});

export const lessonRoutes = newRouter()
  .openapi(recallsRoute, async (c) => {
    const rows = await c.var.db
      .select()
      .from(lessonRecalls)
      .where(eq(lessonRecalls.userId, c.var.user.id))
      .orderBy(desc(lessonRecalls.createdAt))
      .limit(c.req.valid("query").limit)
      .all();
    return c.json(
      { recalls: rows.map((r) => ({ id: r.id, query: r.query, client: r.client, project: r.project, result_ids: r.resultIds, at: r.createdAt })) },
      200,
    );
  })
  .openapi(statsRoute, async (c) => c.json(await lessonStats(c.var.db, c.var.user.id, Date.now()), 200))
  .openapi(compactRoute, async (c) => c.json(await compactLessons(c.var.db, c.var.user.id, c.req.valid("json").dry_run, Date.now()), 200))
  .openapi(listRoute, async (c) => {
    const { q, project, type, limit, cursor } = c.req.valid("query");
    const userId = c.var.user.id;
    if (q) {
      const hits = await recall(
        c.var.db,
        { userId, query: q, project, type, limit, client: clientOf(c.req.header("x-engram-client")) },
        Date.now(),
        afterResponse(c),
      );
      return c.json({ lessons: hits.map((h) => ({ ...publicLesson(h.lesson), score: h.score })), next_cursor: null }, 200);
    }
    const rows = await listLessons(c.var.db, userId, { project, type, limit, cursor });
    return c.json({ lessons: rows.map(publicLesson), next_cursor: nextCursor(rows, limit, (l) => [l.createdAt, l.id]) }, 200);
  })
  .openapi(createRouteDef, async (c) => {
    await requireAuto(c.var.db, c.var.user.id, "lessons");
    const out = await remember(c.var.db, c.var.user.id, c.req.valid("json"), Date.now(), quotaOf(c.var.config.quotas, c.var.user.plan, "lessons"));
    return c.json({ lesson: publicLesson(out.lesson), created: out.created }, 201);
  })
  .openapi(getRoute, async (c) => c.json({ lesson: publicLesson(await getLesson(c.var.db, c.var.user.id, c.req.valid("param").id)) }, 200))
  .openapi(unlearnRoute, async (c) =>
    c.json({ lesson: publicLesson(await setUnlearned(c.var.db, c.var.user.id, c.req.valid("param").id, true, Date.now())) }, 200),
  )
  .openapi(restoreRoute, async (c) =>
    c.json(
      {
        lesson: publicLesson(
          await setUnlearned(c.var.db, c.var.user.id, c.req.valid("param").id, false, Date.now(), quotaOf(c.var.config.quotas, c.var.user.plan, "lessons")),
        ),
      },
      200,
    ),
  );
