/**
 * A fake Workers AI binding for tests (`env.AI.run(model, inputs)`): Workers AI cannot run offline. It serves the
 * models engram calls, checks every input against the JSON Schema on the model's page in Cloudflare's Workers AI
 * catalogue (read November 2026), rejects what does not fit as the real binding does, and answers in the
 * documented output shape. Embeddings are deterministic (hashed words and character bigrams, so any script,
 * spaced or not, works) and of the model's real dimension, so search runs end to end through the production code path.
 */
import { EMBEDDING_MODELS } from "../../src/config/workers-ai";
import { approxTokens, fnv1a } from "../../src/lib/text";
import { words } from "../../src/memory/text";

export class AiError extends Error {
  override name = "AiError";
}

type Input = Record<string, unknown>;

export class FakeWorkersAi {
  readonly calls: { model: string; inputs: unknown }[] = [];
  private readonly failures: Error[] = [];

  /** The fake as the binding's type: it implements `run`, the one member engram calls. */
  get binding(): Ai {
    return this as unknown as Ai;
  }

  /** The next calls fail with these errors, one a call, as an outage or a capacity error would. */
  failNext(...errors: Error[]): void {
    this.failures.push(...errors);
  }

  /** The inputs sent to one model, in order. */
  inputsTo(model: string): unknown[] {
    return this.calls.filter((c) => c.model === model).map((c) => c.inputs);
  }

  async run(model: string, inputs: unknown): Promise<unknown> {
    this.calls.push({ model, inputs: structuredClone(inputs) });
    const failure = this.failures.shift();
    if (failure) throw failure;
    if (inputs === null || typeof inputs !== "object" || Array.isArray(inputs)) throw new AiError(`${model}: the input must be an object`);
    const input = inputs as Input;
    if ("requests" in input) throw new AiError("fake Workers AI: the async batch form (`requests`) is not modelled");
    if (model === "@cf/baai/bge-base-en-v1.5") return bgeBase(input);
    if (model === "@cf/baai/bge-m3") return bgeM3(input);
    if (model === "@cf/baai/bge-reranker-base") return reranker(input);
    throw new AiError(`No such model ${model} or task`);
  }
}

/** Deterministic unit vector of `dimensions` for a text: hashed words (1.0) and character bigrams (0.5). */
export function fakeEmbedding(text: string, dimensions: number): number[] {
  const v = new Array<number>(dimensions).fill(0);
  const add = (feature: string, weight: number) => {
    const i = fnv1a(feature) % dimensions;
    v[i] = (v[i] ?? 0) + weight;
  };
  for (const w of words(text)) {
    add(`w:${w}`, 1);
    for (let i = 0; i + 2 <= w.length; i++) add(`b:${w.slice(i, i + 2)}`, 0.5);
  }
  const norm = Math.sqrt(v.reduce((n, x) => n + x * x, 0)) || 1;
  return v.map((x) => x / norm);
}

const relevance = (query: string, text: string) => {
  const [q, t] = [fakeEmbedding(query, 1024), fakeEmbedding(text, 1024)];
  return q.reduce((s, x, i) => s + x * (t[i] ?? 0), 0);
};

function texts(model: string, input: Input, maxItems: number): string[] {
  const text = input.text;
  if (text === undefined) throw new AiError(`${model}: required properties at '/' are 'text'`);
  const list = typeof text === "string" ? [text] : text;
  if (!Array.isArray(list)) throw new AiError(`${model}: 'text' must be a string or an array of strings`);
  if (list.length > maxItems) throw new AiError(`${model}: 'text' must have at most ${maxItems} items, got ${list.length}`);
  if (!list.every((t): t is string => typeof t === "string" && t.length >= 1)) throw new AiError(`${model}: every 'text' must be a non-empty string`);
  return list;
}

function contexts(model: string, input: Input): string[] {
  const list = input.contexts;
  if (!Array.isArray(list)) throw new AiError(`${model}: required properties at '/' are 'contexts'`);
  return list.map((c, i) => {
    const text = c !== null && typeof c === "object" ? (c as Input).text : undefined;
    if (typeof text !== "string" || text.length < 1) throw new AiError(`${model}: contexts[${i}].text must be a non-empty string`);
    return text;
  });
}

function bgeBase(input: Input) {
  const model = "@cf/baai/bge-base-en-v1.5";
  const { dimensions, maxTexts } = EMBEDDING_MODELS[model];
  const list = texts(model, input, maxTexts);
  const pooling = input.pooling ?? "mean";
  if (pooling !== "mean" && pooling !== "cls") throw new AiError(`${model}: 'pooling' must be "mean" or "cls"`);
  // Inputs over 512 tokens: the page documents the limit, not what happens past it, so nothing is modelled.
  // The two poolings give vectors that cannot be compared with each other: here, the same values reversed.
  const embed = (t: string) => (pooling === "cls" ? fakeEmbedding(t, dimensions).reverse() : fakeEmbedding(t, dimensions));
  return { shape: [list.length, dimensions], data: list.map(embed), pooling };
}

function bgeM3(input: Input) {
  const model = "@cf/baai/bge-m3";
  const { dimensions, maxTexts, maxInputTokens } = EMBEDDING_MODELS[model];
  // The schema is a oneOf: text (embeddings), or contexts with an optional query (scores, or the contexts' embeddings).
  if ("text" in input && "contexts" in input) throw new AiError(`${model}: the input must match exactly one of its schemas (text, or contexts)`);
  if (input.truncate_inputs !== undefined && typeof input.truncate_inputs !== "boolean") throw new AiError(`${model}: 'truncate_inputs' must be a boolean`);
  const tooLong = (list: string[]) => {
    if (input.truncate_inputs === true) return;
    const long = list.findIndex((t) => approxTokens(t) > maxInputTokens);
    if (long >= 0) throw new AiError(`${model}: input ${long} is longer than ${maxInputTokens} tokens (truncate_inputs is false)`);
  };
  if (!("contexts" in input)) {
    const list = texts(model, input, maxTexts);
    tooLong(list);
    return { shape: [list.length, dimensions], data: list.map((t) => fakeEmbedding(t, dimensions)), pooling: "cls" };
  }
  const list = contexts(model, input);
  tooLong(list);
  if (input.query === undefined) return { response: list.map((t) => fakeEmbedding(t, dimensions)), shape: [list.length, dimensions], pooling: "cls" };
  if (typeof input.query !== "string" || input.query.length < 1) throw new AiError(`${model}: 'query' must be a non-empty string`);
  const query = input.query;
  return { response: list.map((t, id) => ({ id, score: relevance(query, t) })).sort((a, b) => b.score - a.score) };
}

function reranker(input: Input) {
  const model = "@cf/baai/bge-reranker-base";
  if (typeof input.query !== "string" || input.query.length < 1) throw new AiError(`${model}: required property 'query' must be a non-empty string`);
  const query = input.query;
  const list = contexts(model, input);
  const topK = input.top_k;
  if (topK !== undefined && (typeof topK !== "number" || !Number.isInteger(topK) || topK < 1))
    throw new AiError(`${model}: 'top_k' must be an integer of at least 1`);
  const scored = list.map((t, id) => ({ id, score: relevance(query, t) })).sort((a, b) => b.score - a.score);
  return { response: topK === undefined ? scored : scored.slice(0, topK) };
}
