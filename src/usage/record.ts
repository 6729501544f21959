import type { ModelPrice } from "../config/config";
import type { Db } from "../db/client";
import { newId } from "../db/client";
import { usage } from "../db/schema";
import { estimateCost, priceOf, type TokenUsage } from "./cost";

export type UsageKind = (typeof usage.$inferInsert)["kind"];

export type UsageRow = {
  userId: string;
  kind: UsageKind;
  model: string | null;
  usage: TokenUsage;
  sessionId?: string | null;
  /** MODEL_PRICES overrides (config.modelPrices). */
  prices?: Readonly<Record<string, ModelPrice>>;
};

/** One usage row with its cache tokens and estimated cost. A call that used nothing writes nothing. */
export async function recordUsage(db: Db, row: UsageRow): Promise<void> {
  const u = row.usage;
  const cacheRead = u.cache_read_input_tokens ?? 0;
  const cacheCreation = u.cache_creation_input_tokens ?? 0;
  if (u.input_tokens + u.output_tokens + cacheRead + cacheCreation === 0) return;
  await db.insert(usage).values({
    id: newId("use"),
    userId: row.userId,
    kind: row.kind,
    model: row.model,
    inputTokens: u.input_tokens,
    outputTokens: u.output_tokens,
    cacheReadTokens: cacheRead,
    cacheCreationTokens: cacheCreation,
    costUsd: estimateCost(u, priceOf(row.model, row.prices)),
    sessionId: row.sessionId ?? null,
  });
}
