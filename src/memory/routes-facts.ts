import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { quotaOf } from "../config/limits";
import { CursorParam, nextCursor } from "../db/cursor";
import type { AppEnv } from "../http/context";
import { ErrorBody } from "../http/errors";
import { errors, json, jsonBody, newRouter, orNull, quotaErrors, quotaOrConsentErrors, security } from "../http/openapi";
import { listConnections } from "./connections";
import { correctFact } from "./correct";
import { memoryDeps } from "./deps";
import { FACT_KEY_CONVENTION, FactKey } from "./fact-key";
import { CONTEXT_TYPES, deleteFact, getFact, importFacts, listFacts, publicFact, SOURCES } from "./facts";
import { UUID_RE } from "./ids";
import { JsonValue } from "./json";
import { recordRecall, searchFacts } from "./retrieval";
import { eventTime } from "./when";

export const depsOf = (c: Context<AppEnv>) => memoryDeps(c.env, c.var.config, c.var.db);

const Metadata = z.record(z.string(), z.unknown());

export const Fact = z
  .object({
    id: z.string(),
    text: z.string(),
    metadata: Metadata,
    confidence: z.number(),
    connection_id: z.string().nullable(),
    context_type: z.string(),
    source: z.string(),
    project_id: z.string().nullable(),
    superseded_by: z.string().nullable().describe("The fact that replaced it (it is history), or null while it is current"),
    key: z.string().nullable().describe("The changing attribute it states (user.home_city...), as its writer named it; null when none was named"),
    recall_count: z.number(),
    last_recalled_at: z.number().nullable(),
    embedded: z.boolean(),
    event_at: z.number().describe("When it happened or was said (metadata.date), else when it was written; epoch ms"),
    created_at: z.number(),
  })
  .openapi("Fact");

/** When an imported fact happened or was said: a date the search can place, or a 400 (never silently the write time). */
const ImportDate = z
  .union([z.string(), z.number()])
  .refine((v) => {
    const t = eventTime(v);
    return t !== null && Number.isFinite(new Date(t).getTime());
  }, "must be an ISO 8601 date or date-time (2024-03-01, 2024-03-01T09:30:00Z), or epoch milliseconds as a number")
  .describe("When it happened or was said: the fact's event time (else the write time)");

const FactIdString = z.string().regex(UUID_RE, "must be a fact id (UUID)");

const ImportMetadata = z
  .object({
    connection_id: z.string().min(1).max(100).optional(),
    project_id: z.string().min(1).max(100).optional(),
    context_type: z.enum(CONTEXT_TYPES).optional(),
    source: z.enum(SOURCES).optional(),
    confidence: z.number().min(0).max(1).optional(),
    date: ImportDate.optional(),
  })
  .catchall(JsonValue);

const FactText = z.string().trim().min(1).max(4000);

const ImportBody = z
  .strictObject({
    facts: z
      .array(
        z.strictObject({
          text: FactText,
          key: FactKey.optional(),
          supersedes: z
            .array(FactIdString)
            .max(20)
            .optional()
            .describe("Ids of your existing facts this one replaces (they become its history); another user's or a missing id is 404, nothing written"),
          metadata: ImportMetadata.optional(),
        }),
      )
      .min(1)
      .max(1000),
  })
  .openapi("FactImport");

/** The metadata every fact takes from its scope: a correction keeps the corrected fact's. */
const SCOPE_FIELDS = ["connection_id", "project_id", "context_type"] as const;

const CorrectionBody = z
  .strictObject({
    text: FactText.describe("The corrected text"),
    key: FactKey.optional().describe(`The corrected fact's key; the old fact's when absent. ${FACT_KEY_CONVENTION}`),
    metadata: ImportMetadata.omit({ connection_id: true, project_id: true, context_type: true })
      .superRefine((m, ctx) => {
        for (const field of SCOPE_FIELDS)
          if (field in m) ctx.addIssue({ code: "custom", path: [field], message: "a correction keeps the fact's scope; import a new fact for another" });
      })
      .optional()
      .describe("Merged over the old fact's metadata; date (else the old fact's event time), source and confidence replace the old fact's"),
  })
  .openapi("FactCorrection");

/** An ISO 8601 date or date-time, or epoch milliseconds. */
const EventTime = z.string().transform((v, ctx) => {
  const t = eventTime(/^\d+$/.test(v) ? Number(v) : v);
  if (t === null) {
    ctx.addIssue({ code: "custom", message: "must be an ISO 8601 date or epoch milliseconds" });
    return z.NEVER;
  }
  return t;
});

const FactId = z.object({ id: FactIdString });

