import { IMPORT_MAX_BYTES } from "./account/import";
import { accountRoutes } from "./account/routes";
import { archiveRoutes, IMPORT_PATH } from "./account/routes-archive";
import { moveRoutes } from "./account/routes-move";
import { requireAdmin, requireUser } from "./auth/middleware";
import { authRoutes } from "./auth/routes";
import { contextLogRetention } from "./chat/retention";
import type { Env } from "./config/env";
import type { Registry } from "./core/capability";
import { runScheduled } from "./core/cron";
import { handleQueue, type QueueMessage } from "./core/queue";
import { healthRoutes } from "./health/routes";
import { cors } from "./http/cors";
import { onError, onNotFound } from "./http/errors";
import { guardBodyWith, requestContext } from "./http/middleware";
import { declareSharedResponses, newRouter } from "./http/openapi";
import { rateLimitAdmin, rateLimitUser } from "./http/rate-limit";
import { mcpRoutes } from "./mcp/routes";
import { withOAuth } from "./oauth/provider";
import { oauthRoutes } from "./oauth/routes";
import { overviewRoutes } from "./overview/routes";
import { sessionErasureSweep } from "./sessions/erasure";
import { sessionRoutes } from "./sessions/routes";
import { chatRoutes } from "./sessions/routes-chat";

export const VERSION = "0.1.0";

/** The HTTP app: shared middleware, the core's routes, each capability's routes, then the OpenAPI document. */
export function createApp(registry: Registry) {
  const app = newRouter();
  app.use("*", requestContext);
  // Before auth: a browser's preflight carries no credentials.
  app.use("*", cors);
  app.use("*", guardBodyWith(new Map([...registry.bodyLimits, [IMPORT_PATH, IMPORT_MAX_BYTES]]), new Set([IMPORT_PATH])));
  // Every /v1 route is authenticated: admin routes by ADMIN_TOKEN (rate limited per client address first),
  // all others by a user's key (then rate limited per key and per user).
  app.use("/v1/*", async (c, next) =>
    c.req.path.startsWith("/v1/admin/")
      ? rateLimitAdmin(c, async () => {
          await requireAdmin(c, next);
        })
      : requireUser(c, async () => {
          await rateLimitUser(c, next);
        }),
  );
  app.onError(onError);
  app.notFound(onNotFound(() => app.routes));

  app.route("/", healthRoutes);
  app.route("/", authRoutes);
  app.route("/", accountRoutes(registry));
  app.route("/", moveRoutes);
  app.route("/", archiveRoutes(registry));
  app.route("/", chatRoutes(registry));
  app.route("/", sessionRoutes(registry.tools));
  app.route("/", overviewRoutes(registry));
  for (const capability of registry.capabilities) if (capability.routes) app.route("/", capability.routes);
  app.route("/", mcpRoutes(registry));
  app.route("/", oauthRoutes);

  app.openAPIRegistry.registerComponent("securitySchemes", "bearer", {
    type: "http",
    scheme: "bearer",
    description: "A user's API key, or ADMIN_TOKEN for /v1/admin/*",
  });
  // `servers` is the origin that served the document, so a client generated from it talks to the same deployment.
  app.get("/openapi.json", (c) => {
    const doc = app.getOpenAPI31Document({
      openapi: "3.1.0",
      info: { title: "engram", version: VERSION, description: "Memory layer and chat backend for Claude-based assistants." },
      servers: [{ url: new URL(c.req.url).origin, description: "The deployment that served this document" }],
    });
    return c.json(declareSharedResponses(doc));
  });
  return app;
}

/** The Worker's handlers for one registry: HTTP (OAuth for /mcp in front of the app), the observation queue and cron. */
export function createWorker(registry: Registry) {
  const app = createApp(registry);
  return {
    fetch: withOAuth(app),
    queue: (batch, env) => handleQueue(registry.queueKinds, batch, env),
    scheduled: async (controller, env, ctx) => {
      ctx.waitUntil(runScheduled([...registry.cronJobs, contextLogRetention, sessionErasureSweep], env, controller.scheduledTime));
    },
  } satisfies ExportedHandler<Env, QueueMessage>;
}
