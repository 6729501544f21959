import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { quotaOf } from "../config/limits";
import { CursorParam, nextCursor } from "../db/cursor";
import type { AppEnv } from "../http/context";
import { ErrorBody } from "../http/errors";
import { errors, json, jsonBody, newRouter, quotaErrors, security } from "../http/openapi";
import { lessonsDeps } from "./deps";
import { getTranscript, ingest, listTranscripts, MAX_CONTENT_BYTES, OffsetMismatch, publicTranscript } from "./transcripts";

export const depsOf = (c: Context<AppEnv>) => lessonsDeps(c.env, c.var.config, c.var.db);

/** Claude Code session ids are UUIDs; any id safe in a path is accepted. */
export const SessionId = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .regex(/^[\w.:-]+$/, "may contain letters, digits, _ . : -");

const Transcript = z
  .object({
    session_id: z.string(),
    project: z.string().nullable(),
    bytes_received: z.number().describe("Bytes of the local file received so far: the next upload's offset"),
    last_synced_bytes: z.number().describe("Bytes whose lessons have been extracted and stored"),
    total_bytes: z.number(),
    status: z.enum(["pending", "synced", "failed"]).describe("synced only after extraction succeeded for every received byte"),
    attempts: z.number().describe("Failed extraction attempts since the last success"),
    error: z.string().nullable(),
    lessons_extracted: z.number(),
    entries_dropped: z.number().describe("Model entries dropped as invalid"),
    synced_at: z.number().nullable(),
    created_at: z.number(),
    updated_at: z.number(),
  })
  .openapi("Transcript");

const UploadBody = z
  .strictObject({
    session_id: SessionId.describe("The Claude Code session id"),
    project: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .nullable()
      .optional()
      .describe("The project (e.g. the basename of the session's cwd); omitted keeps the stored one"),
    offset: z.number().int().min(0).describe("Byte offset in the local JSONL file where `content` starts (0 = from the start)"),
    content: z.string().describe(`UTF-8 JSONL text from offset: one or more whole lines (empty is 400), at most ${MAX_CONTENT_BYTES} bytes`),
    total_bytes: z.number().int().min(0).describe("The local file's size when read"),
  })
  .openapi("TranscriptUpload");

const OffsetMismatchBody = z
  .object({
    error: z.object({ code: z.literal("offset_mismatch"), message: z.string(), request_id: z.string() }),
    bytes_received: z.number().describe("Resend from this offset"),
  })
  .openapi("OffsetMismatch");

const uploadRoute = createRoute({
  method: "post",
  path: "/v1/transcripts",
  operationId: "uploadTranscript",
  tags: ["lessons"],
  summary: "Upload a Claude Code transcript, whole or from a byte offset; queues lesson extraction",
  description:
    "Your plan caps how many transcripts you store: the first upload of a new session over the cap is 403 " +
    "quota_exceeded (nothing written); uploads to a stored one always pass. Counts as RATE_COST_IMPORT requests " +
    "against the rate limit.",
  security,
  request: jsonBody(UploadBody),
  responses: {
    202: json(z.object({ transcript: Transcript, queued: z.boolean().describe("Extraction was queued by this upload") }), "Accepted"),
    409: json(OffsetMismatchBody, "offset is not the server's bytes_received: resend from bytes_received"),
    413: json(ErrorBody, `content over ${MAX_CONTENT_BYTES} bytes`),
    ...errors,
    ...quotaErrors,
  },
});

const listRoute = createRoute({
  method: "get",
  path: "/v1/transcripts",
  operationId: "listTranscripts",
  tags: ["lessons"],
  summary: "Sync state of your transcripts, most recently updated first",
  security,
  request: { query: z.object({ limit: z.coerce.number().int().min(1).max(200).default(50), cursor: CursorParam }) },
  responses: { 200: json(z.object({ transcripts: z.array(Transcript), next_cursor: z.string().nullable() }), "Transcripts"), ...errors },
});

const getRoute = createRoute({
  method: "get",
  path: "/v1/transcripts/{session_id}",
  operationId: "getTranscript",
  tags: ["lessons"],
  summary: "Sync state of one session's transcript",
  security,
  request: { params: z.object({ session_id: SessionId }) },
  responses: { 200: json(z.object({ transcript: Transcript }), "Transcript"), ...errors },
});

export const transcriptRoutes = newRouter()
  .openapi(uploadRoute, async (c) => {
    const body = c.req.valid("json");
    try {
      const out = await ingest(
        depsOf(c),
        c.var.user.id,
        {
          sessionId: body.session_id,
          project: body.project,
          offset: body.offset,
          content: body.content,
          totalBytes: body.total_bytes,
        },
        quotaOf(c.var.config.quotas, c.var.user.plan, "transcripts"),
      );
      return c.json({ transcript: publicTranscript(out.transcript), queued: out.queued }, 202);
    } catch (err) {
      if (!(err instanceof OffsetMismatch)) throw err;
      return c.json({ error: { code: "offset_mismatch" as const, message: err.message, request_id: c.var.requestId }, bytes_received: err.bytesReceived }, 409);
    }
  })
  .openapi(listRoute, async (c) => {
    const { limit, cursor } = c.req.valid("query");
    const rows = await listTranscripts(depsOf(c), c.var.user.id, limit, cursor);
    return c.json({ transcripts: rows.map(publicTranscript), next_cursor: nextCursor(rows, limit, (t) => [t.updatedAt, t.id]) }, 200);
  })
  .openapi(getRoute, async (c) =>
    c.json({ transcript: publicTranscript(await getTranscript(depsOf(c), c.var.user.id, c.req.valid("param").session_id)) }, 200),
  );
