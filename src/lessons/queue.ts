/**
 * Queue consumer for `lessons.extract`: one extraction per transcript per batch. A failure retries with
 * exponential backoff; after the queue's last retry the dead letter marks the transcript `failed` (visible in
 * GET /v1/transcripts; a new upload or brain_extract tries again).
 */
import { and, eq, ne } from "drizzle-orm";
import { loadConfig } from "../config/config";
import type { Env } from "../config/env";
import type { CronJob } from "../core/cron";
import type { QueueMessage } from "../core/queue";
import type { Db } from "../db/client";
import { transcripts } from "../db/schema";
import { acrossShards } from "../db/shards";
import { describeFailure } from "../lib/errors";
import { createModelClient } from "../model/anthropic";
import { ExtractMessage, type LessonsDeps, lessonsDeps } from "./deps";
import { type ExtractionModel, extractTranscript } from "./extract";
import { EXTRACTION_FORMAT } from "./extraction-schema";
import { offlineExtract } from "./offline-extract";
import { sweepIdle } from "./transcripts";

/** 2, 4, 8, 16, 32 s ... capped at 5 minutes; `attempts` starts at 1. */
export const backoffSeconds = (attempts: number) => Math.min(300, 2 ** Math.max(1, attempts));

/** The background model (or, on demand, the chat model), offline rules when no key is set. */
export function extractionModel(env: Env, which: "background" | "chat" = "background"): ExtractionModel {
  const config = loadConfig(env);
  const { client, offline } = createModelClient(config, { [EXTRACTION_FORMAT]: offlineExtract });
  return {
    client,
    model: which === "chat" ? config.chatModel : config.backgroundModel,
    usageKind: which === "chat" ? "extraction_on_demand" : "extraction",
    offline,
  };
}

export async function extractMessages(deps: LessonsDeps, model: ExtractionModel, messages: readonly Message<QueueMessage>[]): Promise<void> {
  const byTranscript = new Map<string, { userId: string; msgs: Message<QueueMessage>[] }>();
  for (const m of messages) {
    const body = ExtractMessage.safeParse(m.body);
    if (!body.success) {
      console.error(JSON.stringify({ lessons: "bad_message", id: m.id }));
      m.ack();
      continue;
    }
    const entry = byTranscript.get(body.data.transcriptId) ?? { userId: body.data.userId, msgs: [] };
    entry.msgs.push(m);
    byTranscript.set(body.data.transcriptId, entry);
  }
  for (const [transcriptId, { userId, msgs }] of byTranscript) {
    try {
      await extractTranscript(deps, model, userId, transcriptId);
      for (const m of msgs) m.ack();
    } catch (err) {
      console.error(JSON.stringify({ lessons: "extract_retry", transcript: transcriptId, error: describeFailure(err) }));
      for (const m of msgs) m.retry({ delaySeconds: backoffSeconds(m.attempts) });
    }
  }
}

export async function handleExtraction(messages: readonly Message<QueueMessage>[], env: Env, db: Db): Promise<void> {
  await extractMessages(lessonsDeps(env, loadConfig(env), db), extractionModel(env), messages);
}

export async function markFailed(messages: readonly Message<QueueMessage>[], _env: Env, db: Db): Promise<void> {
  for (const m of messages) {
    const body = ExtractMessage.safeParse(m.body);
    if (!body.success) continue;
    await db
      .update(transcripts)
      .set({ status: "failed", updatedAt: Date.now() })
      .where(and(eq(transcripts.id, body.data.transcriptId), eq(transcripts.userId, body.data.userId), ne(transcripts.status, "synced")));
  }
}

export const lessonsSweepJob: CronJob = {
  name: "lessons.sweep",
  run: (env, now) => acrossShards(env, now, async (db) => ({ settled: await sweepIdle(lessonsDeps(env, loadConfig(env), db, () => now)) })),
};
