import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { requireAuto } from "../consent/settings";
import { CursorParam, nextCursor } from "../db/cursor";
import { memoryRuns } from "../db/schema";
import type { AppEnv } from "../http/context";
import { ErrorBody } from "../http/errors";
import { consentErrors, errors, json, jsonBody, newRouter, security } from "../http/openapi";
import { consolidationBudget } from "./budget";
import { editTiers, restoreRevision } from "./edit";
import { AUTONOMOUS_TYPES, listEvents, pendingCount, publicEvent, recordObservations, retryFailed } from "./events";
import { requireOwnScope } from "./facts";
import { listContextLogs, listRuns, readRun, readTiers } from "./inspect";
import { JsonValue } from "./json";
import { depsOf } from "./routes-facts";
import { forgetCopies, KEPT_COPIES, keyMeta } from "./tiers";

const Limit = z.coerce.number().int().min(1).max(200).default(50);
/** Events and context logs page by (created_at, id); runs by their revision number. */
const Page = { limit: Limit, before: CursorParam };
const RunsPage = { limit: Limit, before: z.coerce.number().int().positive().optional().describe("rev of the last run on the previous page") };

const Budget = z
  .object({ limit: z.number(), used: z.number(), remaining: z.number(), exhausted: z.boolean(), resets_at: z.number() })
  .openapi("ConsolidationBudget");

const Event = z
  .object({
    id: z.string(),
    event_type: z.string(),
    content: z.string(),
    source_metadata: z.record(z.string(), z.unknown()),
    status: z.enum(["pending", "processed", "failed", "deferred"]),
    attempts: z.number(),
    error: z.string().nullable(),
    created_at: z.number(),
    processed_at: z.number().nullable(),
  })
  .openapi("ContextEvent");

const SourceMetadata = z
  .object({
    source: z.string().min(1).max(100).default("autonomous"),
    session_id: z
      .string()
      .max(100)
      .optional()
      .describe("Your own label for where the observation comes from (a conversation, a sync run); kept with it, never checked against or linked to a session"),
    connection_id: z.string().max(100).optional(),
    project_id: z.string().max(100).optional(),
  })
  .catchall(JsonValue);

const ObservationsBody = z
  .strictObject({
    observations: z
      .array(z.strictObject({ type: z.enum(AUTONOMOUS_TYPES), content: z.string().trim().min(1).max(8000), source_metadata: SourceMetadata.optional() }))
      .min(1)
      .max(100),
  })
  .openapi("Observations");

const route = <R extends Parameters<typeof createRoute>[0]>(r: R) => createRoute({ tags: ["memory"], security, ...r });

const observationsRoute = route({
  method: "post",
  path: "/v1/observations",
  operationId: "createObservations",
  summary: "Autonomous write path into the event bus (scaffold_update / learned_fact); send Idempotency-Key to make retries safe",
  request: { ...jsonBody(ObservationsBody), headers: z.object({ "idempotency-key": z.string().min(1).max(200).optional() }) },
  responses: {
    202: json(
      z.object({
        events: z.array(Event),
        replayed: z.boolean(),
        budget: Budget,
        withheld: z.number().int().describe("Observations not recorded: they hold one of your sensitive patterns (GET /v1/settings)"),
      }),
      "Accepted",
    ),
    ...errors,
    ...consentErrors,
    409: json(ErrorBody, "Idempotency-Key reused with a different body"),
  },
});

const Busy = json(
  ErrorBody,
  "Another change of memory (an edit, a restore, a consolidation or an erase, named in the message) was " +
    "saved each time this one was retried (conflict, with Retry-After); nothing was written: send it again",
);

const WorkingMemory = z.object({ working_memory: z.string(), words: z.number(), updated_at: z.number(), pending_events: z.number() }).openapi("WorkingMemory");
const ScaffoldObject = z.record(z.string(), z.unknown());
const KeyConfidence = z
  .record(
    z.string(),
    z.object({
      confidence: z.number(),
      updated_at: z.number(),
      by: z.literal("user").optional().describe("set by the user (PATCH): older observations do not change it"),
    }),
  )
  .describe("per key of the scaffold");
