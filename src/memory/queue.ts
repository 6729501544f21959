/**
 * Queue consumer for `memory.consolidate` messages: grouped by user, one consolidation per user per batch.
 * A failure retries the user's messages with exponential backoff; after the queue's max_retries they go
 * to the dead-letter queue, where `markDeadLettered` marks their events `failed` for the user to see.
 */

import { and, eq, sql } from "drizzle-orm";
import { loadConfig } from "../config/config";
import type { Env } from "../config/env";
import type { QueueMessage } from "../core/queue";
import type { Db } from "../db/client";
import { inJson } from "../db/in-json";
import { contextEvents } from "../db/schema";
import { describeFailure } from "../lib/errors";
import { createModelClient } from "../model/anthropic";
import { type ConsolidationModel, consolidateUser } from "./consolidate";
import { CONSOLIDATION_FORMAT } from "./consolidation-schema";
import { ConsolidateMessage, type MemoryDeps, memoryDeps } from "./deps";
import { enqueue } from "./events";
import { offlineConsolidate } from "./offline-consolidate";

/** 2, 4, 8, 16, 32 s ... capped at 5 minutes; `attempts` starts at 1. */
export const backoffSeconds = (attempts: number) => Math.min(300, 2 ** Math.max(1, attempts));

export function consolidationModel(env: Env): ConsolidationModel {
  const config = loadConfig(env);
  const { client, offline } = createModelClient(config, { [CONSOLIDATION_FORMAT]: offlineConsolidate });
  return { client, model: config.backgroundModel, prices: config.modelPrices, offline };
}

export async function consolidateMessages(deps: MemoryDeps, model: ConsolidationModel, messages: readonly Message<QueueMessage>[]): Promise<void> {
  const byUser = new Map<string, Message<QueueMessage>[]>();
  for (const m of messages) {
    const body = ConsolidateMessage.safeParse(m.body);
    if (!body.success) {
      console.error(JSON.stringify({ memory: "bad_message", id: m.id }));
      m.ack();
      continue;
    }
    byUser.set(body.data.userId, [...(byUser.get(body.data.userId) ?? []), m]);
  }
  await Promise.all(
    [...byUser].map(async ([userId, msgs]) => {
      try {
        const outcome = await consolidateUser(deps, model, userId);
        if (outcome.more.length) await enqueue(deps, userId, outcome.more);
        for (const m of msgs) m.ack();
      } catch (err) {
        console.error(JSON.stringify({ memory: "consolidation_failed", user: userId, error: describeFailure(err) }));
        for (const m of msgs) m.retry({ delaySeconds: backoffSeconds(m.attempts) });
      }
    }),
  );
}

/** The `handlers` entry of the queue consumer. */
export async function handleConsolidation(messages: readonly Message<QueueMessage>[], env: Env, db: Db): Promise<void> {
  await consolidateMessages(memoryDeps(env, loadConfig(env), db), consolidationModel(env), messages);
}

/** Dead letters: their events become `failed` (visible in GET /v1/memory/events, retryable), never silently lost. */
export async function markDeadLettered(messages: readonly Message<QueueMessage>[], _env: Env, db: Db): Promise<void> {
  for (const m of messages) {
    const body = ConsolidateMessage.safeParse(m.body);
    if (!body.success || !body.data.eventIds.length) continue;
    await db
      .update(contextEvents)
      .set({
        status: "failed",
        error: sql`'gave up after ' || ${contextEvents.attempts} || ' failed attempts; last error: ' || coalesce(${contextEvents.error}, 'unknown')`,
      })
      .where(and(eq(contextEvents.userId, body.data.userId), inJson(contextEvents.id, body.data.eventIds), eq(contextEvents.status, "pending")));
  }
}
