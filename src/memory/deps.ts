/** The outside capabilities memory needs, chosen once from config, so domain code never reads the env. */
import { z } from "zod";
import type { Config } from "../config/config";
import type { Env } from "../config/env";
import type { PlanQuotas } from "../config/limits";
import type { Db } from "../db/client";
import type { Embedder } from "./embed";
import { workersAiEmbedder } from "./embed-workers-ai";
import { localEmbedder } from "./offline-embed";
import { type Reranker, workersAiReranker } from "./rerank";
import { LocalVectorIndex, type VectorIndex } from "./vector";
import { FreshOverlayIndex, VectorizeVectorIndex } from "./vector-vectorize";

export const CONSOLIDATE_KIND = "memory.consolidate";

/** The observation queue message: consolidate this user's pending events (`eventIds`: the ones it announces). */
export const ConsolidateMessage = z.object({ kind: z.literal(CONSOLIDATE_KIND), userId: z.string().min(1), eventIds: z.array(z.string()) });
export type ConsolidateMessage = z.infer<typeof ConsolidateMessage>;

export interface MessageQueue {
  send(body: ConsolidateMessage): Promise<unknown>;
}

export type MemoryDeps = {
  db: Db;
  embedder: Embedder;
  vectors: VectorIndex;
  queue: MessageQueue;
  now: () => number;
  /** The plan caps background writes (consolidation) obey; request paths check their own. */
  quotas?: PlanQuotas;
  /** Reorders a search's best candidates (RERANK=on, Workers AI); none offline, or when off. */
  reranker?: Reranker;
};

export function memoryDeps(env: Env, config: Config, db: Db, now: () => number = Date.now): MemoryDeps {
  const base = { db, queue: env.OBSERVATIONS, now, quotas: config.quotas, ...(config.rerank && env.AI ? { reranker: workersAiReranker(env.AI) } : {}) };
  if (config.vectorBackend === "vectorize" && env.VECTORS && env.AI) {
    const embedder = workersAiEmbedder(env.AI, config.embeddingModel);
    return { ...base, embedder, vectors: new FreshOverlayIndex(new VectorizeVectorIndex(env.VECTORS, embedder), db, now) };
  }
  return { ...base, embedder: localEmbedder, vectors: new LocalVectorIndex(db) };
}
