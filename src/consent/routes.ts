/** `GET/PATCH /v1/settings`: the user's consent modes per kind of memory and their sensitive topics and patterns. */
import { createRoute } from "@hono/zod-openapi";
import { errors, json, jsonBody, newRouter, security } from "../http/openapi";
import { ConsentPatch, ConsentSettings, publicConsent, readConsent, updateConsent } from "./settings";

const tags = ["settings"];

const getRoute = createRoute({
  method: "get",
  path: "/v1/settings",
  operationId: "getMemorySettings",
  tags,
  summary: "What the assistant may remember: a mode per kind of memory (auto, ask, off) and topics and patterns never to remember",
  security,
  responses: { 200: json(ConsentSettings, "Settings"), ...errors },
});

const patchRoute = createRoute({
  method: "patch",
  path: "/v1/settings",
  operationId: "updateMemorySettings",
  tags,
  summary: "Change some modes, or replace the list of sensitive topics and patterns; applies to the next write",
  security,
  request: jsonBody(ConsentPatch),
  responses: { 200: json(ConsentSettings, "Settings"), ...errors },
});

export const consentRoutes = newRouter()
  .openapi(getRoute, async (c) => c.json(publicConsent(await readConsent(c.var.db, c.var.user.id)), 200))
  .openapi(patchRoute, async (c) => c.json(publicConsent(await updateConsent(c.var.db, c.var.user.id, c.req.valid("json"))), 200));
