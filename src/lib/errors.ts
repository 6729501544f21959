/**
 * The one error class and its closed set of codes. Domain code throws these; the HTTP edge
 * (src/http/errors.ts) maps each code to a status and the one error body.
 */
export const ERROR_CODES = [
  "invalid_request",
  "unauthorized",
  "forbidden",
  "not_found",
  "method_not_allowed",
  "conflict",
  "session_busy",
  "tool_pending",
  "payload_too_large",
  "limit_exceeded",
  "unsupported_media_type",
  "rate_limited",
  "quota_exceeded",
  "internal",
  "config_error",
  "model_error",
  "model_overloaded",
  "continuation_expired",
  "user_moving",
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** `message` is shown to users; `detail` is internal and only logged. */
export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly detail?: string,
    /** Sent as Retry-After (seconds) by the HTTP edge. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = "AppError";
  }
}

export const notFound = (what: string) => new AppError("not_found", `${what} not found`);

/**
 * A loggable description of an unexpected error. Database errors carry the bound parameters (user
 * content, key hashes) in their message, so only the error's class and its first line are kept.
 */
export function describeFailure(err: unknown): string {
  if (!(err instanceof Error)) return typeof err;
  const first = (e: Error) =>
    e.message
      .split("\n")[0]
      ?.replace(/params:.*$/i, "")
      .slice(0, 200) ?? "";
  const cause = err.cause instanceof Error ? ` (cause: ${err.cause.name}: ${first(err.cause)})` : "";
  return `${err.name}: ${first(err)}${cause}`;
}
