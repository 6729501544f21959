/**
 * What crosses between node and workerd: the config (bench/locomo/vitest.config.ts) provides the selected
 * conversations, and the test leaves the per-question ranks in its task meta for the config's reporter to write
 * to --json (a Worker cannot write the host's files).
 */
import type { System } from "./tables";

export type LocomoInput = {
  /** 1-based positions in the file, each with its raw conversation (only `sample_id`, `conversation` and `qa`). */
  conversations: { number: number; raw: unknown }[];
  /** Set on every engram search URL, over the defaults (--params). */
  params: string;
  /** Run the ablation (bench/locomo/ablation.test.ts) instead of the comparison (--ablate). */
  ablate: boolean;
};

export type QuestionRanks = {
  conversation: number;
  sample_id: string;
  /** Position in the conversation's `qa` array. */
  index: number;
  category: number;
  evidence: string[];
  /** Evidence ids that name no turn: not scored. */
  unknown: string[];
  ranks: Partial<Record<System, (number | null)[]>>;
};

export type LocomoOutput = {
  k: number;
  params: string;
  questions: QuestionRanks[];
  /** The targets table (tables.ts `targetsSection`), for BENCHMARKS.md. */
  targets: string;
};

declare module "vitest" {
  interface ProvidedContext {
    locomo: LocomoInput | null;
  }
}

declare module "@vitest/runner" {
  interface TaskMeta {
    locomo?: LocomoOutput;
  }
}
