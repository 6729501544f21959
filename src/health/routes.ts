import { createRoute, z } from "@hono/zod-openapi";
import { sql } from "drizzle-orm";
import { json, newRouter } from "../http/openapi";

const healthRoute = createRoute({
  method: "get",
  path: "/healthz",
  tags: ["meta"],
  summary: "Health: database reachable, which model answers",
  responses: {
    200: json(z.object({ ok: z.boolean(), db: z.boolean(), model: z.enum(["anthropic", "offline"]), vectors: z.enum(["local", "vectorize"]) }), "Health"),
  },
});

export const healthRoutes = newRouter().openapi(healthRoute, async (c) => {
  const db = await c.var.db
    .run(sql`SELECT 1`)
    .then(() => true)
    .catch(() => false);
  const { config } = c.var;
  return c.json({ ok: db, db, model: config.anthropicApiKey ? ("anthropic" as const) : ("offline" as const), vectors: config.vectorBackend }, 200);
});
