/**
 * `env.AI.run` as engram calls it: a model id and its JSON input, answering JSON. The binding's generated types
 * tie each model to an input type that lags the model pages (bge-reranker-base's has no `query`, which its page
 * requires), so callers build inputs from the documented schemas and parse every answer instead of trusting it.
 */
export type RunModel = (model: string, inputs: Record<string, unknown>) => Promise<unknown>;

/**
 * A failure names the model, so a degraded search or a failed sweep says which call broke. No `cause`: the
 * search's degraded reason shows a cause's message in place of the error's own, which would drop the model.
 */
export function runModel(ai: Ai): RunModel {
  const run = ai.run as unknown as RunModel;
  return async (model, inputs) => {
    try {
      return await run.call(ai, model, inputs);
    } catch (err) {
      throw new Error(`Workers AI ${model} failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  };
}

/** A short account of an unexpected answer for an error message: its keys, not its (possibly large) values. */
export const shapeOf = (out: unknown): string =>
  out === null || typeof out !== "object"
    ? (JSON.stringify(out) ?? String(out))
    : Array.isArray(out)
      ? `an array of ${out.length}`
      : `keys ${Object.keys(out).join(", ") || "none"}`;