const Scaffold = z.object({ scaffold: ScaffoldObject, confidence: KeyConfidence }).openapi("Scaffold");

const workingRoute = route({
  method: "get",
  path: "/v1/memory/working",
  operationId: "getWorkingMemory",
  summary: "Working memory: the narrative injected into every turn",
  responses: { 200: json(WorkingMemory, "Working memory"), ...errors },
});

const putWorkingRoute = route({
  method: "put",
  path: "/v1/memory/working",
  operationId: "putWorkingMemory",
  summary: "Replace the working-memory narrative with your own text (at most 500 words; empty clears it)",
  description:
    "Your correction is what later consolidations start from: one already running when you write is redone " +
    "on top of it. Recorded as an `edit` run in GET /v1/memory/runs.",
  request: jsonBody(z.strictObject({ working_memory: z.string().max(20_000) })),
  responses: { 200: json(WorkingMemory, "Working memory"), ...errors, 409: Busy, 413: json(ErrorBody, "Over 500 words (limit_exceeded)") },
});

const scaffoldRoute = route({
  method: "get",
  path: "/v1/memory/scaffold",
  operationId: "getScaffold",
  summary: "The scaffold (schema-free profile) with confidence per top-level key",
  responses: { 200: json(Scaffold, "Scaffold"), ...errors },
});

const patchScaffoldRoute = route({
  method: "patch",
  path: "/v1/memory/scaffold",
  operationId: "patchScaffold",
  summary: "Set or remove top-level scaffold keys: a value replaces the key whole, null removes it",
  description:
    "Keys you set get confidence 1. Observations made before your edit cannot change a key you set, nor bring " +
    "back one you removed; later ones can. Later consolidations start from your version: one already running " +
    "when you write is redone on top of it. Recorded as an `edit` run in GET /v1/memory/runs.",
  request: jsonBody(
    z.strictObject({
      scaffold: z
        .record(z.string().trim().min(1).max(100), JsonValue)
        .refine((v) => Object.keys(v).length >= 1 && Object.keys(v).length <= 50, "give 1 to 50 keys")
        .refine((v) => Object.values(v).every((x) => JSON.stringify(x).length <= 4000), "each value is at most 4000 characters of JSON"),
    }),
  ),
  responses: {
    200: json(Scaffold, "Scaffold"),
    ...errors,
    409: Busy,
    413: json(ErrorBody, "The scaffold would be over 16,000 characters of JSON (limit_exceeded)"),
  },
});

const eventsRoute = route({
  method: "get",
  path: "/v1/memory/events",
  operationId: "listMemoryEvents",
  summary: "Observations and their status (pending, processed, deferred over budget, failed)",
  request: { query: z.object({ ...Page, status: z.enum(["pending", "processed", "failed", "deferred"]).optional() }) },
  responses: { 200: json(z.object({ events: z.array(Event), next_before: z.string().nullable(), budget: Budget }), "Events"), ...errors },
});

const retryRoute = route({
  method: "post",
  path: "/v1/memory/events/retry",
  operationId: "retryMemoryEvents",
  summary: "Put failed events back on the queue",
  responses: { 200: json(z.object({ retried: z.array(z.string()) }), "Re-enqueued"), ...errors },
});

const logsRoute = route({
  method: "get",
  path: "/v1/memory/context-logs",
  operationId: "listContextLogs",
  summary: "What each chat turn injected (section names and item ids) and what it left out, and why",
  request: { query: z.object({ ...Page, session_id: z.string().min(1).max(100).optional() }) },
  responses: {
    200: json(
      z.object({
        context_logs: z.array(
          z.object({ id: z.string(), session_id: z.string().nullable(), injected: z.record(z.string(), z.unknown()), created_at: z.number() }),
        ),
        next_before: z.string().nullable(),
      }),
      "Context logs",
    ),
    ...errors,
  },
});

