// Micro-benchmarks inside workerd, in the same D1 + Durable Object setup as the tests but outside
// `npm test`: `npm run bench` runs them and collects their BENCH_RESULT lines into BENCHMARKS.md.
import { defineConfig } from "vitest/config";
import root from "../vitest.config";

export default defineConfig(async (env) => {
  const base = await root(env);
  return {
    ...base,
    test: { ...base.test, include: ["bench/**/*.test.ts"], testTimeout: 900_000, hookTimeout: 900_000, fileParallelism: false },
  };
});
