/** Brain settings (review mode) and the review queue: list, approve, reject the assistant's proposals. */
import { createRoute, z } from "@hono/zod-openapi";
import { brainProposals } from "../db/schema";
import { ErrorBody } from "../http/errors";
import { errors, json, jsonBody, newRouter, Ok, security } from "../http/openapi";
import { approveProposal, getReviewMode, listProposals, publicProposal, rejectProposal, setReviewMode } from "./review";
import { Proposal } from "./schemas";

const tags = ["brain"];
const Settings = z.object({ review_mode: z.boolean().describe("When on, the assistant's writes wait for your approval") }).openapi("BrainSettings");
const IdParam = z.object({ id: z.string().min(1).max(100) });

const getSettings = createRoute({
  method: "get",
  path: "/v1/brain/settings",
  operationId: "getBrainSettings",
  tags,
  summary: "Brain settings",
  security,
  responses: { 200: json(Settings, "Settings"), ...errors },
});

const putSettings = createRoute({
  method: "put",
  path: "/v1/brain/settings",
  operationId: "putBrainSettings",
  tags,
  summary: "Change brain settings",
  security,
  request: jsonBody(z.strictObject({ review_mode: z.boolean() })),
  responses: { 200: json(Settings, "Settings"), ...errors },
});

const listRoute = createRoute({
  method: "get",
  path: "/v1/brain/proposals",
  operationId: "listProposals",
  tags,
  summary: "The assistant's proposals (pending by default), newest first, with the diff each would apply",
  security,
  request: {
    query: z.object({
      status: z.enum(brainProposals.status.enumValues).default("pending"),
      limit: z.coerce.number().int().min(1).max(100).default(50),
    }),
  },
  responses: { 200: json(z.object({ proposals: z.array(Proposal) }), "Proposals"), ...errors },
});

const Applied = z
  .object({
    target: z.enum(brainProposals.target.enumValues),
    version: z.number().optional(),
    entry_id: z.string().optional(),
    truncated: z.boolean().optional(),
  })
  .openapi("BrainApplied");

const approveRoute = createRoute({
  method: "post",
  path: "/v1/brain/proposals/{id}/approve",
  operationId: "approveProposal",
  tags,
  summary: "Apply a proposal (409 if already decided, if its document changed since, or at a limit)",
  security,
  request: { params: IdParam },
  responses: { 200: json(z.object({ applied: Applied }), "Applied"), ...errors, 409: json(ErrorBody, "Cannot apply") },
});

const rejectRoute = createRoute({
  method: "post",
  path: "/v1/brain/proposals/{id}/reject",
  operationId: "rejectProposal",
  tags,
  summary: "Discard a proposal",
  security,
  request: { params: IdParam },
  responses: { 200: json(Ok, "Rejected"), ...errors, 409: json(ErrorBody, "Already decided") },
});

export const reviewRoutes = newRouter()
  .openapi(getSettings, async (c) => c.json({ review_mode: await getReviewMode(c.var.db, c.var.user.id) }, 200))
  .openapi(putSettings, async (c) => c.json({ review_mode: await setReviewMode(c.var.db, c.var.user.id, c.req.valid("json").review_mode) }, 200))
  .openapi(listRoute, async (c) => {
    const { status, limit } = c.req.valid("query");
    const rows = await listProposals(c.var.db, c.var.user.id, status, limit);
    return c.json({ proposals: rows.map((r) => publicProposal(r.proposal, r.diff)) }, 200);
  })
  .openapi(approveRoute, async (c) => {
    const { db, user } = c.var;
    return c.json({ applied: await approveProposal(db, user.id, user.plan, c.req.valid("param").id) }, 200);
  })
  .openapi(rejectRoute, async (c) => {
    await rejectProposal(c.var.db, c.var.user.id, c.req.valid("param").id);
    return c.json({ ok: true as const }, 200);
  });
