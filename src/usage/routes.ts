/** Reading usage and estimated cost: the caller's own rows only, per day, kind and model, or per session turn. */
import { createRoute, z } from "@hono/zod-openapi";
import { and, asc, desc, eq, gte, sql } from "drizzle-orm";
import { snakeRow } from "../db/public-row";
import { sessions, usage } from "../db/schema";
import { errors, json, newRouter, security } from "../http/openapi";
import { notFound } from "../lib/errors";
import { chatBudget, DAY_MS, dayStart } from "./budget";

const Totals = z
  .object({
    input_tokens: z.number().describe("Uncached input tokens"),
    output_tokens: z.number(),
    cache_read_tokens: z.number(),
    cache_creation_tokens: z.number(),
    cost_usd: z.number().describe("Estimated from the models' prices when each call was recorded"),
    calls: z.number().describe("Usage rows: one per turn segment, consolidation run, summary or embedding batch"),
  })
  .openapi("UsageTotals");

const Budget = z
  .object({
    limit: z.number().nullable().describe("Chat tokens a day; null: no limit"),
    used: z.number(),
    remaining: z.number().nullable(),
    resets_at: z.number(),
  })
  .openapi("ChatBudget");

const sums = {
  input_tokens: sql<number>`coalesce(sum(${usage.inputTokens}), 0)`,
  output_tokens: sql<number>`coalesce(sum(${usage.outputTokens}), 0)`,
  cache_read_tokens: sql<number>`coalesce(sum(${usage.cacheReadTokens}), 0)`,
  cache_creation_tokens: sql<number>`coalesce(sum(${usage.cacheCreationTokens}), 0)`,
  cost_usd: sql<number>`coalesce(round(sum(${usage.costUsd}), 6), 0)`,
  calls: sql<number>`count(*)`,
};

const usageRoute = createRoute({
  method: "get",
  path: "/v1/usage",
  operationId: "getUsage",
  tags: ["usage"],
  summary: "Your token usage and estimated cost: totals, per day, per kind and per model, and today's chat budget",
  security,
  request: { query: z.object({ days: z.coerce.number().int().min(1).max(90).default(30).describe("UTC days back, today included") }) },
  responses: {
    200: json(
      z.object({
        since: z.number(),
        totals: Totals,
        by_day: z.array(Totals.extend({ day: z.string() })),
        by_kind: z.array(Totals.extend({ kind: z.string() })),
        by_model: z.array(Totals.extend({ model: z.string().nullable() })),
        chat_budget: Budget,
      }),
      "Usage",
    ),
    ...errors,
  },
});

const SessionIdParam = z.object({ id: z.string().trim().min(1).max(100) });

const sessionUsageRoute = createRoute({
  method: "get",
  path: "/v1/sessions/{id}/usage",
  operationId: "getSessionUsage",
  tags: ["usage"],
  summary: "A session's usage and estimated cost: totals and one row per turn segment (and per history summary)",
  security,
  request: { params: SessionIdParam },
  responses: {
    200: json(
      z.object({
        session_id: z.string(),
        totals: Totals,
        turns: z.array(Totals.omit({ calls: true }).extend({ kind: z.string(), model: z.string().nullable(), created_at: z.number() })),
      }),
      "Session usage",
    ),
    ...errors,
  },
});

export const usageRoutes = newRouter()
  .openapi(usageRoute, async (c) => {
    const { db, user, config } = c.var;
    const now = Date.now();
    const since = dayStart(now) - (c.req.valid("query").days - 1) * DAY_MS;
    const mine = and(eq(usage.userId, user.id), gte(usage.createdAt, since));
    const day = sql<string>`strftime('%Y-%m-%d', ${usage.createdAt} / 1000, 'unixepoch')`;
    const [totals, byDay, byKind, byModel] = await db.batch([
      db.select(sums).from(usage).where(mine),
      db
        .select({ day, ...sums })
        .from(usage)
        .where(mine)
        .groupBy(day)
        .orderBy(desc(day)),
      db
        .select({ kind: usage.kind, ...sums })
        .from(usage)
        .where(mine)
        .groupBy(usage.kind)
        .orderBy(asc(usage.kind)),
      db
        .select({ model: usage.model, ...sums })
        .from(usage)
        .where(mine)
        .groupBy(usage.model)
        .orderBy(asc(usage.model)),
    ]);
    const empty = { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_creation_tokens: 0, cost_usd: 0, calls: 0 };
    return c.json(
      { since, totals: totals[0] ?? empty, by_day: byDay, by_kind: byKind, by_model: byModel, chat_budget: await chatBudget(db, user.id, config, now) },
      200,
    );
  })
  .openapi(sessionUsageRoute, async (c) => {
    const { db, user } = c.var;
    // Read here rather than through the sessions folder, which records usage: dependencies point one way.
    const session = await db
      .select({ id: sessions.id })
      .from(sessions)
      .where(and(eq(sessions.id, c.req.valid("param").id), eq(sessions.userId, user.id)))
      .get();
    if (!session) throw notFound("session");
    const rows = await db
      .select()
      .from(usage)
      .where(and(eq(usage.userId, user.id), eq(usage.sessionId, session.id)))
      .orderBy(asc(usage.createdAt), asc(usage.id))
      .limit(1000);
    const turns = rows.map((r) =>
      snakeRow(r, ["kind", "model", "inputTokens", "outputTokens", "cacheReadTokens", "cacheCreationTokens", "costUsd", "createdAt"]),
    );
    const add = (k: "input_tokens" | "output_tokens" | "cache_read_tokens" | "cache_creation_tokens" | "cost_usd") => turns.reduce((n, t) => n + t[k], 0);
    const totals = {
      input_tokens: add("input_tokens"),
      output_tokens: add("output_tokens"),
      cache_read_tokens: add("cache_read_tokens"),
      cache_creation_tokens: add("cache_creation_tokens"),
      cost_usd: Math.round(add("cost_usd") * 1e6) / 1e6,
      calls: turns.length,
    };
    return c.json({ session_id: session.id, totals, turns }, 200);
  });
