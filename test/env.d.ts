import type { D1Migration } from "cloudflare:test";
import "../src/config/env";

// Bindings only the test pool adds (vitest.config.ts), merged into the Worker's generated Env.
declare global {
  namespace Cloudflare {
    interface Env {
      TEST_MIGRATIONS: D1Migration[];
      FAKE_ANTHROPIC: Fetcher;
      /** Small rate limits (vitest.config.ts) that test/limits-rate.test.ts swaps in for the production ones. */
      TEST_KEY_RATE_LIMIT: RateLimit;
      TEST_USER_RATE_LIMIT: RateLimit;
      TEST_ADMIN_RATE_LIMIT: RateLimit;
    }
  }
}
