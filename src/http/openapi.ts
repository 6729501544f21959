import { OpenAPIHono, type RouteConfig, z } from "@hono/zod-openapi";
import { AppError } from "../lib/errors";
import { issueText } from "../lib/issues";
import type { AppEnv } from "./context";
import { ErrorBody } from "./errors";
import { requireJsonBody } from "./middleware";

/** A route declaring a required JSON body also gets `requireJsonBody`, so a bodiless request is never validated as `{}`. */
function guarded<R extends RouteConfig>(route: R): R {
  if (!route.request?.body?.required || !route.request.body.content["application/json"]) return route;
  const own = route.middleware ? (Array.isArray(route.middleware) ? route.middleware : [route.middleware]) : [];
  return { ...route, middleware: [requireJsonBody, ...own] };
}

/**
 * Every router shares one validation hook (a zod failure becomes the one error shape) and the JSON
 * body requirement above.
 */
export function newRouter() {
  const app = new OpenAPIHono<AppEnv>({
    defaultHook: (result, c) => {
      if (!result.success) {
        const issues = result.error.issues.slice(0, 5).map((i) => {
          const key = String(i.path[0] ?? "");
          // A query parameter that is missing reads as NaN too: say it is required.
          if (result.target === "query" && key && c.req.query(key) === undefined) return `${key}: required`;
          return issueText(i, "body");
        });
        throw new AppError("invalid_request", issues.join("; "));
      }
    },
  });
  const register = app.openapi;
  app.openapi = ((route, handler, hook) => register(guarded(route), handler, hook)) as typeof register;
  return app;
}

/** A required JSON request body. */
export const jsonBody = <T extends z.ZodType>(schema: T) => ({
  body: { required: true, content: { "application/json": { schema } } },
});

export const json = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { "application/json": { schema } },
});

const err = (description: string) => json(ErrorBody, description);

const retryAfter = { "Retry-After": { description: "Seconds to wait before trying again", schema: { type: "integer" as const, minimum: 1 } } };

/** 429 `rate_limited`: every authenticated route is rate limited per API key and per user (admin routes per client address). */
export const rateLimited = {
  ...err(
    "Too many requests (rate_limited) for this API key, user or client address; wait Retry-After seconds. " +
      "Chat turns and bulk imports count as several requests.",
  ),
  headers: retryAfter,
};

/** 503 `user_moving`: an admin is moving the user to another database; their writes wait meanwhile. */
export const userMoving = {
  ...err(
    "Your account is being moved to another database (user_moving): writes, and reads that record something, are paused for a few seconds; retry after Retry-After seconds.",
  ),
  headers: retryAfter,
};

/** Error responses most authenticated routes can give. */
export const errors = {
  400: err("Invalid request"),
  401: err("Missing or invalid credentials"),
  404: err("Not found"),
  429: rateLimited,
} as const;

/** For routes that store a new object the plan caps: over the cap is 403 `quota_exceeded`, and nothing is written. */
export const quotaErrors = {
  403: err("The plan's quota for this kind of object is reached (quota_exceeded); nothing was written. Delete some first."),
} as const;

/** For the routes that write a kind of memory the user's settings govern: 403 `forbidden` unless its mode is `auto`. */
export const consentErrors = {
  403: err("Your memory settings (GET /v1/settings) do not let this kind of memory be written without you (forbidden); nothing was written."),
} as const;

/** Both: the plan's quota, or the user's memory settings, refused the write (the code says which); nothing was written. */
export const quotaOrConsentErrors = {
  403: err(
    "Nothing was written: the plan's quota for this kind of object is reached (quota_exceeded), or your memory settings (GET /v1/settings) do not let this kind of memory be written without you (forbidden).",
  ),
} as const;

export const security = [{ bearer: [] }];

/**
 * `schema` or null. For a registered schema (`.openapi("Name")`) use this, not `.nullable()`: the generator
 * (@asteasolutions/zod-to-openapi 9.1) writes a nullable reference as the bare `$ref`, dropping the null
 * (upstream asteasolutions/zod-to-openapi#387); a union is written `anyOf: [$ref, {type: "null"}]`.
 */
export const orNull = <T extends z.ZodType>(schema: T) => z.union([schema, z.null()]);

type DocOperation = { responses?: Record<string, unknown> };

const OPERATION_METHODS = new Set(["get", "put", "post", "delete", "patch", "head", "options", "trace"]);

/**
 * Declares on every operation the statuses the app's shared middleware (src/app.ts) answers before or around its
 * handler, where the route did not declare them itself: 401 and 429 on /v1 (auth, rate limits), 400/413/415 on
 * writes (body guard), 503 on a user's routes (writes paused while an admin moves the user, src/db/fence.ts), 500 everywhere.
 */
export function declareSharedResponses<D extends { paths?: object }>(doc: D): D {
  for (const [path, item] of Object.entries(doc.paths ?? {}) as [string, object | undefined][]) {
    for (const [method, value] of Object.entries(item ?? {})) {
      if (!OPERATION_METHODS.has(method)) continue;
      const op = value as DocOperation;
      const responses = (op.responses ??= {});
      const add = (status: number, response: unknown) => {
        responses[String(status)] ??= response;
      };
      if (path.startsWith("/v1/")) {
        add(401, errorResponse("Missing or invalid credentials (unauthorized)"));
        add(429, { ...errorResponse(rateLimited.description), headers: rateLimited.headers });
      }
      if (method === "post" || method === "put" || method === "patch") {
        add(400, errorResponse("Invalid request: malformed or too deeply nested JSON, or a field that fails validation (invalid_request)"));
        add(413, errorResponse("The body is larger than MAX_BODY_BYTES (payload_too_large)"));
        add(415, errorResponse("A body that is not application/json, or none where one is required (unsupported_media_type)"));
      }
      // A read that records something (a search's embedding cost) waits like a write while the old shard is fenced.
      if ((path.startsWith("/v1/") && !path.startsWith("/v1/admin/")) || path === "/mcp")
        add(503, { ...errorResponse(userMoving.description), headers: userMoving.headers });
      add(500, errorResponse("An internal error or an invalid configuration (internal, config_error); quote the request id"));
    }
  }
  return doc;
}

const errorResponse = (description: string) => ({ description, content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } });

/** A caller-chosen identifier (site, project, session): safe in paths, logs and Durable Object names. */
export const Slug = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .regex(/^[\w.:-]+$/, "may contain letters, digits, _ . : -");

/** The last millisecond of year 9999: later dates cannot be written as ISO 8601 (`toISOString` throws). */
export const MAX_EPOCH_MS = 253_402_300_799_999;

/** A point in time as epoch milliseconds, within what ISO 8601 can express. */
export const EpochMs = z.number().int().min(0).max(MAX_EPOCH_MS, "must be a date no later than the year 9999 (epoch milliseconds)");

export const Ok = z.object({ ok: z.literal(true) }).openapi("Ok");
