import path from "node:path";
import { defineConfig } from "vitest/config";

// The CLI's tests run in Node (they start processes), against `wrangler dev` started once by the global setup.
export default defineConfig({
  root: path.join(import.meta.dirname, ".."),
  test: {
    include: ["cli/test/**/*.test.ts"],
    globalSetup: ["cli/test/server.ts"],
    // One wrangler dev, many CLI processes, a 2-core machine shared with other work: generous, not tight.
    testTimeout: 180_000,
    hookTimeout: 300_000,
    fileParallelism: false,
  },
});
