import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import Anthropic from "@anthropic-ai/sdk";
import { loadConfig } from "../src/config/config";
import type { QueueMessage } from "../src/core/queue";
import { createDb } from "../src/db/client";
import { CONSOLIDATE_KIND, type ConsolidateMessage, type MemoryDeps, memoryDeps } from "../src/memory/deps";
import { type ObservationInput, recordObservations } from "../src/memory/events";
import type { Candidate } from "../src/memory/search-types";
import { messageJson } from "../src/model/wire";
import type { Step } from "./fake-anthropic/worker";
import { api } from "./helpers";
import { userDb } from "./shard-helpers";

/**
 * Memory deps on the user's shard (null: shard 0, for users created there) whose queue only records what was sent:
 * no real delivery races the test.
 */
export async function captured(userId: string | null, overrides: Partial<MemoryDeps> = {}) {
  const sent: ConsolidateMessage[] = [];
  const deps: MemoryDeps = {
    ...memoryDeps(env, loadConfig(env), userId === null ? createDb(env.DB) : await userDb(userId)),
    queue: {
      send: async (m) => {
        sent.push(m);
      },
    },
    ...overrides,
  };
  return { deps, sent };
}

export async function observe(userId: string, inputs: (Partial<ObservationInput> & { content: string })[], plan: "free" | "pro" = "free") {
  const { deps, sent } = await captured(userId);
  const out = await recordObservations(
    deps,
    { id: userId, plan },
    inputs.map((i) => ({ type: i.type ?? "fact", content: i.content, sourceMetadata: i.sourceMetadata ?? { source: "test" } })),
  );
  return { ...out, sent };
}

let seq = 0;

/** Delivers messages to the Worker's `queue` handler, as the queue would, and returns the ack/retry outcome. */
export async function deliver(messages: ConsolidateMessage[], attempts = 1, queue = "engram-observations") {
  const batch = createMessageBatch<QueueMessage>(
    queue,
    messages.map((body) => ({ id: `msg-${++seq}`, timestamp: new Date(), attempts, body })),
  );
  const ctx = createExecutionContext();
  const worker = (await import("../src/index")).default;
  await worker.queue(batch, env);
  return getQueueResult(batch, ctx);
}

export const consolidateMessage = (userId: string, eventIds: string[] = []): ConsolidateMessage => ({ kind: CONSOLIDATE_KIND, userId, eventIds });

/** The fake model's reply to a consolidation call: this JSON as the structured output. */
export const consolidation = (input: unknown): Step => ({ structured: true, reply: { content: [{ type: "text", text: JSON.stringify(input) }] } });

/**
 * A consolidation model that takes its time: `meanwhile` runs while it "thinks" (an erase, a restore), then it
 * answers with the consolidation output it returns, for the test to see what a run started before that writes.
 */
export const slowModel = (meanwhile: (body: string) => Promise<unknown>) =>
  new Anthropic({
    apiKey: "test",
    baseURL: "http://slow-model.test",
    maxRetries: 0,
    fetch: async (_url, init) => {
      const output = await meanwhile(String(init?.body));
      const content = [{ type: "text" as const, text: JSON.stringify(output) }];
      return Response.json(messageJson({ id: "msg_slow", model: "m", content, stop_reason: "end_turn", usage: { input_tokens: 1, output_tokens: 1 } }));
    },
  });

export async function getJson<T>(key: string, path: string): Promise<T> {
  const res = await api(key, "GET", path);
  if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

export type SearchBody = { results: { id: string; text: string; score: number; metadata: Record<string, unknown> }[]; degraded?: string };

export const search = (key: string, q: string, extra = "") => getJson<SearchBody>(key, `/v1/memory/facts/search?q=${encodeURIComponent(q)}${extra}`);

export type ImportedFact = { text: string; key?: string; supersedes?: string[]; metadata?: Record<string, unknown> };

export async function importFacts(key: string, facts: ImportedFact[]) {
  const res = await api(key, "POST", "/v1/memory/facts", { facts });
  if (res.status !== 201) throw new Error(`import: ${res.status} ${await res.text()}`);
  return (await res.json()) as {
    facts: { id: string; text: string; superseded_by: string | null }[];
    superseded: string[];
    embedded: number;
    indexing?: string;
  };
}

const DAY_MS = 86_400_000;
let rankedRows = 0;

/** A search candidate said by `role` on `day` (days since the epoch), ranked below every one made before it. */
export const rankedFact = (text: string, day: number, role = "user"): { c: Candidate; score: number } => ({
  score: 1 / ++rankedRows,
  c: {
    id: `f${++rankedRows}`,
    rowid: rankedRows,
    text,
    metadata: JSON.stringify({ role }),
    confidence: 0.8,
    recall_count: 0,
    last_recalled_at: null,
    created_at: day * DAY_MS,
    event_at: day * DAY_MS,
    superseded_by: null,
  },
});
