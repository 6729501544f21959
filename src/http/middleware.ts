import { createMiddleware } from "hono/factory";
import { bodyLimit } from "hono/body-limit";
import { loadConfig } from "../config/config";
import { createDb } from "../db/client";
import type { AppEnv } from "./context";
import { AppError } from "../lib/errors";

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

/** Rejects oversize bodies (413) and non-JSON bodies on writes (415) before any handler runs. */
export const guardBody = createMiddleware<AppEnv>(async (c, next) => {
  const method = c.req.method;
  if (method === "GET" || method === "HEAD" || method === "DELETE" || method === "OPTIONS") return next();
  const type = c.req.header("content-type") ?? "";
  const hasBody = c.req.header("content-length") !== "0" && c.req.raw.body !== null;
  if (hasBody && !/^application\/json\b/i.test(type)) {
    throw new AppError("unsupported_media_type", "request body must be application/json");
  }
  return bodyLimit({
    maxSize: c.var.config.maxBodyBytes,
    onError: () => {
      throw new AppError("payload_too_large", `request body exceeds ${c.var.config.maxBodyBytes} bytes`);
    },
  })(c, next);
});
