/** Production embeddings: Workers AI's bge models behind the Embedder interface. */
import { DEFAULT_EMBEDDING_MODEL, EMBEDDING_MODELS, type EmbeddingModel } from "../config/workers-ai";
import { approxTokens } from "../lib/text";
import { type Embedder, normalize, type SparseVector } from "./embed";
import { runModel, shapeOf } from "./workers-ai";

/**
 * What each model is sent besides the texts. bge-m3 truncates an over-long input instead of failing the whole
 * call of up to 100 texts (its default is to fail). bge-base states `mean`, its default: `cls` is more accurate on
 * long inputs, but its vectors cannot be compared with mean ones, so changing it means re-embedding every fact.
 */
const OPTIONS: Record<EmbeddingModel, Record<string, unknown>> = {
  "@cf/baai/bge-m3": { truncate_inputs: true },
  "@cf/baai/bge-base-en-v1.5": { pooling: "mean" },
};

/**
 * Noise floor and fusion weight. bge-base's come from the recall evaluation (docs/memory.md); bge-m3 starts from
 * the same values, not yet measured on real data.
 */
const TUNING = { minScore: 0.5, fusionWeight: 0.8 } as const;

const tokensOf = (texts: string[]) => texts.reduce((n, t) => n + approxTokens(t), 0);

const dense = (values: number[]): SparseVector => normalize(new Map(values.map((v, i) => [i, v])));

/** Workers AI text embeddings: dense, cosine, of the model's documented dimension (config/workers-ai.ts). */
export function workersAiEmbedder(ai: Ai, model: EmbeddingModel = DEFAULT_EMBEDDING_MODEL): Embedder {
  const { dimensions, maxTexts } = EMBEDDING_MODELS[model];
  const run = runModel(ai);
  return {
    model,
    dimensions,
    ...TUNING,
    async embed(texts) {
      const vectors: SparseVector[] = [];
      for (let i = 0; i < texts.length; i += maxTexts) {
        const batch = texts.slice(i, i + maxTexts);
        vectors.push(...embeddingsOf(model, await run(model, { text: batch, ...OPTIONS[model] }), batch.length, dimensions));
      }
      return { vectors, tokens: tokensOf(texts) };
    },
  };
}

/** The documented answer to a `text` input, `{shape, data}`: one vector of the model's dimension per text, in order. */
function embeddingsOf(model: string, out: unknown, count: number, dimensions: number): SparseVector[] {
  const data = out !== null && typeof out === "object" && "data" in out ? out.data : undefined;
  if (!Array.isArray(data) || data.length !== count) throw new Error(`Workers AI ${model} returned no embeddings for ${count} texts (${shapeOf(out)})`);
  return data.map((v: unknown, i) => {
    if (!Array.isArray(v) || v.length !== dimensions || !v.every((x) => typeof x === "number" && Number.isFinite(x))) {
      throw new Error(`Workers AI ${model} returned embedding ${i} that is not ${dimensions} numbers`);
    }
    return dense(v);
  });
}
