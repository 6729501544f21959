/**
 * SOUL (/v1/brain/soul) and BIBLE (/v1/sites/{site}/bible): read, replace, versions, diff, rollback.
 * One factory builds both sets, so the two documents cannot drift apart.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { ErrorBody } from "../http/errors";
import { errors, json, jsonBody, newRouter, security } from "../http/openapi";
import { type DocKind, findDocument, type WriteResult as Written, writeDocument } from "./documents";
import { LABEL } from "./limits";
import {
  BrainDiff,
  BrainDocument,
  BrainVersion,
  DiffQuery,
  emptyDocument,
  PageQuery,
  publicDocument,
  RollbackBody,
  SiteParam,
  WriteBody,
  WriteResult,
} from "./schemas";
import { getSite } from "./sites";
import { diffVersions, getVersion, listVersions, publicVersion, rollback } from "./versions";

const writeErrors = {
  ...errors,
  403: json(ErrorBody, "A new site would pass the plan's site limit (quota_exceeded); nothing was written"),
  409: json(
    ErrorBody,
    "The document changed since expected_version; or, without expected_version, other writes kept winning " +
      "through every retry (with Retry-After: send it again)",
  ),
  413: json(ErrorBody, "Over the plan's length limit"),
};

const written = (w: Written) => ({ document: publicDocument(w.document), changed: w.changed, truncated: w.truncated });

function documentRoutes(kind: DocKind, base: string, params: typeof SiteParam | z.ZodObject<Record<string, never>>) {
  const label = LABEL[kind];
  const tags = ["brain"];
  // operationIds read like SDK methods: getSoul, putBible, listSoulVersions...
  const Name = kind === "soul" ? "Soul" : "Bible";
  const route = <M extends "get" | "put" | "post">(method: M, path: string, operationId: string) => ({
    method,
    path: `${base}${path}`,
    operationId,
    tags,
    security,
  });
  const get = createRoute({
    ...route("get", "", `get${Name}`),
    summary: `Your ${label}`,
    request: { params },
    responses: { 200: json(BrainDocument, label), ...errors },
  });
  const put = createRoute({
    ...route("put", "", `put${Name}`),
    summary: `Replace ${label} (a new version; expected_version guards against concurrent edits)`,
    request: { params, ...jsonBody(WriteBody) },
    responses: { 200: json(WriteResult, "Written"), ...writeErrors },
  });
  const versions = createRoute({
    ...route("get", "/versions", `list${Name}Versions`),
    summary: `${label} versions, newest first`,
    request: { params, query: PageQuery },
    responses: { 200: json(z.object({ current: z.number(), versions: z.array(BrainVersion), next_before: z.number().nullable() }), "Versions"), ...errors },
  });
  const version = createRoute({
    ...route("get", "/versions/{version}", `get${Name}Version`),
    summary: `One ${label} version, with its text`,
    request: { params: params.extend({ version: z.coerce.number().int().min(1) }) },
    responses: { 200: json(BrainVersion.extend({ content: z.string() }), "Version"), ...errors },
  });
  const diff = createRoute({
    ...route("get", "/diff", `diff${Name}Versions`),
    summary: `Unified diff between two ${label} versions`,
    request: { params, query: DiffQuery },
    responses: { 200: json(BrainDiff, "Diff"), ...errors },
  });
  const restore = createRoute({
    ...route("post", "/rollback", `rollback${Name}`),
    summary: `Roll ${label} back to a version (stored as a new version)`,
    request: { params, ...jsonBody(RollbackBody) },
    responses: { 200: json(WriteResult, "Rolled back"), ...writeErrors },
  });

  const siteOf = (p: object): string | null => ("site" in p && typeof p.site === "string" ? p.site : null);
  /** Reads of a site the user does not have are 404; writes register it. */
  const readable = async (db: Parameters<typeof getSite>[0], userId: string, site: string | null) => {
    if (site !== null) await getSite(db, userId, site);
    return site;
  };

  return newRouter()
    .openapi(get, async (c) => {
      const site = await readable(c.var.db, c.var.user.id, siteOf(c.req.valid("param")));
      const doc = await findDocument(c.var.db, c.var.user.id, kind, site);
      return c.json(doc ? publicDocument(doc) : emptyDocument(kind, site), 200);
    })
    .openapi(put, async (c) => {
      const { content, expected_version } = c.req.valid("json");
      const { db, user } = c.var;
      const w = await writeDocument(db, {
        userId: user.id,
        plan: user.plan,
        kind,
        site: siteOf(c.req.valid("param")),
        content,
        author: "user",
        sessionId: null,
        expectedVersion: expected_version,
      });
      return c.json(written(w), 200);
    })
    .openapi(versions, async (c) => {
      const site = await readable(c.var.db, c.var.user.id, siteOf(c.req.valid("param")));
      const page = await listVersions(c.var.db, c.var.user.id, kind, site, c.req.valid("query"));
      return c.json({ ...page, versions: page.versions.map(publicVersion) }, 200);
    })
    .openapi(version, async (c) => {
      const p = c.req.valid("param");
      const site = await readable(c.var.db, c.var.user.id, siteOf(p));
      const row = await getVersion(c.var.db, c.var.user.id, kind, site, p.version);
      return c.json({ ...publicVersion(row), content: row.content }, 200);
    })
    .openapi(diff, async (c) => {
      const site = await readable(c.var.db, c.var.user.id, siteOf(c.req.valid("param")));
      const { from, to } = c.req.valid("query");
      return c.json(await diffVersions(c.var.db, c.var.user.id, kind, site, from, to), 200);
    })
    .openapi(restore, async (c) => {
      const { db, user } = c.var;
      const site = await readable(db, user.id, siteOf(c.req.valid("param")));
      const body = c.req.valid("json");
      const w = await rollback(db, { userId: user.id, plan: user.plan, kind, site, version: body.version, expectedVersion: body.expected_version });
      return c.json(written(w), 200);
    });
}

export const soulRoutes = documentRoutes("soul", "/v1/brain/soul", z.object({}));
export const bibleRoutes = documentRoutes("bible", "/v1/sites/{site}/bible", SiteParam);
