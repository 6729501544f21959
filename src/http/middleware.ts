import { bodyLimit } from "hono/body-limit";
import { createMiddleware } from "hono/factory";
import { loadConfig } from "../config/config";
import { createDb } from "../db/client";
import { AppError } from "../lib/errors";
import type { AppEnv } from "./context";

/** Request id (echoed in `x-request-id`), validated config and the db handle for every request. */
export const requestContext = createMiddleware<AppEnv>(async (c, next) => {
  const incoming = c.req.header("x-request-id");
  const requestId = incoming && /^[\w.-]{1,64}$/.test(incoming) ? incoming : crypto.randomUUID();
  c.set("requestId", requestId);
  c.header("x-request-id", requestId);
  c.set("config", loadConfig(c.env));
  c.set("db", createDb(c.env.DB));
  await next();
});

/**
 * Rejects oversize bodies (413) and non-JSON bodies on writes (415) before any handler runs. `larger` raises
 * the limit for exact paths that take big bodies (a capability declares them).
 */
export const guardBodyWith = (larger: ReadonlyMap<string, number>) =>
  createMiddleware<AppEnv>(async (c, next) => {
    const method = c.req.method;
    if (method === "GET" || method === "HEAD" || method === "DELETE" || method === "OPTIONS") return next();
    const type = c.req.header("content-type") ?? "";
    const hasBody = c.req.header("content-length") !== "0" && c.req.raw.body !== null;
    if (hasBody && !/^application\/json\b/i.test(type)) {
      throw new AppError("unsupported_media_type", "request body must be application/json");
    }
    const maxSize = Math.max(c.var.config.maxBodyBytes, larger.get(c.req.path) ?? 0);
    return bodyLimit({
      maxSize,
      onError: () => {
        throw new AppError("payload_too_large", `request body exceeds ${maxSize} bytes`);
      },
    })(c, next);
  });

export const guardBody = guardBodyWith(new Map());
