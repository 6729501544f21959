import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { ConfigError } from "../config/config";

/** The closed set of error codes, with the HTTP status each one answers. */
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
  internal: 500,
  config_error: 500,
  model_error: 502,
  model_overloaded: 503,
  continuation_expired: 410,
} as const satisfies Record<string, ContentfulStatusCode>;

export type ErrorCode = keyof typeof ERROR_STATUS;

export const ErrorBody = z
  .object({
    error: z.object({
      code: z.enum(Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]]),
      message: z.string(),
      request_id: z.string(),
    }),
  })
  .openapi("Error");

/** The one error class. `message` is shown to users; `detail` is internal and only logged. */
export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly detail?: string,
  ) {
    super(message);
    this.name = "AppError";
  }
  get status(): ContentfulStatusCode {
    return ERROR_STATUS[this.code];
  }
}

export const notFound = (what: string) => new AppError("not_found", `${what} not found`);

export function errorBody(code: ErrorCode, message: string, requestId: string) {
  return { error: { code, message, request_id: requestId } };
}

function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof ConfigError) return new AppError("config_error", err.message);
  if (err instanceof HTTPException) {
    if (err.status === 413) return new AppError("payload_too_large", "request body is too large");
    if (err.status === 400) return new AppError("invalid_request", err.message || "bad request");
    if (err.status === 401) return new AppError("unauthorized", err.message || "unauthorized");
  }
  return new AppError("internal", "internal error", describeFailure(err));
}

/**
 * A loggable description of an unexpected error. Database errors carry the bound parameters (user
 * content, key hashes) in their message, so only the error's class and its first line are kept.
 */
export function describeFailure(err: unknown): string {
  if (!(err instanceof Error)) return typeof err;
  const first = (e: Error) => e.message.split("\n")[0]?.replace(/params:.*$/i, "").slice(0, 200) ?? "";
  const cause = err.cause instanceof Error ? ` (cause: ${err.cause.name}: ${first(err.cause)})` : "";
  return `${err.name}: ${first(err)}${cause}`;
}

export function onError(err: unknown, c: Context) {
  const e = toAppError(err);
  const requestId = (c.get("requestId") as string | undefined) ?? "unknown";
  if (e.status >= 500) console.error(JSON.stringify({ request_id: requestId, code: e.code, detail: e.detail ?? e.message }));
  return c.json(errorBody(e.code, e.message, requestId), e.status);
}

export function onNotFound(c: Context) {
  return onError(new AppError("not_found", `no route for ${c.req.method} ${new URL(c.req.url).pathname}`), c);
}
