// The memory micro-benchmarks (bench/memory-perf.test.ts) run in the same workerd + D1 setup as the tests,
// but outside `npm test`: npx vitest run --config bench/vitest.memory.config.ts
import { defineConfig, type UserConfig } from "vitest/config";
import root from "../vitest.config";

export default defineConfig(async (env) => {
  const base = (await (typeof root === "function" ? root(env) : root)) as UserConfig;
  return { ...base, test: { ...base.test, include: [process.env.BENCH_FILE ?? "bench/memory-perf.test.ts"], testTimeout: 600_000, hookTimeout: 600_000 } };
});
