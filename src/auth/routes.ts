import { createRoute, z } from "@hono/zod-openapi";
import { quotaOf } from "../config/limits";
import { PLANS } from "../db/schema";
import { placeUser, shardCount, shardDb } from "../db/shards";
import { ErrorBody } from "../http/errors";
import { errors, json, jsonBody, newRouter, Ok, quotaErrors, security } from "../http/openapi";
import { AppError } from "../lib/errors";
import { createUser, issueKey, listKeys, revokeKey, rotateKey } from "./service";

export const User = z
  .object({
    id: z.string(),
    name: z.string().nullable(),
    email: z.string().nullable(),
    plan: z.enum(PLANS),
    review_mode: z.boolean(),
    created_at: z.number(),
  })
  .openapi("User");

const NewKey = z.object({ id: z.string(), key: z.string().describe("The API key. Shown once; store it now."), prefix: z.string() }).openapi("NewApiKey");

const KeyInfo = z
  .object({ id: z.string(), name: z.string().nullable(), prefix: z.string(), created_at: z.number(), revoked_at: z.number().nullable() })
  .openapi("ApiKey");

const CreateUserBody = z
  .strictObject({
    name: z.string().trim().min(1).max(200).optional(),
    email: z.email().max(320).optional(),
    plan: z.enum(PLANS).optional(),
    shard: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe("The database shard for the user's rows (default: a stable hash of the new user's id over the bound shards)"),
  })
  .openapi("CreateUser");

const createUserRoute = createRoute({
  method: "post",
  path: "/v1/admin/users",
  operationId: "createUser",
  tags: ["admin"],
  summary: "Create a user and its first API key (shown once)",
  security,
  request: jsonBody(CreateUserBody),
  responses: { 201: json(z.object({ user: User, api_key: NewKey }), "Created"), ...errors },
});

const listKeysRoute = createRoute({
  method: "get",
  path: "/v1/keys",
  operationId: "listKeys",
  tags: ["keys"],
  summary: "List your API keys (prefixes only)",
  security,
  responses: { 200: json(z.object({ keys: z.array(KeyInfo) }), "Keys"), ...errors },
});

const createKeyRoute = createRoute({
  method: "post",
  path: "/v1/keys",
  operationId: "createKey",
  tags: ["keys"],
  summary: "Issue an additional API key",
  description: "Your plan caps how many active keys you hold (403 quota_exceeded); revoked keys do not count.",
  security,
  request: jsonBody(z.strictObject({ name: z.string().trim().min(1).max(100).optional() })),
  responses: { 201: json(NewKey, "Created"), ...errors, ...quotaErrors },
});

const rotateKeyRoute = createRoute({
  method: "post",
  path: "/v1/keys/rotate",
  operationId: "rotateKey",
  tags: ["keys"],
  summary: "Issue a new key and revoke the one used for this call",
  security,
  responses: { 201: json(NewKey.extend({ revoked: z.string() }), "Rotated"), ...errors },
});

const revokeKeyRoute = createRoute({
  method: "delete",
  path: "/v1/keys/{id}",
  operationId: "revokeKey",
  tags: ["keys"],
  summary: "Revoke an API key",
  description: "Your last active key cannot be revoked (409): issue another first, or rotate it.",
  security,
  request: { params: z.object({ id: z.string().min(1).max(100) }) },
  responses: { 200: json(Ok, "Revoked"), ...errors, 409: json(ErrorBody, "It is your only active key (conflict)") },
});

export const authRoutes = newRouter()
  .openapi(createUserRoute, async (c) => {
    const { shard, ...input } = c.req.valid("json");
    const count = shardCount(c.env);
    if (shard !== undefined && shard >= count) throw new AppError("invalid_request", `shard must be below ${count}: this deployment binds ${count} shard(s)`);
    const place = (id: string) => {
      const at = shard ?? placeUser(id, count);
      return { shard: at, db: shardDb(c.env, at) };
    };
    const { user, apiKey } = await createUser(c.var.directory, place, input);
    return c.json({ user, api_key: apiKey }, 201);
  })
  .openapi(listKeysRoute, async (c) => c.json({ keys: await listKeys(c.var.directory, c.var.user.id) }, 200))
  .openapi(createKeyRoute, async (c) => {
    const quota = quotaOf(c.var.config.quotas, c.var.user.plan, "api_keys");
    return c.json(await issueKey(c.var.directory, c.var.user.id, quota, c.req.valid("json").name), 201);
  })
  .openapi(rotateKeyRoute, async (c) => c.json(await rotateKey(c.var.directory, c.var.user, Date.now()), 201))
  .openapi(revokeKeyRoute, async (c) => {
    await revokeKey(c.var.directory, c.var.user.id, c.req.valid("param").id, Date.now());
    return c.json({ ok: true as const }, 200);
  });
