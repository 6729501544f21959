/** The Worker the tests run against: production's capabilities plus the test capability. */
import { createWorker } from "../src/app";
import { capabilities } from "../src/capabilities";
import type { Env } from "../src/config/env";
import { composeRegistry } from "../src/core/capability";
import { SessionObject } from "../src/sessions/session-do";
import { testCapability } from "./test-capability";

export const registry = composeRegistry([...capabilities, testCapability]);

export class SessionDO extends SessionObject {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env, registry);
  }
}

export default createWorker(registry);
