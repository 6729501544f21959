import { OpenAPIHono, z } from "@hono/zod-openapi";
import type { AppEnv } from "./context";
import { AppError } from "../lib/errors";
import { ErrorBody } from "./errors";

/** Every router shares one validation hook: a zod failure becomes the one error shape. */
export function newRouter() {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) {
        const issues = result.error.issues.slice(0, 5).map((i) => `${i.path.join(".") || "body"}: ${i.message}`);
        throw new AppError("invalid_request", issues.join("; "));
      }
    },
  });
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

/** Error responses most authenticated routes can give. */
export const errors = {
  400: err("Invalid request"),
  401: err("Missing or invalid credentials"),
  404: err("Not found"),
} as const;

export const security = [{ bearer: [] }];

/** A caller-chosen identifier (site, project, session): safe in paths, logs and Durable Object names. */
export const Slug = z.string().trim().min(1).max(100).regex(/^[\w.:-]+$/, "may contain letters, digits, _ . : -");

export const Ok = z.object({ ok: z.literal(true) }).openapi("Ok");
