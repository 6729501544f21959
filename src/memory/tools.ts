/**
 * The memory tools the model calls. Observations go onto the event bus and are
 * consolidated in the background; connection learned info is written directly.
 */
import { z } from "zod";
import type { TurnScope } from "../core/context";
import { defineTool, type ToolContext, type ToolResult } from "../core/tool";
import type { JsonObject } from "../db/schema";
import { AppError } from "../lib/errors";
import { learnAboutConnection } from "./connections";
import { memoryDeps } from "./deps";
import { INTERACTIVE_TYPES, type ObservationInput, recordObservations } from "./events";
import { canonicalJson, uuidv5 } from "./ids";

/** A runaway model must not flood the bus within one turn. */
export const OBSERVATIONS_PER_TURN = 10;

const source = (ctx: ToolContext, kind: "interactive" | "autonomous"): JsonObject => ({
  source: kind,
  session_id: ctx.sessionId,
  ...(ctx.projectId ? { project_id: ctx.projectId } : {}),
  ...(ctx.siteId ? { site_id: ctx.siteId } : {}),
});

async function observe(ctx: ToolContext, inputs: ObservationInput[]): Promise<ToolResult> {
  const used = ctx.turn.get("memory.observations") ?? 0;
  if (used + inputs.length > OBSERVATIONS_PER_TURN) {
    return { content: `At most ${OBSERVATIONS_PER_TURN} observations per turn; nothing was recorded.`, isError: true };
  }
  ctx.turn.set("memory.observations", used + inputs.length);
  // Keyed by session and content: a turn retried after the model failed past this call (its history is
  // rolled back, this write is not) records the same observation once, answering with the stored event.
  const key = `obs:${await uuidv5(canonicalJson([ctx.sessionId, inputs]))}`;
  const { events, budget } = await recordObservations(memoryDeps(ctx.env, ctx.config, ctx.db), { id: ctx.userId, plan: ctx.plan }, inputs, key);
  for (const e of events) ctx.emit({ type: "memory_saved", target: "observation", entry_id: e.id });
  return budget.exhausted
    ? { content: `Noted (${events.length}), but today's memory budget is used up: it will be consolidated after ${new Date(budget.resets_at).toISOString()}.` }
    : { content: `Noted (${events.map((e) => e.id).join(", ")}); it will be consolidated into memory shortly.` };
}

export const recordObservation = defineTool({
  name: "record_observation",
  description:
    "Record something durable you learned about the user (a fact, a preference, project details, or a correction of something you had wrong). It is consolidated into long-term memory in the background. Use sparingly: only for information worth remembering across conversations.",
  input: z.object({
    content: z.string().trim().min(1).max(2000).describe("The observation, self-contained"),
    category: z.enum(INTERACTIVE_TYPES),
  }),
  runs: "server",
  needsApproval: false,
  describe: (input) => `Remembering a ${input.category.replace("_", " ")}`,
  run: (ctx, input) => observe(ctx, [{ type: input.category, content: input.content, sourceMetadata: source(ctx, "interactive") }]),
});

export const updateUserContext = defineTool({
  name: "update_user_context",
  description:
    "For autonomous runs: submit structured profile updates (scaffold_updates: key -> value) and/or learned facts (persistent_info_additions). Each becomes an observation consolidated in the background.",
  input: z
    .object({
      scaffold_updates: z.record(z.string().min(1).max(100), z.json()).optional(),
      persistent_info_additions: z.array(z.string().trim().min(1).max(2000)).max(OBSERVATIONS_PER_TURN).optional(),
    })
    .refine(
      (v) => Object.keys(v.scaffold_updates ?? {}).length + (v.persistent_info_additions ?? []).length > 0,
      "give scaffold_updates or persistent_info_additions",
    ),
  runs: "server",
  needsApproval: false,
  describe: () => "Updating what I know about you",
  run: (ctx, input) =>
    observe(ctx, [
      ...Object.entries(input.scaffold_updates ?? {}).map(([key, value]) => ({
        type: "scaffold_update",
        content: JSON.stringify({ [key]: value }),
        sourceMetadata: source(ctx, "autonomous"),
      })),
      ...(input.persistent_info_additions ?? []).map((content) => ({ type: "learned_fact", content, sourceMetadata: source(ctx, "autonomous") })),
    ]),
});

export const updateConnectionContext = defineTool({
  name: "update_connection_context",
  description:
    "Save what you learned about one of the user's tool connections (e.g. its default project), by connection id from the Learned Info section. Keys merge into what is stored; null removes a key.",
  input: z.object({
    connection_id: z.string().min(1).max(100),
    learned_info: z.record(z.string().min(1).max(100), z.json()),
  }),
  runs: "server",
  needsApproval: false,
  describe: () => "Saving what I learned about this connection",
  async run(ctx, input) {
    try {
      const updated = await learnAboutConnection(ctx.db, ctx.userId, input.connection_id, input.learned_info, ctx.sessionId);
      ctx.emit({ type: "memory_saved", target: "connection", entry_id: updated.id });
      return { content: `Saved to connection ${updated.name}: ${JSON.stringify(updated.learnedInfo)}` };
    } catch (err) {
      if (err instanceof AppError) return { content: err.message, isError: true };
      throw err;
    }
  },
});

export const memoryTools = [recordObservation, updateUserContext, updateConnectionContext];

/** Observations the chat core found (facts stated in turns it summarised): recorded on the bus like the tool's. */
export async function observeFromCore(scope: TurnScope, observations: readonly { content: string; category: string }[]): Promise<void> {
  if (!observations.length) return;
  const sourceMetadata: JsonObject = { source: "session_summary", session_id: scope.sessionId, ...(scope.projectId ? { project_id: scope.projectId } : {}) };
  const inputs = observations.slice(0, OBSERVATIONS_PER_TURN).map((o) => ({ type: o.category, content: o.content, sourceMetadata }));
  await recordObservations(memoryDeps(scope.env, scope.config, scope.db), { id: scope.userId, plan: scope.plan }, inputs);
}
