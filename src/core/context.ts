/**
 * What a chat turn is for, and the shape of a context provider: a capability's contribution to the
 * prompt (sections of text) and to the turn's user message (evidence the model can cite). Everything
 * tools and providers may read is scoped by the turn's user.
 */
import type { BatchItem, BatchResponse } from "drizzle-orm/batch";
import type { Config } from "../config/config";
import type { Env } from "../config/env";
import type { Consent } from "../consent/settings";
import type { Statement } from "../db/batch";
import type { Db } from "../db/client";
import type { Plan } from "../db/schema";

/** Who and where a chat turn is for. */
export type TurnScope = {
  db: Db;
  env: Env;
  config: Config;
  userId: string;
  plan: Plan;
  sessionId: string;
  siteId: string | null;
  projectId: string | null;
};

export type PromptContext = TurnScope & {
  /** What the user lets the assistant remember, read in the turn's batch (the tools offered depend on it too). */
  consent?: Promise<Consent>;
  /** The text retrieval should match: the user's message, plus the last reply for short follow-ups. */
  query: string;
  now: number;
  /**
   * Reads for this prompt: every provider's reads made before its first await go to D1 together, with
   * the turn's own (session, budget), as one batch, so a turn's context costs one D1 round trip. Use it
   * instead of `db.batch` for what the provider reads first; `contextRead` falls back to `db.batch`.
   */
  read?: BatchedRead;
  /**
   * Hands over a write that injection causes (e.g. counting a recall): it is started after the model
   * call, beside the turn's own bookkeeping, and the turn awaits it before it ends. Absent: the caller
   * runs it itself.
   */
  defer?: (work: () => Promise<unknown>) => void;
  /**
   * Hands over writes that injection causes as statements: they join the turn's bookkeeping batch after the
   * model call (the usage row's D1 round trip, not one of their own; if that batch fails, each statement is
   * tried alone). Preferred over `defer` for plain writes. Absent: use `defer`, or write them yourself.
   */
  write?: (statements: readonly Statement[]) => void;
};

export type BatchReads = readonly [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]];
export interface BatchedRead {
  <T extends BatchReads>(queries: T): Promise<BatchResponse<T>>;
  /**
   * Reads still being prepared (they need the query's embedding, or a remote index's matches, first): the
   * batch waits for them rather than cost a round trip of their own after it. Null: nothing to read.
   */
  <T extends BatchReads>(queries: Promise<T | null>): Promise<BatchResponse<T> | null>;
}

/** A provider's first reads: in the turn's shared batch when there is one, else their own batch. */
export function contextRead<T extends BatchReads>(ctx: PromptContext, queries: T): Promise<BatchResponse<T>>;
export function contextRead<T extends BatchReads>(ctx: PromptContext, queries: Promise<T | null>): Promise<BatchResponse<T> | null>;
export function contextRead<T extends BatchReads>(ctx: PromptContext, queries: T | Promise<T | null>): Promise<BatchResponse<T> | null> {
  if (ctx.read) return Array.isArray(queries) ? ctx.read(queries as T) : ctx.read(queries as Promise<T | null>);
  return Promise.resolve(queries).then((q) => (q ? ctx.db.batch(q) : null));
}

export type ContextSection = {
  name: string;
  title: string;
  /** Untrusted text is fine here: prompt assembly escapes it. */
  body: string;
  /** Wraps the body in `<tag>...</tag>` (written by prompt assembly, so the body cannot close it). */
  tag?: string;
  ids?: string[];
  /** Same text turn after turn (SOUL, BIBLE): goes in the cached system prompt. Otherwise per turn. */
  stable?: boolean;
};

/**
 * A record the model may cite (a retrieved fact): it goes to the model as a document of the turn's user message,
 * not as prompt text, and an answer that uses it names it back (the `citations` event), by `kind` and `id`.
 */
export type EvidenceDocument = {
  /** What sort of record it is ("fact"): with `id`, it names the document to the model and in citations. */
  kind: string;
  id: string;
  /** A few words the model sees beside the text. Untrusted text is fine in both: prompt assembly cleans them. */
  title: string;
  text: string;
};

/** One provider's documents for the turn, in the order it ranks them. */
export type ContextEvidence = { name: string; documents: EvidenceDocument[] };

export type ContextPart = ContextSection | ContextEvidence;

export const isEvidence = (part: ContextPart): part is ContextEvidence => "documents" in part;

export interface ContextProvider {
  name: string;
  build(ctx: PromptContext): Promise<ContextPart | ContextPart[] | null>;
}
