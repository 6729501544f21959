/**
 * `update_customer_brain` (seed 000): the model's one way to change what engram remembers.
 * soul / bible replace the whole document (the current text is in the system prompt), memory appends.
 * Every failure is an `is_error` result the model can read; nothing is partially written.
 */
import { z } from "zod";
import { brainProposals } from "../db/schema";
import { AppError } from "../http/errors";
import { defineTool, type ToolContext, type ToolResult } from "../tools/tool";
import { writeDocument } from "./documents";
import { LABEL, TURN_COUNTER, TURN_WRITE_CAP, type BrainTarget } from "./limits";
import { addMemory } from "./memory";
import { getReviewMode, propose } from "./review";

// The seed's wire schema has no `additionalProperties`; zod would add `false`, so it is unset here.
export const BrainToolInput = z
  .object({ target: z.enum(brainProposals.target.enumValues), content: z.string() })
  .meta({ additionalProperties: undefined });

type Input = z.infer<typeof BrainToolInput>;

const DESCRIPTION = `Save or update persistent knowledge about the user or their site. Call it only when you have genuinely learned something durable, not on every message.
target "soul": replace the whole SOUL (who the user is). Send the complete new document: the current SOUL from the system prompt with your change applied; anything left out is removed.
target "bible": replace the whole BIBLE of the active site (its foundational facts), same rule. Only when a site is active.
target "memory": add one short, self-contained insight to MEMORY.`;

const failed = (message: string): ToolResult => ({ content: `${message} Nothing was saved.`, isError: true });

async function save(ctx: ToolContext, target: BrainTarget, content: string): Promise<ToolResult> {
  const base = { userId: ctx.userId, plan: ctx.plan, content, sessionId: ctx.sessionId };
  if (await getReviewMode(ctx.db, ctx.userId)) {
    const { proposal, diff } = await propose(ctx.db, { ...base, target, site: ctx.siteId, projectId: ctx.projectId });
    ctx.emit({ type: "memory_pending", proposal_id: proposal.id, target, diff });
    return {
      content: `Review mode is on: your ${LABEL[target]} update is proposal ${proposal.id}, waiting for the user's approval. It is NOT saved yet; tell the user it awaits their review.`,
    };
  }
  if (target === "memory") {
    const entry = await addMemory(ctx.db, { ...base, author: "assistant", site: ctx.siteId, projectId: ctx.projectId });
    ctx.emit({ type: "memory_saved", target, entry_id: entry.id });
    return { content: `Saved to MEMORY as entry ${entry.id}. Tell the user briefly what you will remember.` };
  }
  const w = await writeDocument(ctx.db, { ...base, kind: target, site: ctx.siteId, author: "assistant" });
  if (!w.changed) return { content: `${LABEL[target]} already says exactly this (version ${w.version}); nothing changed.` };
  ctx.emit({ type: "memory_saved", target, version: w.version, ...(w.truncated ? { truncated: true } : {}) });
  const warning = w.truncated
    ? ` Warning: the new text is less than half as long as the previous one. Version ${w.version - 1} still holds the previous text; if you dropped content by mistake, save the complete document again.`
    : "";
  return { content: `Saved ${LABEL[target]} as version ${w.version}.${warning} Tell the user briefly what you updated.` };
}

export const updateCustomerBrain = defineTool({
  name: "update_customer_brain",
  description: DESCRIPTION,
  input: BrainToolInput,
  runs: "server",
  needsApproval: false,
  describe: (input: Input) =>
    input.target === "memory" ? "Remembering this for later" : input.target === "soul" ? "Updating what I know about you" : "Updating what I know about this site",
  run: async (ctx, input) => {
    const used = ctx.turn.get(TURN_COUNTER) ?? 0;
    if (used >= TURN_WRITE_CAP) return failed(`You already made ${TURN_WRITE_CAP} brain writes this turn, the most allowed in one turn.`);
    if (input.target === "bible" && !ctx.siteId) {
      return failed('BIBLE belongs to a site, and this conversation has no active site. Use target "soul" or "memory" instead.');
    }
    // Counted before the write: a model retrying failing writes is still bounded.
    ctx.turn.set(TURN_COUNTER, used + 1);
    try {
      return await save(ctx, input.target, input.content);
    } catch (err) {
      if (err instanceof AppError) return failed(err.message);
      throw err;
    }
  },
});
