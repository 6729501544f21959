/**
 * The Workers AI models engram calls, with the facts their Cloudflare model pages document (read November 2026):
 * config validates EMBEDDING_MODEL against this table, and the embedder, the reranker and the test fakes take
 * their limits from it. Prices are USD per million input tokens; Workers AI reports no token counts for these
 * models, so usage rows carry estimates.
 */
export const EMBEDDING_MODELS = {
  // Multilingual (100+ languages), dense vectors of 1024 dimensions, inputs of up to 8,192 tokens.
  "@cf/baai/bge-m3": { dimensions: 1024, maxTexts: 100, maxInputTokens: 8192, usdPerMillionTokens: 0.012 },
  // English only, 768 dimensions, inputs of up to 512 tokens.
  "@cf/baai/bge-base-en-v1.5": { dimensions: 768, maxTexts: 100, maxInputTokens: 512, usdPerMillionTokens: 0.067 },
} as const;

export type EmbeddingModel = keyof typeof EMBEDDING_MODELS;
export const EMBEDDING_MODEL_IDS = Object.keys(EMBEDDING_MODELS) as [EmbeddingModel, ...EmbeddingModel[]];
/** Users write in every language: the multilingual model is the default. */
export const DEFAULT_EMBEDDING_MODEL: EmbeddingModel = "@cf/baai/bge-m3";

/**
 * A cross-encoder: scores (query, text) pairs directly. Its page documents no batch or length limit; it was trained
 * on English and Chinese only (BAAI's model card), unlike bge-m3, one more reason it is off by default.
 */
export const RERANK_MODELS = {
  "@cf/baai/bge-reranker-base": { usdPerMillionTokens: 0.0031 },
} as const;

export type RerankModel = keyof typeof RERANK_MODELS;
export const DEFAULT_RERANK_MODEL: RerankModel = "@cf/baai/bge-reranker-base";
