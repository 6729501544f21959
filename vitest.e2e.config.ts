import { defineConfig } from "vitest/config";

/**
 * The browser tests: run in Node (not workerd), after the workerd suite. Each file starts its own
 * `wrangler dev` and Chromium (test/e2e/server.ts, test/e2e/browser.ts); screenshots land in test/e2e/artifacts.
 */
export default defineConfig({
  test: {
    include: ["test/e2e/**/*.e2e.ts"],
    environment: "node",
    fileParallelism: false,
    testTimeout: 90_000,
    hookTimeout: 180_000,
  },
});
