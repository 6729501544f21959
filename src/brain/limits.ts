/**
 * Tier-aware brain limits. SOUL and BIBLE are injected whole (a cut document would make the model's
 * read-modify-write drop its tail), so their caps are sized to fit the prompt budget together.
 */
import type { Plan } from "../db/schema";
import { AppError } from "../lib/errors";
import { sanitizeBrainContent } from "./sanitize";

export type BrainLimits = {
  soulChars: number;
  bibleChars: number;
  memoryEntryChars: number;
  memoryEntries: number;
  sites: number;
  pendingProposals: number;
};

export const BRAIN_LIMITS: Readonly<Record<Plan, BrainLimits>> = {
  free: { soulChars: 2_000, bibleChars: 4_000, memoryEntryChars: 500, memoryEntries: 100, sites: 3, pendingProposals: 20 },
  pro: { soulChars: 4_000, bibleChars: 8_000, memoryEntryChars: 1_000, memoryEntries: 1_000, sites: 50, pendingProposals: 100 },
};

/** Assistant writes (saves and proposals) allowed in one chat turn, whatever the plan. */
export const TURN_WRITE_CAP = 5;
export const TURN_COUNTER = "brain_writes";

/** Largest sync payload (serialised JSON) a site may push. */
export const SYNC_MAX_BYTES = 32 * 1024;

export type BrainTarget = "soul" | "bible" | "memory";

export const LABEL: Readonly<Record<BrainTarget | "heartbeat", string>> = {
  soul: "SOUL",
  bible: "BIBLE",
  memory: "MEMORY",
  heartbeat: "HEARTBEAT",
};

export function maxChars(plan: Plan, target: BrainTarget): number {
  const l = BRAIN_LIMITS[plan];
  return target === "soul" ? l.soulChars : target === "bible" ? l.bibleChars : l.memoryEntryChars;
}

function codePoints(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/** Rejects (never cuts) text over the plan's cap: silently cutting would lose what the writer meant. */
export function checkLength(plan: Plan, target: BrainTarget, content: string): void {
  const cap = maxChars(plan, target);
  const length = codePoints(content);
  if (length > cap) {
    const what = target === "memory" ? "A MEMORY entry" : LABEL[target];
    throw new AppError("limit_exceeded", `${what} may be at most ${cap} characters on the ${plan} plan; this one has ${length}. Shorten it and try again.`);
  }
}

/** Sanitized and checked against the plan's cap. Measured before any clamp, so an error states the real length. */
export function prepareText(plan: Plan, target: BrainTarget, raw: string): string {
  const content = sanitizeBrainContent(raw, Number.POSITIVE_INFINITY);
  checkLength(plan, target, content);
  return content;
}
