import { estimateCost, type PriceOverrides, type TokenUsage } from "../config/models";
import type { Db } from "../db/client";
import { newId } from "../db/client";
import { usage } from "../db/schema";

export type UsageKind = (typeof usage.$inferInsert)["kind"];

export type UsageRow = {
  userId: string;
  kind: UsageKind;
  model: string | null;
  /** The calls' tokens; with `cost_usd` when they were priced call by call as they completed (spent.ts). */
  usage: TokenUsage & { cost_usd?: number };
  sessionId?: string | null;
  /** MODEL_PRICES overrides (config.modelPrices). */
  prices?: PriceOverrides;
  /** The offline model answered (no ANTHROPIC_API_KEY): recorded as OFFLINE_MODEL, at no cost. */
  offline?: boolean;
};

/** The model name usage rows give the offline model's calls: nothing was billed, whatever model id was asked for. */
export const OFFLINE_MODEL = "offline";

/** The model a call is recorded under: the offline model's calls as such, priced at nothing. */
export const billedModel = (model: string, offline: boolean): string => (offline ? OFFLINE_MODEL : model);

/**
 * The insert of one usage row with its cache tokens and estimated cost (the calls' own, or the usage
 * priced as one call); null when the calls used nothing.
 */
export function usageInsert(db: Db, row: UsageRow) {
  const u = row.usage;
  const cacheRead = u.cache_read_input_tokens ?? 0;
  const cacheCreation = u.cache_creation_input_tokens ?? 0;
  if (u.input_tokens + u.output_tokens + cacheRead + cacheCreation === 0) return null;
  const model = row.model === null ? null : billedModel(row.model, row.offline === true);
  return db.insert(usage).values({
    id: newId("use"),
    userId: row.userId,
    kind: row.kind,
    model,
    inputTokens: u.input_tokens,
    outputTokens: u.output_tokens,
    cacheReadTokens: cacheRead,
    cacheCreationTokens: cacheCreation,
    costUsd: row.offline ? 0 : (u.cost_usd ?? estimateCost(model, u, row.prices)),
    sessionId: row.sessionId ?? null,
  });
}

/** Writes one usage row. A call that used nothing writes nothing. */
export async function recordUsage(db: Db, row: UsageRow): Promise<void> {
  await usageInsert(db, row);
}
