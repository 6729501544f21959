import { createRoute, z } from "@hono/zod-openapi";
import { sql } from "drizzle-orm";
import { json, newRouter } from "../http/openapi";

const Health = z.object({ ok: z.boolean(), db: z.boolean(), model: z.enum(["anthropic", "offline"]), vectors: z.enum(["local", "vectorize"]) });

const healthRoute = createRoute({
  method: "get",
  path: "/healthz",
  operationId: "getHealth",
  tags: ["meta"],
  // Open to load balancers and probes: no credentials.
  security: [],
  summary: "Health: database reachable, which model answers",
  responses: {
    200: json(Health, "Healthy"),
    503: json(Health, "The database is unreachable"),
  },
});

export const healthRoutes = newRouter().openapi(healthRoute, async (c) => {
  const db = await c.var.db
    .run(sql`SELECT 1`)
    .then(() => true)
    .catch(() => false);
  const { config } = c.var;
  const body = { ok: db, db, model: config.anthropicApiKey ? ("anthropic" as const) : ("offline" as const), vectors: config.vectorBackend };
  return db ? c.json(body, 200) : c.json(body, 503);
});
