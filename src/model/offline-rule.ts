/**
 * The shape of the offline model's chat rules. Each capability contributes the rules for its own tools
 * (its `offline-chat-rules.ts`, listed in its capability value); the composition root merges them into the
 * registry and the session runner hands them to `createModelClient`. The offline model (offline-plan.ts)
 * runs them by stage and knows no tool by name. docs/offline-model.md describes the stages.
 */

/** A tool the request offers, as the model sees it (a server tool such as web search has a `type`). */
export type OfferedTool = { name: string; type?: string; input_schema?: unknown };
export type PlannedCall = { name: string; input: unknown };
export type ToolOutcome = { name: string | undefined; content: string; isError: boolean };
/** A fact the model was shown (a recalled memory search result), by id. */
export type ShownFact = { id: string; text: string };

/** What the offline model knows when it answers a user message. */
export type OfflineTurn = {
  /** The user's words (not the turn's context block). */
  said: string;
  tools: readonly OfferedTool[];
  offers(name: string): boolean;
  /** What the prompt tells the model: the system text and the turn's context block. */
  context: string;
  /** The facts recalled for the turn. */
  facts: readonly ShownFact[];
};

/** The reply's first words and the calls it makes. */
export type OfflinePlan = { lead: string; calls: PlannedCall[] };

/** What one rule adds for a statement about the user; the parts of every rule make one reply. */
export type StatementPart = {
  lead?: string;
  calls: PlannedCall[];
  /** The statement itself is saved by this part (e.g. filed under a project): a later rule need not save it again. */
  files?: boolean;
};

/**
 * One rule, run at its stage in ascending `priority` (ties: registry order):
 * - `request`: a message it answers alone, before any other rule (a plan, or words when there is nothing to call);
 * - `ask`: a tool the user asks for by what it does; the model fills the input as for any tool it calls;
 * - `statement`: what a statement (never a question) adds, seeing the parts of the rules before it;
 * - `outcome`: what to say about a tool result, or null for a tool it does not speak for;
 * - `recall`: what the plain reply adds from what the prompt says (sentences starting with a space, or "").
 */
export type OfflineRule =
  | { stage: "request"; priority: number; answer(turn: OfflineTurn): OfflinePlan | { text: string } | null }
  | { stage: "ask"; priority: number; tool(turn: OfflineTurn): { name: string; lead: string } | null }
  | { stage: "statement"; priority: number; part(turn: OfflineTurn, before: readonly StatementPart[]): StatementPart | null }
  | { stage: "outcome"; priority: number; say(outcome: ToolOutcome): string | null }
  | { stage: "recall"; priority: number; say(context: string): string };

export type OfflineRules = {
  /** The tools these rules call or speak for: the model's own rule for a tool named in the message leaves them alone. */
  tools: readonly string[];
  rules: readonly OfflineRule[];
};

export const NO_OFFLINE_RULES: OfflineRules = { tools: [], rules: [] };

/** Every capability's rules as one set, each stage's in priority order (ties: the order given). */
export function composeOfflineRules(sets: readonly OfflineRules[]): OfflineRules {
  const rules = sets
    .flatMap((s) => s.rules)
    .map((rule, order) => ({ rule, order }))
    .sort((a, b) => a.rule.priority - b.rule.priority || a.order - b.order)
    .map(({ rule }) => rule);
  return { tools: [...new Set(sets.flatMap((s) => s.tools))], rules };
}

/** The rules of one stage, typed. */
export const rulesOf = <S extends OfflineRule["stage"]>(rules: OfflineRules, stage: S) =>
  rules.rules.filter((r): r is Extract<OfflineRule, { stage: S }> => r.stage === stage);
