/** Sites CRUD, the site sync that regenerates HEARTBEAT, and reading HEARTBEAT. */
import { createRoute, z } from "@hono/zod-openapi";
import { ErrorBody } from "../http/errors";
import { errors, json, jsonBody, newRouter, Ok, security } from "../http/openapi";
import { getHeartbeat, SiteSync, syncSite } from "./heartbeat";
import { BrainDocument, publicDocument, Site, SiteId, SiteParam } from "./schemas";
import { createSite, deleteSite, getSite, listSites, publicSite, renameSite } from "./sites";

const tags = ["sites"];
const Name = z.string().trim().min(1).max(200).nullable().optional();

const listRoute = createRoute({
  method: "get",
  path: "/v1/sites",
  operationId: "listSites",
  tags,
  summary: "Your sites",
  security,
  responses: { 200: json(z.object({ sites: z.array(Site) }), "Sites"), ...errors },
});

const createSiteRoute = createRoute({
  method: "post",
  path: "/v1/sites",
  operationId: "createSite",
  tags,
  summary: "Register a site",
  security,
  request: jsonBody(z.strictObject({ id: SiteId, name: Name }).openapi("NewSite")),
  responses: {
    201: json(Site, "Created"),
    ...errors,
    403: json(ErrorBody, "The plan's site limit is reached (quota_exceeded); nothing was written"),
    409: json(ErrorBody, "The site exists"),
  },
});

const getRoute = createRoute({
  method: "get",
  path: "/v1/sites/{site}",
  operationId: "getSite",
  tags,
  summary: "One site",
  security,
  request: { params: SiteParam },
  responses: { 200: json(Site, "Site"), ...errors },
});

const renameRoute = createRoute({
  method: "patch",
  path: "/v1/sites/{site}",
  operationId: "renameSite",
  tags,
  summary: "Rename a site",
  security,
  request: { params: SiteParam, ...jsonBody(z.strictObject({ name: Name }).openapi("SitePatch")) },
  responses: { 200: json(Site, "Site"), ...errors },
});

const deleteRoute = createRoute({
  method: "delete",
  path: "/v1/sites/{site}",
  operationId: "deleteSite",
  tags,
  summary: "Delete a site with its BIBLE (and versions), HEARTBEAT, MEMORY entries about it and pending proposals",
  security,
  request: { params: SiteParam },
  responses: { 200: json(Ok, "Deleted"), ...errors },
});

const heartbeatRoute = createRoute({
  method: "get",
  path: "/v1/sites/{site}/heartbeat",
  operationId: "getHeartbeat",
  tags,
  summary: "The site's HEARTBEAT, regenerated on each sync (stale when not refreshed for a day)",
  security,
  request: { params: SiteParam },
  responses: { 200: json(BrainDocument, "HEARTBEAT"), ...errors },
});

const syncRoute = createRoute({
  method: "put",
  path: "/v1/sites/{site}/sync",
  operationId: "syncSite",
  tags,
  summary: "Push the site's sync data; HEARTBEAT is regenerated from it (no model call)",
  security,
  request: { params: SiteParam, ...jsonBody(SiteSync) },
  responses: {
    200: json(BrainDocument, "The new HEARTBEAT"),
    ...errors,
    403: json(ErrorBody, "The plan's site limit is reached (quota_exceeded); nothing was written"),
    413: json(ErrorBody, "Sync data over the size limit"),
  },
});

export const siteRoutes = newRouter()
  .openapi(listRoute, async (c) => c.json({ sites: (await listSites(c.var.db, c.var.user.id)).map(publicSite) }, 200))
  .openapi(createSiteRoute, async (c) => {
    const { id, name } = c.req.valid("json");
    return c.json(publicSite(await createSite(c.var.db, c.var.user.id, c.var.user.plan, { id, name: name ?? null })), 201);
  })
  .openapi(getRoute, async (c) => c.json(publicSite(await getSite(c.var.db, c.var.user.id, c.req.valid("param").site)), 200))
  .openapi(renameRoute, async (c) => {
    const row = await renameSite(c.var.db, c.var.user.id, c.req.valid("param").site, c.req.valid("json").name ?? null);
    return c.json(publicSite(row), 200);
  })
  .openapi(deleteRoute, async (c) => {
    await deleteSite(c.var.db, c.var.user.id, c.req.valid("param").site);
    return c.json({ ok: true as const }, 200);
  })
  .openapi(heartbeatRoute, async (c) => {
    const { site } = c.req.valid("param");
    await getSite(c.var.db, c.var.user.id, site);
    return c.json(publicDocument(await getHeartbeat(c.var.db, c.var.user.id, site)), 200);
  })
  .openapi(syncRoute, async (c) => {
    const { db, user } = c.var;
    const doc = await syncSite(db, { userId: user.id, plan: user.plan, site: c.req.valid("param").site, data: c.req.valid("json"), now: Date.now() });
    return c.json(publicDocument(doc), 200);
  });
