/**
 * `update_customer_brain`: the model's one way to change what engram remembers.
 * soul / bible replace the whole document (the current text is in the system prompt), memory appends.
 * Every failure is an `is_error` result the model can read; nothing is partially written.
 */
import { z } from "zod";
import { addedPattern, logWithheld, WITHHELD_NOTE } from "../consent/sensitive";
import { readConsent } from "../consent/settings";
import { defineTool, type ToolContext, type ToolResult } from "../core/tool";
import { brainProposals } from "../db/schema";
import { AppError } from "../lib/errors";
import { escapePromptText } from "../lib/prompt-text";
import { DOC_SECTION } from "./context";
import { type DocKind, type DocumentRow, findDocument, writeDocument } from "./documents";
import { type BrainTarget, LABEL, maxChars, TURN_COUNTER, TURN_WRITE_CAP } from "./limits";
import { addMemory } from "./memory";
import { getReviewMode, propose } from "./review";
import { clamp } from "./sanitize";

// The documented input schema (docs/brain.md) has no `additionalProperties`; zod would add `false`, so it is unset here.
export const BrainToolInput = z.object({ target: z.enum(brainProposals.target.enumValues), content: z.string() }).meta({ additionalProperties: undefined });

type Input = z.infer<typeof BrainToolInput>;

const DESCRIPTION = `Save or update persistent knowledge about the user or their site. Call it only when you have genuinely learned something durable, not on every message.
target "soul": replace the whole SOUL (who the user is). Send the complete new document: the current SOUL from the system prompt with your change applied; anything left out is removed.
target "bible": replace the whole BIBLE of the active site (its foundational facts), same rule. Only when a site is active.
target "memory": add one short, self-contained insight to MEMORY.`;

const failed = (message: string): ToolResult => ({ content: `${message} Nothing was saved.`, isError: true });

/** Turn-counter key: the SOUL/BIBLE version the model has been shown since the prompt (its own save, or a conflict's text). */
const seenKey = (kind: DocKind) => `brain_seen_${kind}`;

type Seen = { version: number; inPrompt: boolean };

/**
 * The SOUL/BIBLE version the model's whole-document replacement is based on. A section injected with no
 * id showed the document as empty (version 0); a section left out of the prompt (over budget, provider
 * failed) was never seen, so only creating the document (version 0) is allowed.
 */
function seenVersion(ctx: ToolContext, kind: DocKind): Seen {
  const later = ctx.turn.get(seenKey(kind));
  if (later !== undefined) return { version: later, inPrompt: true };
  const ids = ctx.injected.get(DOC_SECTION[kind]);
  if (!ids) return { version: 0, inPrompt: false };
  const match = /@(\d+)$/.exec(ids[0] ?? "");
  return { version: match ? Number(match[1]) : 0, inPrompt: true };
}

/** The write would replace text the model has not seen: refuse, and show it the current text so it can redo its change. */
function notSeen(ctx: ToolContext, kind: DocKind, seen: Seen, doc: DocumentRow | undefined): ToolResult {
  const label = LABEL[kind];
  const version = doc?.version ?? 0;
  const why = seen.inPrompt
    ? `${label} changed since the version you based this on (you saw version ${seen.version}; it is now version ${version}).`
    : `${label} was left out of your context this turn, so you have not seen its current text.`;
  const max = maxChars("pro", kind);
  const text = doc ? clamp(doc.content, max) : "";
  const cut = text !== (doc?.content ?? "");
  // Escaped as in the prompt's own SOUL and BIBLE sections: the text cannot close the tag it is shown in.
  const shown = escapePromptText(text);
  if (!cut) ctx.turn.set(seenKey(kind), version);
  const retry = cut
    ? `It is cut at ${max} characters below, so it cannot be replaced whole here; ask the user to edit it.`
    : "If your change still applies, call the tool again with this text and your change applied, keeping everything else.";
  return {
    content:
      `${why} Nothing was saved: it would have overwritten text you have not seen. ${retry}\nThe current ${label} ` +
      `(version ${version}):\n<current_${kind}>\n${shown || "(empty)"}\n</current_${kind}>`,
    isError: true,
  };
}