const importRoute = createRoute({
  method: "post",
  path: "/v1/memory/facts",
  operationId: "importFacts",
  tags: ["memory"],
  summary: "Import facts verbatim, in bulk (no model call)",
  description:
    "All or nothing. A fact replaces only what you say it does: the older facts of yours with the same key " +
    "and scope (connection, project) whose event time is not later than its own, and the facts its supersedes " +
    "lists. Without either it replaces nothing. A fact dated before a current one with its key becomes that " +
    "one's history at once. Your plan caps the facts you store (history included): an import that would pass " +
    "the cap is refused whole (403 quota_exceeded, nothing written). A metadata.connection_id, metadata.project_id " +
    "or supersedes id that is not one of yours is 404, nothing written. Counts as RATE_COST_IMPORT requests " +
    "against the rate limit.",
  security,
  request: jsonBody(ImportBody),
  responses: {
    201: json(
      z.object({
        facts: z.array(z.object({ id: z.string(), text: z.string(), superseded_by: z.string().nullable() })),
        superseded: z.array(z.string()).describe("Existing facts these replaced (kept as history)"),
        embedded: z.number(),
        indexing: z.string().optional(),
        withheld: z.number().int().describe("Facts left out: they hold one of your sensitive patterns (GET /v1/settings)"),
      }),
      "Stored",
    ),
    ...errors,
    ...quotaOrConsentErrors,
  },
});

const searchRoute = createRoute({
  method: "get",
  path: "/v1/memory/facts/search",
  operationId: "searchFacts",
  tags: ["memory"],
  summary: "Hybrid retrieval (full-text BM25 + vectors, fused, time-aware) over your facts",
  security,
  request: {
    query: z
      .object({
        q: z.string().trim().min(1).max(2000),
        k: z.coerce.number().int().min(1).max(50).default(5),
        mode: z.enum(["hybrid", "fulltext", "vector"]).default("hybrid"),
        after: EventTime.optional().describe("Only facts whose event time is at or after this (ISO 8601 date/date-time, or epoch ms)"),
        before: EventTime.optional().describe("Only facts whose event time is before this"),
        order: z.enum(["relevance", "newest", "oldest"]).default("relevance").describe("Order of the k best matches"),
        history: z.enum(["true", "false"]).default("false").describe("Include superseded statements (ranked under current ones, with superseded_by set)"),
        prefer_latest: z
          .enum(["true", "false"])
          .optional()
          .describe('Of near-equal matches, prefer the latest (a question about the present). Default: when the query names the present ("now", "today")'),
        neighbours: z.enum(["true", "false"]).default("false").describe("Attach the turns just before and after each hit in its session"),
      })
      .refine((v) => v.after === undefined || v.before === undefined || v.after < v.before, { message: "after must be before before", path: ["after"] }),
  },
  responses: {
    200: json(
      z.object({
        results: z.array(
          z.object({
            id: z.string(),
            text: z.string(),
            score: z.number(),
            match: z.number().describe("Share of the query's rarity-weighted words the fact contains (0..1)"),
            event_at: z.number().describe("When it happened or was said (metadata.date), else when it was written; epoch ms"),
            superseded_by: z.string().nullable(),
            metadata: Metadata,
            neighbours: z.array(z.object({ id: z.string(), text: z.string(), position: z.enum(["before", "after"]) })).optional(),
          }),
        ),
        weak: z.boolean().describe("True when even the best result matches little of the query: likely nothing relevant is stored"),
        when: z.object({ from: z.number(), to: z.number(), phrase: z.string() }).nullable().describe("The period read from the query, preferred in ranking"),
        degraded: z.string().optional().describe("Set when the vector half was unavailable and results are full-text only"),
      }),
      "Results, best first",
    ),
    ...errors,
  },
});

const listRoute = createRoute({
  method: "get",
  path: "/v1/memory/facts",
  operationId: "listFacts",
  tags: ["memory"],
  summary: "List your facts, newest first",
  security,
  request: {
    query: z.object({
      limit: z.coerce.number().int().min(1).max(200).default(50),
      before: CursorParam,
      include_superseded: z.enum(["true", "false"]).default("false"),
    }),
  },
  responses: { 200: json(z.object({ facts: z.array(Fact), next_before: z.string().nullable() }), "Facts"), ...errors },
});

const getRoute = createRoute({
  method: "get",
  path: "/v1/memory/facts/{id}",
  operationId: "getFact",
  tags: ["memory"],
  summary: "One fact, with what it replaced and what replaced it",
  security,
  request: { params: FactId },
  responses: { 200: json(z.object({ fact: Fact, replaced: z.array(Fact), replaced_by: orNull(Fact) }), "Fact"), ...errors },
});