const Run = z
  .object({
    id: z.string(),
    rev: z.number().int(),
    kind: z.enum(memoryRuns.kind.enumValues),
    event_ids: z.array(z.string()),
    summary: z.record(z.string(), z.unknown()),
    model: z.string().nullable(),
    input_tokens: z.number(),
    output_tokens: z.number(),
    created_at: z.number(),
    restorable: z
      .boolean()
      .describe(
        `the run holds a copy of the working memory and scaffold as they stood after it: the latest ${KEPT_COPIES} ` +
          `runs do, unless their copies were forgotten (DELETE /v1/memory/runs/copies); runs recorded before copies ` +
          `were kept do not`,
      ),
  })
  .openapi("MemoryRun");

const RunDetail = Run.extend({
  working_memory: z.string().nullable().describe("the narrative as it stood after the run; null when the run kept no copy"),
  scaffold: ScaffoldObject.nullable(),
  confidence: KeyConfidence.nullable(),
}).openapi("MemoryRunDetail");

const RunRev = z.object({ rev: z.coerce.number().int().positive().describe("the run's revision number (rev)") });

const runsRoute = route({
  method: "get",
  path: "/v1/memory/runs",
  operationId: "listConsolidationRuns",
  summary: "Memory runs (revisions): consolidations, your edits and restores, erases; which events each one applied and what it changed",
  request: { query: z.object(RunsPage) },
  responses: { 200: json(z.object({ runs: z.array(Run) }), "Runs"), ...errors },
});

const runRoute = route({
  method: "get",
  path: "/v1/memory/runs/{rev}",
  operationId: "getMemoryRun",
  summary: "One run, with the working memory and scaffold as they stood after it",
  request: { params: RunRev },
  responses: { 200: json(z.object({ run: RunDetail }), "Run"), ...errors },
});

const restoreRoute = route({
  method: "post",
  path: "/v1/memory/runs/{rev}/restore",
  operationId: "restoreMemoryRun",
  summary: "Put the working memory and scaffold back as they stood after this run",
  description:
    "Restores both tiers, each scaffold key with its confidence entry, as a new run of kind `restore` (summary " +
    "`restored_rev`). Facts are not rolled back: forget them one by one. A consolidation running meanwhile " +
    "is redone on top of the restored state. Runs from before an erase are gone with it (404). A run from before " +
    "something the user asked to forget (forget_memory) that would bring it back is refused (409, naming it) " +
    "unless `bring_back_forgotten=true`: a restore never quietly undoes a forget.",
  request: {
    params: RunRev,
    query: z.object({
      bring_back_forgotten: z
        .enum(["true", "false"])
        .default("false")
        .describe("restore even though it brings back profile keys or working-memory sentences the user asked to forget since"),
    }),
  },
  responses: {
    200: json(
      z.object({
        restored: z.number().int(),
        rev: z.number().int().describe("the restore's own revision"),
        working_memory: z.string(),
        scaffold: ScaffoldObject,
      }),
      "Restored",
    ),
    ...errors,
    409: json(
      ErrorBody,
      `The run holds no copy of the tiers (recorded before copies were kept, older than the latest ${KEPT_COPIES} ` +
        `runs, or its copy was forgotten), it would bring back something forgotten since (without ` +
        `bring_back_forgotten), or memory kept changing while restoring (conflict)`,
    ),
  },
});

const forgetCopiesRoute = route({
  method: "delete",
  path: "/v1/memory/runs/copies",
  operationId: "forgetMemoryRunCopies",
  summary: "Forget the earlier versions of the working memory and scaffold that runs keep",
  description:
    "Each run keeps a copy of both tiers as they stood after it, so it can be restored; a correction (PUT " +
    "/v1/memory/working, PATCH /v1/memory/scaffold) leaves the old text in those copies. This drops every " +
    "copy but the latest run's (the tiers as they are now): the runs stay listed with `restorable: false`. " +
    "The current working memory and scaffold are not changed.",
  responses: { 200: json(z.object({ cleared: z.number().int().describe("how many runs' copies were dropped") }), "Forgotten"), ...errors },
});

