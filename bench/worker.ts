/**
 * The production Worker with D1 round trips counted (test/d1-meter.ts), for the chat-turn benchmark
 * only (`wrangler dev bench/worker.ts`). A POST /v1/chat starts a count; GET /__meter answers the D1
 * round trips that turn made before its first model call.
 */
import { createWorker } from "../src/app";
import { capabilities } from "../src/capabilities";
import type { Env } from "../src/config/env";
import { composeRegistry } from "../src/core/capability";
import type { QueueMessage } from "../src/core/queue";
import { SessionObject } from "../src/sessions/session-do";
import { meter, meteredD1, meteredFetch, meteredShards } from "../test/d1-meter";

const registry = composeRegistry(capabilities);
// One metered binding per real one, as production has one binding per isolate: a wrapper made per request
// would also defeat the per-binding caches the Worker keeps (its drizzle handle).
const wrapped = new WeakMap<D1Database, D1Database>();
const meteredDb = (d1: D1Database): D1Database => {
  let db = wrapped.get(d1);
  if (!db) wrapped.set(d1, (db = meteredD1(d1)));
  return db;
};
const metered = (env: Env): Env => meteredShards(env, meteredDb);
globalThis.fetch = meteredFetch(globalThis.fetch);

export class SessionDO extends SessionObject {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, metered(env), registry);
  }
}

const worker = createWorker(registry);

export default {
  ...worker,
  fetch: (request, env, ctx) => {
    const path = new URL(request.url).pathname;
    if (path === "/__meter") return Response.json(meter.reading());
    if (request.method === "POST" && path === "/v1/chat") meter.arm();
    return worker.fetch(request, metered(env), ctx);
  },
} satisfies ExportedHandler<Env, QueueMessage>;
