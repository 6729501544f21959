import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { ConfigError } from "../config/config";
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

type Route = { method: string; path: string };

/**
 * Which methods a path answers, from the app's routes (`/v1/sessions/:id`...; middleware, `ALL` and
 * wildcard paths left out). Built once, on the first request that matched no route.
 */
export function allowedMethods(routes: () => readonly Route[]): (path: string) => string[] {
  let table: { pattern: RegExp; methods: Set<string> }[] | undefined;
  const build = () => {
    const byPath = new Map<string, Set<string>>();
    for (const r of routes()) {
      if (r.method === "ALL" || r.path.includes("*")) continue;
      const methods = byPath.get(r.path) ?? new Set<string>();
      methods.add(r.method);
      byPath.set(r.path, methods);
    }
    const segment = (s: string) => (s.startsWith(":") ? "[^/]+" : s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
    return [...byPath].map(([path, methods]) => ({ pattern: new RegExp(`^${path.split("/").map(segment).join("/")}$`), methods }));
  };
  return (path) => {
    table ??= build();
    const allowed = new Set<string>();
    for (const { pattern, methods } of table) if (pattern.test(path)) for (const m of methods) allowed.add(m);
    return [...allowed].sort();
  };
}

/** 404 for a path no route has; 405 with `Allow` for a path that exists under other methods. */
export function onNotFound(allowed: (path: string) => string[] = () => []) {
  return (c: Context) => {
    const path = new URL(c.req.url).pathname;
    const methods = allowed(path);
    if (methods.length === 0 || methods.includes(c.req.method)) return onError(new AppError("not_found", `no route for ${c.req.method} ${path}`), c);
    c.header("allow", methods.join(", "));
    return onError(new AppError("method_not_allowed", `${c.req.method} is not allowed on ${path}: use ${methods.join(" or ")}`), c);
  };
}
