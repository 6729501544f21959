/** Production embeddings: Workers AI text embedding models behind the Embedder interface. */
import { approxTokens } from "../lib/text";
import { type Embedder, normalize, type SparseVector } from "./embed";

const tokensOf = (texts: string[]) => texts.reduce((n, t) => n + approxTokens(t), 0);

const dense = (values: number[]): SparseVector => normalize(new Map(values.map((v, i) => [i, v])));

/** The one Workers AI call the embedder makes (the `AI` binding has it). */
export interface TextEmbeddings {
  run(model: "@cf/baai/bge-base-en-v1.5", input: { text: string[] }): Promise<unknown>;
}

/** Workers AI text embeddings (bge-base, 768 dimensions, cosine). */
export function workersAiEmbedder(ai: TextEmbeddings, model = "@cf/baai/bge-base-en-v1.5" as const): Embedder {
  return {
    model,
    dimensions: 768,
    minScore: 0.5,
    fusionWeight: 0.8,
    async embed(texts) {
      const vectors: SparseVector[] = [];
      for (let i = 0; i < texts.length; i += 100) {
        const batch = texts.slice(i, i + 100);
        const out = await ai.run(model, { text: batch });
        const data = out && typeof out === "object" && "data" in out && Array.isArray(out.data) ? (out.data as unknown[]) : [];
        if (data.length !== batch.length || !data.every((v): v is number[] => Array.isArray(v))) throw new Error("Workers AI returned no embeddings");
        vectors.push(...data.map(dense));
      }
      return { vectors, tokens: tokensOf(texts) };
    },
  };
}
