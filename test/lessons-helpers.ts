import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { loadConfig } from "../src/config/config";
import type { QueueMessage } from "../src/core/queue";
import { createDb } from "../src/db/client";
import { type ExtractMessage, type LessonsDeps, lessonsDeps } from "../src/lessons/deps";
import type { Step } from "./fake-anthropic/worker";
import { api } from "./helpers";
import { countOnShards, userDb } from "./shard-helpers";

export const upload = (key: string, body: Record<string, unknown>) => api(key, "POST", "/v1/transcripts", body);

export const bytes = (s: string) => new TextEncoder().encode(s).length;

/** Lessons deps on the user's shard whose queue records what was sent instead of delivering it (tests deliver explicitly). */
export async function capturedDeps(userId: string | null, now?: () => number): Promise<{ deps: LessonsDeps; sent: ExtractMessage[] }> {
  const sent: ExtractMessage[] = [];
  const deps = lessonsDeps(env, loadConfig(env), userId === null ? createDb(env.DB) : await userDb(userId), now);
  return { deps: { ...deps, queue: { send: async (m) => void sent.push(m) } }, sent };
}

let seq = 0;

/** Delivers messages to the Worker's queue handler, as the queue would, and returns the ack/retry outcome. */
export async function deliver(messages: QueueMessage[], attempts = 1, queue = "engram-observations") {
  const batch = createMessageBatch<QueueMessage>(
    queue,
    messages.map((body) => ({ id: `les-msg-${++seq}`, timestamp: new Date(), attempts, body })),
  );
  const ctx = createExecutionContext();
  const worker = (await import("./worker")).default;
  await worker.queue(batch, env);
  return getQueueResult(batch, ctx);
}

export type WireLesson = {
  type: string;
  signal: string;
  flags: string[];
  title: string;
  content: string;
  tags: string[];
  scope: "project" | "global";
};

/** The fake model's reply to an extraction call (with the tokens it reports, when given). */
export const extraction = (lessons: unknown[], usage?: { input_tokens: number; output_tokens: number }): Step => ({
  structured: true,
  reply: { content: [{ type: "text", text: JSON.stringify({ lessons }) }], usage },
});

export const lesson = (over: Partial<WireLesson> = {}): WireLesson => ({
  type: "lesson",
  signal: "HIGH",
  flags: [],
  title: "Use exponential backoff with jitter for retries",
  content: "Retry 429s with exponential backoff and jitter, honouring Retry-After; a fixed sleep retries in lockstep.",
  tags: ["retry", "backoff"],
  scope: "global",
  ...over,
});

export const count = countOnShards;
