// Not a unit test (run by `npm run bench`): building the system prompt with every brain document
// (SOUL, BIBLE, HEARTBEAT) and 50 MEMORY entries, inside the Worker against local D1.
import { env } from "cloudflare:test";
import { it } from "vitest";
import { brainContextProvider } from "../src/brain/context";
import { buildSystemPrompt } from "../src/chat/prompt";
import { loadConfig } from "../src/config/config";
import { createDb } from "../src/db/client";
import { api, createUser } from "../test/helpers";
import { report, sample } from "./report";

const GROUP = {
  group: "Brain: system prompt with all documents and 50 MEMORY entries",
  target: "p50 <= 5 ms inside the Worker",
  targets: { prompt_build_ms: { p50: 5 } },
  description:
    "buildSystemPrompt with the brain provider for a pro user: SOUL ~3.9k chars, BIBLE ~7.9k, HEARTBEAT from a 40-metric sync, 50 MEMORY entries; one D1 round trip per build.",
};

it("builds the brain prompt", async () => {
  const u = await createUser("pro");
  const ok = async (res: Promise<Response>) => {
    const r = await res;
    if (!r.ok) throw new Error(`bench setup: ${r.status} ${await r.text()}`);
  };
  await ok(api(u.key, "PUT", "/v1/brain/soul", { content: "Ana is a baker in Porto who likes precise answers. ".repeat(75) }));
  await ok(api(u.key, "PUT", "/v1/sites/bakery/bible", { content: "The bakery sells sourdough and pastries, opens at 7. ".repeat(145) }));
  const metrics = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`metric_${i}`, i * 3]));
  await ok(api(u.key, "PUT", "/v1/sites/bakery/sync", { name: "Bakery", status: "ok", metrics }));
  for (let i = 0; i < 50; i++) await ok(api(u.key, "POST", "/v1/brain/memory", { content: `Remembered insight number ${i} about orders and opening hours` }));
  const scope = {
    db: createDb(env.DB),
    env,
    config: loadConfig(env),
    userId: u.id,
    plan: "pro" as const,
    sessionId: "ses_bench",
    siteId: "bakery",
    projectId: null,
  };
  const times = await sample(300, 30, (i) =>
    buildSystemPrompt({ ...scope, query: `question ${i} about opening hours`, now: Date.now() }, [brainContextProvider]),
  );
  report(GROUP, "prompt_build_ms", times);
}, 120_000);
