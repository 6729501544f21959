/**
 * `GET /v1/overview`: what a client's first screen needs in one request. The core reads its own rows
 * (sessions, today's usage); every capability adds its section through `Capability.overview` on the
 * registry, so this module never imports one. A capability's section failing does not fail the page:
 * it is reported under `unavailable` and the rest is served.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { and, count, desc, eq, gte, sql } from "drizzle-orm";
import type { OverviewPart, Registry } from "../core/capability";
import { sessions, usage } from "../db/schema";
import { errors, json, newRouter, security } from "../http/openapi";

const Recent = z.object({ kind: z.string(), id: z.string(), title: z.string(), at: z.number() });

const Overview = z
  .object({
    counts: z
      .record(z.string(), z.number())
      .describe("Counts under stable keys (sessions, facts, memory_entries, ...); a missing key means no capability reports it"),
    recent: z.array(Recent).describe("Newest items across capabilities, newest first (at most 10)"),
    sections: z.array(z.string()).describe("The capabilities that contributed"),
    unavailable: z.array(z.string()).describe("Capabilities whose section could not be read just now"),
    today: z.object({ cost_usd: z.number(), calls: z.number() }).describe("Model usage since 00:00 UTC"),
    generated_at: z.number(),
  })
  .openapi("Overview");

const overviewRoute = createRoute({
  method: "get",
  path: "/v1/overview",
  operationId: "getOverview",
  tags: ["overview"],
  summary: "Counts and recent items across everything engram holds for you, for a client's first screen",
  security,
  responses: { 200: json(Overview, "Overview"), ...errors },
});

export const overviewRoutes = (registry: Registry) =>
  newRouter().openapi(overviewRoute, async (c) => {
    const { db, config, user } = c.var;
    const now = Date.now();
    const dayStart = now - (now % 86_400_000);
    const contributors = registry.capabilities.flatMap((cap) => (cap.overview ? [{ name: cap.name, read: cap.overview }] : []));
    const [sessionCount, recentSessions, today, parts] = await Promise.all([
      db.select({ n: count() }).from(sessions).where(eq(sessions.userId, user.id)).get(),
      db
        .select({ id: sessions.id, title: sessions.title, at: sessions.updatedAt })
        .from(sessions)
        .where(eq(sessions.userId, user.id))
        .orderBy(desc(sessions.updatedAt), desc(sessions.id))
        .limit(3)
        .all(),
      db
        .select({ cost: sql<number>`coalesce(round(sum(${usage.costUsd}), 6), 0)`, calls: count() })
        .from(usage)
        .where(and(eq(usage.userId, user.id), gte(usage.createdAt, dayStart)))
        .get(),
      Promise.allSettled(contributors.map((p) => p.read({ db, config, userId: user.id, now }))),
    ]);
    const counts: Record<string, number> = { sessions: sessionCount?.n ?? 0 };
    const recent = recentSessions.map((s) => ({ kind: "session", id: s.id, title: s.title ?? "(untitled)", at: s.at }));
    const sections: string[] = [];
    const unavailable: string[] = [];
    parts.forEach((result, i) => {
      const name = contributors[i]?.name ?? "?";
      if (result.status === "rejected") {
        console.error(JSON.stringify({ msg: "overview section failed", capability: name, request_id: c.var.requestId }));
        unavailable.push(name);
        return;
      }
      const part: OverviewPart = result.value;
      sections.push(name);
      Object.assign(counts, part.counts);
      recent.push(...(part.recent ?? []));
    });
    recent.sort((a, b) => b.at - a.at);
    return c.json(
      {
        counts,
        recent: recent.slice(0, 10),
        sections,
        unavailable,
        today: { cost_usd: today?.cost ?? 0, calls: today?.calls ?? 0 },
        generated_at: now,
      },
      200,
    );
  });
