/**
 * The account archive over HTTP: `GET /v1/export` streams it, `POST /v1/import` takes it back (docs/account.md).
 */
import { createRoute, z } from "@hono/zod-openapi";
import type { Registry } from "../core/capability";
import { ErrorBody } from "../http/errors";
import { isJsonLinesType } from "../http/middleware";
import { errors, json, newRouter, quotaErrors, security } from "../http/openapi";
import { AppError } from "../lib/errors";
import { sessionStub } from "../sessions/store";
import { exportStream } from "./export";
import { IMPORT_MAX_BYTES, importArchive } from "./import";

export const IMPORT_PATH = "/v1/import";
const ARCHIVE_TYPE = "application/x-ndjson";

const Archive = z.string().openapi("Archive", {
  description:
    "JSON Lines: a header line `{format, version, exported_at}`, then one record per line (`{kind, data}`: data holds the row's fields), " +
    'then `{kind: "end", data: {records}}`. docs/account.md lists every kind.',
});

const ImportReceipt = z
  .object({
    format_version: z.number().int().describe("The archive's format version"),
    imported: z.record(z.string(), z.number().int()).describe("Records written, per kind"),
    skipped: z.record(z.string(), z.number().int()).describe("Records not written, per kind: already held, or left out by the kind's merge rule"),
    notes: z.array(z.string()).describe("Why records were skipped, in words"),
    indexing: z.number().int().describe("Imported live facts queued for vector indexing"),
  })
  .openapi("ImportReceipt");

const exportRoute = createRoute({
  method: "get",
  path: "/v1/export",
  operationId: "exportAccount",
  tags: ["account"],
  summary: "Everything engram holds for you, as one versioned JSON Lines archive, streamed",
  security,
  responses: { 200: { description: "The archive", content: { [ARCHIVE_TYPE]: { schema: Archive } } }, ...errors },
});

const importRoute = createRoute({
  method: "post",
  path: IMPORT_PATH,
  operationId: "importAccount",
  tags: ["account"],
  summary: "Import an archive (this format version or older) into your account, merged kind by kind; all or nothing",
  security,
  request: { body: { required: true, content: { [ARCHIVE_TYPE]: { schema: Archive } } } },
  responses: {
    200: json(ImportReceipt, "What was imported and skipped"),
    ...errors,
    ...quotaErrors,
    400: json(ErrorBody, "Invalid archive: the message names the line and the reason; nothing was imported"),
    409: json(ErrorBody, "The account changed during the import; nothing was imported"),
    413: json(ErrorBody, `Archive larger than ${IMPORT_MAX_BYTES} bytes; nothing was imported`),
    415: json(ErrorBody, `Body is not ${ARCHIVE_TYPE}`),
  },
});

export const archiveRoutes = (registry: Registry) =>
  newRouter()
    .openapi(exportRoute, (c) => {
      const { db, directory, user } = c.var;
      const now = Date.now();
      const body = exportStream({
        db,
        directory,
        userId: user.id,
        now,
        history: (sessionId, after, limit) => sessionStub(c.env, user.id, sessionId).historyPage(after, limit),
      });
      const name = `engram-export-${new Date(now).toISOString().slice(0, 10)}.jsonl`;
      return new Response(body, {
        status: 200,
        headers: { "content-type": `${ARCHIVE_TYPE}; charset=utf-8`, "content-disposition": `attachment; filename="${name}"`, "cache-control": "no-store" },
      }) as never;
    })
    .openapi(importRoute, async (c) => {
      if (!isJsonLinesType(c.req.header("content-type")))
        throw new AppError("unsupported_media_type", `an archive is sent as ${ARCHIVE_TYPE} (the file GET /v1/export gives)`);
      const { db, user, config } = c.var;
      const ctx = { env: c.env, config, db, userId: user.id, now: Date.now() };
      const { receipt, inserted } = await importArchive(
        {
          db,
          userId: user.id,
          now: ctx.now,
          writeHistory: (sessionId, messages, reset) => sessionStub(c.env, user.id, sessionId).importHistory(messages, reset),
          contentIds: registry.contentIds,
          quotas: config.quotas[user.plan],
        },
        await c.req.text(),
      );
      // The capabilities' work on the new rows (memory indexes the facts) runs after the answer.
      c.executionCtx.waitUntil(Promise.allSettled(registry.importedHooks.map((hook) => hook(ctx, inserted))));
      return c.json(receipt, 200);
    });
