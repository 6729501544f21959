import { createRoute, z } from "@hono/zod-openapi";
import { quotaOf } from "../config/limits";
import { errors, json, jsonBody, newRouter, quotaErrors, security } from "../http/openapi";
import { createConnection, deleteConnection, getConnection, listConnections, publicConnection, updateConnection } from "./connections";
import { JsonValue } from "./json";
import { depsOf } from "./routes-facts";

const Connection = z
  .object({ id: z.string(), name: z.string(), active: z.boolean(), learned_info: z.record(z.string(), z.unknown()), created_at: z.number() })
  .openapi("Connection");

const LearnedInfo = z.record(z.string().min(1).max(100), JsonValue);
const Name = z.string().trim().min(1).max(100);
const IdParam = z.object({ id: z.string().min(1).max(100) });

const route = <R extends Parameters<typeof createRoute>[0]>(r: R) => createRoute({ tags: ["connections"], security, ...r });

const createRouteDef = route({
  method: "post",
  path: "/v1/connections",
  operationId: "createConnection",
  summary: "Add a tool connection; its learned info is injected while it is active",
  description: "Your plan caps how many connections you hold (403 quota_exceeded, nothing written).",
  request: jsonBody(z.strictObject({ name: Name, active: z.boolean().optional(), learned_info: LearnedInfo.optional() }).openapi("NewConnection")),
  responses: { 201: json(Connection, "Created"), ...errors, ...quotaErrors },
});

const listRouteDef = route({
  method: "get",
  path: "/v1/connections",
  operationId: "listConnections",
  summary: "Your connections",
  responses: { 200: json(z.object({ connections: z.array(Connection) }), "Connections"), ...errors },
});

const getRouteDef = route({
  method: "get",
  path: "/v1/connections/{id}",
  operationId: "getConnection",
  summary: "One connection",
  request: { params: IdParam },
  responses: { 200: json(Connection, "Connection"), ...errors },
});

const patchRouteDef = route({
  method: "patch",
  path: "/v1/connections/{id}",
  operationId: "updateConnection",
  summary: "Rename, (de)activate, or replace the learned info of a connection",
  request: {
    params: IdParam,
    ...jsonBody(z.strictObject({ name: Name.optional(), active: z.boolean().optional(), learned_info: LearnedInfo.optional() }).openapi("ConnectionUpdate")),
  },
  responses: { 200: json(Connection, "Updated"), ...errors },
});

const deleteRouteDef = route({
  method: "delete",
  path: "/v1/connections/{id}",
  operationId: "deleteConnection",
  summary: "Delete a connection and the facts scoped to it, with the statements they had replaced and the audit rows of the turns shown them",
  request: { params: IdParam },
  responses: {
    200: json(z.object({ ok: z.literal(true), facts_deleted: z.number().describe("Its facts and the statements they had replaced") }), "Deleted"),
    ...errors,
  },
});

export const connectionRoutes = newRouter()
  .openapi(createRouteDef, async (c) => {
    const body = c.req.valid("json");
    return c.json(
      publicConnection(
        await createConnection(c.var.db, c.var.user.id, quotaOf(c.var.config.quotas, c.var.user.plan, "connections"), {
          name: body.name,
          active: body.active,
          learnedInfo: body.learned_info,
        }),
      ),
      201,
    );
  })
  .openapi(listRouteDef, async (c) => c.json({ connections: (await listConnections(c.var.db, c.var.user.id)).map(publicConnection) }, 200))
  .openapi(getRouteDef, async (c) => c.json(publicConnection(await getConnection(c.var.db, c.var.user.id, c.req.valid("param").id)), 200))
  .openapi(patchRouteDef, async (c) => {
    const body = c.req.valid("json");
    const row = await updateConnection(c.var.db, c.var.user.id, c.req.valid("param").id, {
      name: body.name,
      active: body.active,
      learnedInfo: body.learned_info,
    });
    return c.json(publicConnection(row), 200);
  })
  .openapi(deleteRouteDef, async (c) => {
    const { facts } = await deleteConnection(depsOf(c), c.var.user.id, c.req.valid("param").id);
    return c.json({ ok: true as const, facts_deleted: facts }, 200);
  });
