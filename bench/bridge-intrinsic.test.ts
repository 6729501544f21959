// Not a unit test (run by `npm run bench`): the bridge's own work per suspend + resume cycle inside the
// session Durable Object, with no HTTP, model or D1. Reports figures; asserts nothing.
import { env, runInDurableObject } from "cloudflare:test";
import { it } from "vitest";
import { applyAnswer, isRefusal, resolveAnswer, ToolResultRequest } from "../src/bridge/answer";
import { type Continuation, envelopeOf } from "../src/bridge/continuation";
import { turnTools } from "../src/bridge/toolset";
import { loadConfig } from "../src/config/config";
import type { ToolContext } from "../src/core/tool";
import { createDb } from "../src/db/client";
import { toModelMessages } from "../src/sessions/history";
import { SessionStorage } from "../src/sessions/storage";
import { report } from "./report";

const tool = {
  name: "lookup_order",
  description: "Look up an order",
  input_schema: { type: "object" as const, properties: { id: { type: "string" } } },
  needs_approval: false,
};
const BATCH = 10;
const GROUP = {
  group: "Bridge: suspend + resume inside the session Durable Object",
  target: "suspend + resume overhead (excluding the model) p50 <= 10 ms",
  targets: { suspend_resume_ms: { p50: 10 } },
  description: `Per cycle: store the continuation, arm the TTL alarm, build the envelope, read and check the client's answer, close the continuation into history, disarm, reload a 20-message history for the model. Mean per cycle over batches of ${BATCH} (the workerd clock only advances on I/O, so single cycles are too fast to time one by one).`,
};
const BATCHES = 400;

function suspended(id: string, now: number): Continuation {
  return {
    v: 2,
    user_id: "usr_bench",
    session_id: "ses_bench",
    site_id: null,
    project_id: null,
    model: "m",
    system: "You are helpful. ".repeat(200),
    messages: [
      {
        role: "assistant",
        content: [
          { type: "text", text: "Let me look." },
          { type: "tool_use", id, name: "lookup_order", input: { id: "A-17" } },
        ],
      },
    ],
    results: [],
    pending: [{ call_id: id, tool_name: "lookup_order", tool_input: { id: "A-17" }, runs: "client", needs_approval: false }],
    client_tools: [tool],
    server_tools: ["current_time"],
    tools_used: ["lookup_order"],
    iterations: 1,
    usage: { input_tokens: 10, output_tokens: 10 },
    counters: {},
    injected: { soul: ["doc_1@3"] },
    stream: true,
    created_at: now,
    expires_at: now + 1_800_000,
  };
}

it("suspend + resume cycle", async () => {
  const stub = env.SESSIONS.get(env.SESSIONS.idFromName("bench/intrinsic"));
  await runInDurableObject(stub, async (_instance, ctx) => {
    const store = new SessionStorage(ctx.storage);
    // A session of 20 messages of ordinary size; each cycle adds 4 and the oldest 4 are dropped.
    for (let i = 0; i < 10; i++)
      store.append([
        { role: "user", content: [{ type: "text", text: `question ${i} `.repeat(20) }] },
        { role: "assistant", content: [{ type: "text", text: `answer ${i} `.repeat(40) }] },
      ]);
    const tools = turnTools([], [tool]);
    const toolCtx: ToolContext = {
      db: createDb(env.DB),
      env,
      config: loadConfig(env),
      userId: "usr_bench",
      plan: "free",
      sessionId: "ses_bench",
      siteId: null,
      projectId: null,
      emit: () => undefined,
      turn: new Map(),
      injected: new Map(),
    };
    const samples: number[] = [];
    for (let n = 0; n < BATCHES + 20; n++) {
      const t0 = performance.now();
      for (let b = 0; b < BATCH; b++) {
        const id = `toolu_${n}_${b}`;
        store.append([{ role: "user", content: [{ type: "text", text: "where is my order?" }] }]);
        // Suspend: store the continuation, arm its deadline, send the envelope.
        const c = suspended(id, Date.now());
        store.saveContinuation(c);
        await ctx.storage.setAlarm(c.expires_at);
        JSON.stringify(envelopeOf(c));
        // Resume: read and check the answer, close the continuation, disarm, reload history for the model.
        const cont = store.continuation();
        const r = cont && resolveAnswer(cont, ToolResultRequest.parse({ call_id: id, content: "status: shipped" }));
        if (!cont || !r || isRefusal(r)) throw new Error("the cycle broke");
        const { results } = await applyAnswer(cont, r, tools, toolCtx, () => undefined);
        store.closeContinuation([...cont.messages, { role: "user", content: results }]);
        await ctx.storage.deleteAlarm();
        toModelMessages(store.messages());
        store.append([{ role: "assistant", content: [{ type: "text", text: "shipped" }] }]);
        ctx.storage.sql.exec("DELETE FROM messages WHERE seq IN (SELECT seq FROM messages ORDER BY seq LIMIT 4)");
      }
      if (n >= 20) samples.push((performance.now() - t0) / BATCH);
    }
    report(GROUP, "suspend_resume_ms", samples);
  });
}, 120_000);