const deleteRoute = createRoute({
  method: "delete",
  path: "/v1/memory/facts/{id}",
  operationId: "deleteFact",
  tags: ["memory"],
  summary: "Forget one fact, with the earlier statements it had replaced",
  description:
    "Deletes the fact, its full-text entry and its vector, and with them the statements it had replaced and " +
    "those they had replaced in turn (the history GET /v1/memory/facts/{id} lists under replaced, one step " +
    "at a time), and the audit rows (GET /v1/memory/context-logs) of every turn that was shown any of them: " +
    "no hidden earlier value is left, and none comes back as current. What replaced it stays. So do the sessions' " +
    "conversations, the working memory, the scaffold and the observation the fact was learnt from, which " +
    "may still say the same thing (DELETE /v1/memory erases them). Another user's fact is 404.",
  security,
  request: { params: FactId },
  responses: {
    200: json(
      z.object({
        ok: z.literal(true),
        forgotten: z.array(z.string()).describe("The ids forgotten: this fact's first, then the statements it had replaced"),
      }),
      "Forgotten",
    ),
    ...errors,
  },
});

const correctRoute = createRoute({
  method: "patch",
  path: "/v1/memory/facts/{id}",
  operationId: "correctFact",
  tags: ["memory"],
  summary: "Correct one fact, keeping the old one as history",
  description:
    "Writes the corrected text as a new fact (a new id: ids derive from the text and scope) that replaces " +
    "this one, with its scope (connection, project, context type), key, event time and metadata unless the " +
    "request gives others. The old fact stays, as the new one's history (GET /v1/memory/facts/{id} lists " +
    "it under replaced). The same text again keeps the id and changes only the key and metadata. Another " +
    "user's or a missing fact is 404; a fact already replaced is 409 (conflict), naming the fact that replaced " +
    "it: correct that one. Nothing is written on any error. Counts against your facts quota like an import " +
    "(403 quota_exceeded).",
  security,
  request: { params: FactId, ...jsonBody(CorrectionBody) },
  responses: {
    200: json(
      z.object({ fact: Fact, replaced: z.array(z.string()).describe("The facts this correction replaced: the corrected one, and any older of the same key") }),
      "Corrected",
    ),
    ...errors,
    ...quotaErrors,
    409: json(ErrorBody, "The fact was already replaced by another (conflict)"),
  },
});

export const factRoutes = newRouter()
  .openapi(importRoute, async (c) => {
    const quota = quotaOf(c.var.config.quotas, c.var.user.plan, "facts");
    return c.json(await importFacts(depsOf(c), c.var.user.id, c.req.valid("json").facts, quota), 201);
  })
  .openapi(searchRoute, async (c) => {
    const { q, k, mode, after, before, order, history, neighbours, prefer_latest } = c.req.valid("query");
    const active = (await listConnections(c.var.db, c.var.user.id)).filter((x) => x.active).map((x) => x.id);
    const deps = depsOf(c);
    const found = await searchFacts(deps, {
      userId: c.var.user.id,
      query: q,
      k,
      connectionIds: active,
      mode,
      after,
      before,
      order,
      history: history === "true",
      neighbours: neighbours === "true",
      preferLatest: prefer_latest === undefined ? undefined : prefer_latest === "true",
    });
    // A search is the user looking, not the assistant recalling: only the embedding cost is recorded.
    await recordRecall(deps, c.var.user.id, [], found.embeddingTokens);
    const results = found.results.map((r) => ({
      id: r.id,
      text: r.text,
      score: r.score,
      match: r.match,
      event_at: r.eventAt,
      superseded_by: r.supersededBy,
      metadata: r.metadata,
      ...(r.neighbours ? { neighbours: r.neighbours } : {}),
    }));
    return c.json({ results, weak: found.weak, when: found.when, ...(found.degraded ? { degraded: found.degraded } : {}) }, 200);
  })
  .openapi(listRoute, async (c) => {
    const { limit, before, include_superseded } = c.req.valid("query");
    const rows = await listFacts(c.var.db, c.var.user.id, { limit, before, includeSuperseded: include_superseded === "true" });
    return c.json({ facts: rows.map(publicFact), next_before: nextCursor(rows, limit, (f) => [f.createdAt, f.id]) }, 200);
  })
  .openapi(getRoute, async (c) => {
    const { fact, replaced, replacedBy } = await getFact(c.var.db, c.var.user.id, c.req.valid("param").id);
    return c.json({ fact: publicFact(fact), replaced: replaced.map(publicFact), replaced_by: replacedBy ? publicFact(replacedBy) : null }, 200);
  })
  .openapi(correctRoute, async (c) => {
    const quota = quotaOf(c.var.config.quotas, c.var.user.plan, "facts");
    const { fact, replaced } = await correctFact(depsOf(c), c.var.user.id, c.req.valid("param").id, c.req.valid("json"), quota);
    return c.json({ fact: publicFact(fact), replaced }, 200);
  })
  .openapi(deleteRoute, async (c) => {
    const forgotten = await deleteFact(depsOf(c), c.var.user.id, c.req.valid("param").id);
    return c.json({ ok: true as const, forgotten }, 200);
  });
