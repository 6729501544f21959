// The memory micro-benchmarks (bench/memory-perf.test.ts) run in the same workerd + D1 setup as the tests,
// but outside `npm test`: npx vitest run --config bench/vitest.memory.config.ts
import { defineConfig } from "vitest/config";
import root from "../vitest.config";

export default defineConfig(async (env) => {
  const base = await root(env);
  return { ...base, test: { ...base.test, include: ["bench/memory-perf.test.ts"], testTimeout: 600_000, hookTimeout: 600_000 } };
});