async function workingMemory(c: Context<AppEnv>) {
  const [tiers, pending] = await Promise.all([readTiers(c.var.db, c.var.user.id), pendingCount(depsOf(c), c.var.user.id)]);
  return { working_memory: tiers.workingMemory, words: tiers.words, updated_at: tiers.updatedAt, pending_events: pending };
}

async function scaffoldOf(c: Context<AppEnv>) {
  const tiers = await readTiers(c.var.db, c.var.user.id);
  return { scaffold: tiers.scaffold, confidence: keyMeta(tiers.scaffold, tiers.scaffoldMeta) };
}

export const memoryStateRoutes = newRouter()
  .openapi(observationsRoute, async (c) => {
    const { observations } = c.req.valid("json");
    const key = c.req.valid("header")["idempotency-key"];
    await requireOwnScope(
      c.var.db,
      c.var.user.id,
      observations.map((o) => o.source_metadata),
    );
    await requireAuto(c.var.db, c.var.user.id, "facts");
    const inputs = observations.map((o) => ({ type: o.type, content: o.content, sourceMetadata: o.source_metadata ?? { source: "autonomous" } }));
    const out = await recordObservations(depsOf(c), c.var.user, inputs, key);
    return c.json({ events: out.events.map(publicEvent), replayed: out.replayed, budget: out.budget, withheld: out.withheld }, 202);
  })
  .openapi(workingRoute, async (c) => c.json(await workingMemory(c), 200))
  .openapi(putWorkingRoute, async (c) => {
    await editTiers(c.var.db, c.var.user.id, { workingMemory: c.req.valid("json").working_memory });
    return c.json(await workingMemory(c), 200);
  })
  .openapi(scaffoldRoute, async (c) => c.json(await scaffoldOf(c), 200))
  .openapi(patchScaffoldRoute, async (c) => {
    await editTiers(c.var.db, c.var.user.id, { scaffold: c.req.valid("json").scaffold });
    return c.json(await scaffoldOf(c), 200);
  })
  .openapi(eventsRoute, async (c) => {
    const { limit, before, status } = c.req.valid("query");
    const [rows, budget] = await Promise.all([
      listEvents(depsOf(c), c.var.user.id, { limit, before, status }),
      consolidationBudget(c.var.db, c.var.user.id, c.var.user.plan, Date.now()),
    ]);
    return c.json({ events: rows.map(publicEvent), next_before: nextCursor(rows, limit, (e) => [e.createdAt, e.id]), budget }, 200);
  })
  .openapi(retryRoute, async (c) => c.json({ retried: await retryFailed(depsOf(c), c.var.user.id) }, 200))
  .openapi(logsRoute, async (c) => {
    const { limit, before, session_id } = c.req.valid("query");
    const logs = await listContextLogs(c.var.db, c.var.user.id, { limit, before, sessionId: session_id });
    return c.json({ context_logs: logs, next_before: nextCursor(logs, limit, (l) => [l.created_at, l.id]) }, 200);
  })
  .openapi(forgetCopiesRoute, async (c) => c.json({ cleared: await forgetCopies(c.var.db, c.var.user.id) }, 200))
  .openapi(runsRoute, async (c) => c.json({ runs: await listRuns(c.var.db, c.var.user.id, c.req.valid("query")) }, 200))
  .openapi(runRoute, async (c) => c.json({ run: await readRun(c.var.db, c.var.user.id, c.req.valid("param").rev) }, 200))
  .openapi(restoreRoute, async (c) => {
    const { rev } = c.req.valid("param");
    const bringBack = c.req.valid("query").bring_back_forgotten === "true";
    const out = await restoreRevision(c.var.db, c.var.user.id, rev, Date.now(), bringBack);
    return c.json({ restored: rev, rev: out.rev, working_memory: out.tiers.workingMemory, scaffold: out.tiers.scaffold }, 200);
  });
