/** The Worker entry: the production registry, its handlers and its session Durable Object. */
import { createWorker } from "./app";
import { capabilities } from "./capabilities";
import type { Env } from "./config/env";
import { composeRegistry } from "./core/capability";
import { SessionObject } from "./sessions/session-do";

const registry = composeRegistry(capabilities);

export class SessionDO extends SessionObject {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env, registry);
  }
}

export default createWorker(registry);
