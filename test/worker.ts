/**
 * The Worker the tests run against: production's capabilities plus the test capability, with D1 round
 * trips counted up to the first model call (test/d1-meter.ts).
 */
import { createWorker } from "../src/app";
import { capabilities } from "../src/capabilities";
import type { Env } from "../src/config/env";
import { composeRegistry } from "../src/core/capability";
import type { QueueMessage } from "../src/core/queue";
import { SessionObject } from "../src/sessions/session-do";
import { meteredD1, meteredFetch, meteredShards } from "./d1-meter";
import { endFilibusters, testCapability } from "./test-capability";

export const registry = composeRegistry([...capabilities, testCapability]);

const metered = (env: Env): Env => meteredShards(env, meteredD1);
globalThis.fetch = meteredFetch(globalThis.fetch);

export class SessionDO extends SessionObject {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, metered(env), registry);
  }

  /** A stopped or cancelled turn (stopTurns goes through here) also ends the test capability's `filibuster` call, which nothing else ends. */
  override cancelTurn(turnId: string, why?: "gone" | "stopped"): void {
    super.cancelTurn(turnId, why);
    endFilibusters();
  }
}

const worker = createWorker(registry);

export default {
  ...worker,
  fetch: (request, env, ctx) => worker.fetch(request, metered(env), ctx),
} satisfies ExportedHandler<Env, QueueMessage>;
