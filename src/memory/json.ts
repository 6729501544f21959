import { z } from "@hono/zod-openapi";
import type { Json } from "../db/schema";

const isJson = (v: unknown): v is Json =>
  v === null ||
  typeof v === "string" ||
  typeof v === "boolean" ||
  (typeof v === "number" && Number.isFinite(v)) ||
  (Array.isArray(v) ? v.every(isJson) : typeof v === "object" && Object.values(v).every(isJson));

/**
 * Any JSON value, in HTTP schemas. (Tool schemas use `z.json()`, which the OpenAPI generator cannot
 * render: its recursion overflows the stack.)
 */
export const JsonValue = z
  .custom<Json>(isJson, "must be a JSON value")
  .openapi({ type: ["string", "number", "boolean", "object", "array", "null"], description: "any JSON value" });
