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

export const security = [{ bearer: [] }];

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
