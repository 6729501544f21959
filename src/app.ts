import { authRoutes } from "./auth/routes";
import { brainRoutes } from "./brain/routes";
import { requireAdmin, requireUser } from "./auth/middleware";
import { chatRoutes } from "./chat/routes";
import { healthRoutes } from "./health/routes";
import { memoryRoutes } from "./memory/routes";
import { onError, onNotFound } from "./http/errors";
import { guardBody, requestContext } from "./http/middleware";
import { newRouter } from "./http/openapi";
import { sessionRoutes } from "./sessions/routes";

export const VERSION = "0.1.0";

/** Builds the HTTP app: shared middleware, then each capability's routes, then the OpenAPI document. */
export function createApp() {
  const app = newRouter();
  app.use("*", requestContext);
  app.use("*", guardBody);
  // Every /v1 route is authenticated: admin routes by ADMIN_TOKEN, all others by a user's key.
  app.use("/v1/*", async (c, next) => (c.req.path.startsWith("/v1/admin/") ? requireAdmin(c, next) : requireUser(c, next)));
  app.onError(onError);
  app.notFound(onNotFound);

  app.route("/", healthRoutes);
  app.route("/", authRoutes);
  app.route("/", chatRoutes);
  app.route("/", sessionRoutes);
  app.route("/", brainRoutes);
  app.route("/", memoryRoutes);

  app.openAPIRegistry.registerComponent("securitySchemes", "bearer", {
    type: "http",
    scheme: "bearer",
    description: "A user's API key, or ADMIN_TOKEN for /v1/admin/*",
  });
  app.doc31("/openapi.json", {
    openapi: "3.1.0",
    info: { title: "engram", version: VERSION, description: "Memory layer and chat backend for Claude-based assistants." },
  });
  return app;
}
