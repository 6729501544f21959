import { createMiddleware } from "hono/factory";
import { loadConfig } from "../config/config";
import { dbOf } from "../db/shards";
import { AppError } from "../lib/errors";
import { parseGuardedJson } from "../lib/json-guard";
import { readBodyWithin } from "./body";
import type { AppEnv } from "./context";

/**
 * Request id (echoed in `x-request-id`), validated config and the db handles for every request: the directory,
 * and `db`, which is the directory until `requireUser` points it at the user's shard (src/db/shards.ts).
 */
export const requestContext = createMiddleware<AppEnv>(async (c, next) => {
  const incoming = c.req.header("x-request-id");
  const requestId = incoming && /^[\w.-]{1,64}$/.test(incoming) ? incoming : crypto.randomUUID();
  c.set("requestId", requestId);
  c.header("x-request-id", requestId);
  c.set("config", loadConfig(c.env));
  c.set("directory", dbOf(c.env.DB));
  c.set("db", dbOf(c.env.DB));
  await next();
});

const JSON_TYPE = /^application\/([\w.-]+\+)?json\s*(;|$)/i;
export const isJsonType = (type: string | undefined) => JSON_TYPE.test(type ?? "");
export const isJsonLinesType = (type: string | undefined) => /^application\/(x-ndjson|jsonl)\s*(;|$)/i.test(type ?? "");

/**
 * Rejects oversize bodies (413) and non-JSON bodies on writes (415) before any handler runs. A JSON
 * body is read once here and refused (400) when malformed, nested too deep or not valid Unicode, so
 * no handler starts writing on a body it cannot finish. Routes that require a body also pass
 * `requireJsonBody` (src/http/openapi.ts). `larger` raises the size limit for exact paths that take
 * big bodies (a capability declares them).
 */
export const guardBodyWith = (larger: ReadonlyMap<string, number>, jsonLines: ReadonlySet<string> = new Set()) =>
  createMiddleware<AppEnv>(async (c, next) => {
    const method = c.req.method;
    if (method === "GET" || method === "HEAD" || method === "DELETE" || method === "OPTIONS") return next();
    const type = c.req.header("content-type");
    const hasBody = c.req.header("content-length") !== "0" && c.req.raw.body !== null;
    // A path that takes JSON Lines (an archive import) checks each line itself, with its line number.
    const lines = jsonLines.has(c.req.path) && isJsonLinesType(type);
    if (hasBody && jsonLines.has(c.req.path) && !lines) throw new AppError("unsupported_media_type", "this route takes JSON Lines (application/x-ndjson)");
    if (hasBody && !lines && !isJsonType(type)) throw new AppError("unsupported_media_type", "request body must be application/json");
    const maxSize = Math.max(c.var.config.maxBodyBytes, larger.get(c.req.path) ?? 0);
    if (hasBody) {
      const text = await readBodyWithin(c.req.raw, maxSize);
      if (!lines && text.trim() !== "") parseGuardedJson(text);
      // Handlers that read the raw request (not through c.req) still get the body.
      c.req.raw = new Request(c.req.raw, { body: text });
    }
    await next();
  });

export const guardBody = guardBodyWith(new Map());

/** For routes that declare a JSON body: no body at all, or a body of another type, is 415 (never read as `{}`). */
export const requireJsonBody = createMiddleware<AppEnv>(async (c, next) => {
  const empty = c.req.header("content-length") === "0" || c.req.raw.body === null;
  if (empty || !isJsonType(c.req.header("content-type"))) {
    throw new AppError("unsupported_media_type", "this route takes a JSON body (content-type: application/json)");
  }
  await next();
});
