/**
 * What a chat turn is for, and the shape of a context provider: a capability's contribution to the
 * system prompt. Everything tools and providers may read is scoped by the turn's user.
 */
import type { Config } from "../config/config";
import type { Env } from "../config/env";
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
  /** The text retrieval should match: the user's message, plus the last reply for short follow-ups. */
  query: string;
  now: number;
  /**
   * Hands over a write that injection causes (e.g. counting a recall) so it runs alongside the model
   * call instead of delaying the prompt; the turn awaits it before it ends. Absent: the caller awaits.
   */
  defer?: (work: Promise<unknown>) => void;
};

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

export interface ContextProvider {
  name: string;
  build(ctx: PromptContext): Promise<ContextSection | ContextSection[] | null>;
}
