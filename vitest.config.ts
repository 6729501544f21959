import path from "node:path";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { buildFakeAnthropic } from "./scripts/build-fake.mjs";

const FAKE_ANTHROPIC = path.join(import.meta.dirname, ".wrangler/test/fake-anthropic.mjs");

export default defineConfig(async () => {
  const migrations = await readD1Migrations(path.join(import.meta.dirname, "migrations"));
  // The fake Messages API runs as its own worker; bundle it (it shares src/model/wire.ts).
  await buildFakeAnthropic(FAKE_ANTHROPIC);
  return {
    plugins: [
      cloudflareTest({
        // The production configuration, with the test Worker (production capabilities + a test capability) as main.
        main: "./test/worker.ts",
        wrangler: { configPath: "./wrangler.toml" },
        miniflare: {
          bindings: {
            TEST_MIGRATIONS: migrations,
            ADMIN_TOKEN: "test-admin-token-0123456789",
            ANTHROPIC_API_KEY: "sk-ant-test",
            ANTHROPIC_BASE_URL: "http://fake-anthropic.test",
          },
          // Every outbound fetch of the Worker under test goes to the fake Messages API.
          outboundService: "fake-anthropic",
          serviceBindings: { FAKE_ANTHROPIC: "fake-anthropic" },
          workers: [{ name: "fake-anthropic", modules: true, scriptPath: FAKE_ANTHROPIC, compatibilityDate: "2026-04-01" }],
        },
      }),
    ],
    test: {
      setupFiles: ["./test/setup.ts"],
      include: ["test/**/*.test.ts", "src/**/*.test.ts"],
    },
  };
});