async function saveDocument(ctx: ToolContext, kind: DocKind, content: string, review: boolean): Promise<ToolResult> {
  const seen = seenVersion(ctx, kind);
  const base = { userId: ctx.userId, plan: ctx.plan, content, sessionId: ctx.sessionId, site: ctx.siteId, expectedVersion: seen.version };
  try {
    if (review) return proposed(ctx, kind, await propose(ctx.db, { ...base, target: kind, projectId: ctx.projectId }));
    const w = await writeDocument(ctx.db, { ...base, kind, author: "assistant" });
    ctx.turn.set(seenKey(kind), w.version);
    if (!w.changed) return { content: `${LABEL[kind]} already says exactly this (version ${w.version}); nothing changed.` };
    ctx.emit({ type: "memory_saved", target: kind, version: w.version, ...(w.truncated ? { truncated: true } : {}) });
    const warning = w.truncated
      ? ` Warning: the new text is less than half as long as the previous one. Version ${w.version - 1} still ` +
        `holds the previous text; if you dropped content by mistake, save the complete document again.`
      : "";
    return { content: `Saved ${LABEL[kind]} as version ${w.version}.${warning} Tell the user briefly what you updated.` };
  } catch (err) {
    if (err instanceof AppError && err.code === "conflict") {
      const doc = await findDocument(ctx.db, ctx.userId, kind, ctx.siteId);
      if ((doc?.version ?? 0) !== seen.version) return notSeen(ctx, kind, seen, doc);
    }
    throw err;
  }
}

function proposed(ctx: ToolContext, target: BrainTarget, p: Awaited<ReturnType<typeof propose>>): ToolResult {
  ctx.emit({ type: "memory_pending", proposal_id: p.proposal.id, target, diff: p.diff });
  return {
    content:
      `Review mode is on: your ${LABEL[target]} update is proposal ${p.proposal.id}, waiting for the user's ` +
      `approval. It is NOT saved yet; tell the user it awaits their review.`,
  };
}

/** A sensitive pattern the write would add (consent/sensitive.ts): the write is withheld, and logged without its text. */
async function withheld(ctx: ToolContext, target: BrainTarget, content: string): Promise<ToolResult | null> {
  const { sensitive } = await readConsent(ctx.db, ctx.userId);
  if (!sensitive.some((r) => r.kind === "pattern")) return null;
  const before = target === "memory" ? "" : ((await findDocument(ctx.db, ctx.userId, target, ctx.siteId))?.content ?? "");
  const rule = addedPattern(sensitive, before, content);
  if (!rule) return null;
  const kind = target === "memory" ? "memory" : "brain";
  await logWithheld(ctx.db, ctx.userId, ctx.sessionId, [{ kind, why: "pattern", rule: rule.text, via: "chat", what: target }]);
  return { content: WITHHELD_NOTE, isError: true };
}

async function save(ctx: ToolContext, target: BrainTarget, content: string): Promise<ToolResult> {
  const refused = await withheld(ctx, target, content);
  if (refused) return refused;
  const review = await getReviewMode(ctx.db, ctx.userId);
  if (target !== "memory") return saveDocument(ctx, target, content, review);
  const entry = { userId: ctx.userId, plan: ctx.plan, content, sessionId: ctx.sessionId, site: ctx.siteId, projectId: ctx.projectId };
  if (review) return proposed(ctx, target, await propose(ctx.db, { ...entry, target }));
  const saved = await addMemory(ctx.db, { ...entry, author: "assistant" });
  ctx.emit({ type: "memory_saved", target, entry_id: saved.id });
  return { content: `Saved to MEMORY as entry ${saved.id}. Tell the user briefly what you will remember.` };
}

export const updateCustomerBrain = defineTool({
  name: "update_customer_brain",
  description: DESCRIPTION,
  input: BrainToolInput,
  runs: "server",
  needsApproval: false,
  remembers: { kinds: ["brain", "memory"], kindOf: (input: Input) => (input.target === "memory" ? "memory" : "brain") },
  describe: (input: Input) =>
    input.target === "memory"
      ? "Remembering this for later"
      : input.target === "soul"
        ? "Updating what I know about you"
        : "Updating what I know about this site",
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
