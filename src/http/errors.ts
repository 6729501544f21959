import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { ConfigError } from "../config/config";
import { isFenced, userMoving } from "../db/fence";
import { AppError, describeFailure, ERROR_CODES, type ErrorCode } from "../lib/errors";

/** The HTTP status each error code answers. */
export const ERROR_STATUS = {
  invalid_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  session_busy: 409,
  tool_pending: 409,
  payload_too_large: 413,
  limit_exceeded: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  quota_exceeded: 403,
  internal: 500,
  config_error: 500,
  model_error: 502,
  model_overloaded: 503,
  continuation_expired: 410,
  user_moving: 503,
} as const satisfies Record<ErrorCode, ContentfulStatusCode>;

export const ErrorBody = z
  .object({
    error: z.object({
      code: z.enum(ERROR_CODES),
      message: z.string(),
      request_id: z.string(),
    }),
  })
  .openapi("Error");

export function errorBody(code: ErrorCode, message: string, requestId: string) {
  return { error: { code, message, request_id: requestId } };
}

function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof ConfigError) return new AppError("config_error", err.message);
  if (isFenced(err)) return userMoving();
  if (err instanceof HTTPException) {
    if (err.status === 413) return new AppError("payload_too_large", "request body is too large");
    if (err.status === 415) return new AppError("unsupported_media_type", "request body must be application/json");
    if (err.status === 400) return new AppError("invalid_request", err.message || "bad request");
    if (err.status === 401) return new AppError("unauthorized", err.message || "unauthorized");
  }
  return new AppError("internal", "internal error", describeFailure(err));
}

export function onError(err: unknown, c: Context) {
  const e = toAppError(err);
  const status = ERROR_STATUS[e.code];
  const requestId = (c.get("requestId") as string | undefined) ?? "unknown";
  if (status >= 500) console.error(JSON.stringify({ request_id: requestId, code: e.code, detail: e.detail ?? e.message }));
  if (e.retryAfterSeconds !== undefined) c.header("retry-after", String(e.retryAfterSeconds));
  return c.json(errorBody(e.code, e.message, requestId), status);
}

type RouteRef = { method: string; path: string };

/** A route path (`/v1/sessions/:id`) as a regular expression over request paths; a parameter is one segment. */
function pathPattern(path: string): RegExp {
  const segments = path.split("/").map((s) => (s.startsWith(":") ? "[^/]+" : s === "*" ? ".*" : s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")));
  return new RegExp(`^${segments.join("/")}$`);
}

/**
 * Answers a request no route took: `405 method_not_allowed` with `Allow` when its path exists under other
 * methods, else `404 not_found`. `routes` is read on first use, once every route is mounted.
 */
export function onNotFound(routes: () => readonly RouteRef[]) {
  let table: { method: string; pattern: RegExp }[] | undefined;
  return (c: Context) => {
    table ??= routes()
      .filter((r) => r.method !== "ALL")
      .map((r) => ({ method: r.method, pattern: pathPattern(r.path) }));
    const path = new URL(c.req.url).pathname;
    const allowed = [...new Set(table.filter((r) => r.pattern.test(path)).map((r) => r.method))];
    if (!allowed.length) return onError(new AppError("not_found", `no route for ${c.req.method} ${path}`), c);
    // A GET route answers HEAD too.
    if (allowed.includes("GET")) allowed.push("HEAD");
    c.header("allow", allowed.join(", "));
    return onError(new AppError("method_not_allowed", `${c.req.method} is not allowed on ${path}; allowed: ${allowed.join(", ")}`), c);
  };
}
