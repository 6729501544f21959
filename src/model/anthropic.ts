import Anthropic from "@anthropic-ai/sdk";
import type { Config } from "../config/config";
import { idleLimitedFetch } from "./idle";
import { createOfflineFetch, type OfflineSkills } from "./offline";
import type { OfflineRules } from "./offline-rule";

export type ModelClient = Anthropic;

type Built = { client: ModelClient; offline: boolean };

// A client holds no per-request state, and building one (its resources, headers, options) is work every
// model call repeated: one per settled config (loadConfig keeps one per env), offline skill set and rule set.
// Kept weakly: a caller that passes new skills or rules per call gets a new client, and nothing piles up.
const built = new WeakMap<Config, WeakMap<object, WeakMap<object, Built>>>();
const NONE = {};

/**
 * The one place the Anthropic client is built: the real API when a key is set, the offline model
 * (same SDK, answered in-process) when not. `offlineSkills` lets a caller that asks for structured output
 * say how the offline model should fill it in; `offlineRules` are the registry's chat rules (offline-rule.ts).
 * Pass the same objects each time: clients are kept per object.
 */
export function createModelClient(config: Config, offlineSkills?: OfflineSkills, offlineRules?: OfflineRules): Built {
  let forConfig = built.get(config);
  if (!forConfig) built.set(config, (forConfig = new WeakMap()));
  let forSkills = forConfig.get(offlineSkills ?? NONE);
  if (!forSkills) forConfig.set(offlineSkills ?? NONE, (forSkills = new WeakMap()));
  const hit = forSkills.get(offlineRules ?? NONE);
  if (hit) return hit;
  const offline = !config.anthropicApiKey;
  const client = new Anthropic({
    apiKey: config.anthropicApiKey ?? "offline",
    baseURL: offline ? "http://offline.engram.invalid" : config.anthropicBaseUrl,
    maxRetries: config.modelMaxRetries,
    timeout: config.modelTimeoutMs,
    // `timeout` ends a wait for headers; the idle limit ends a stream that stops sending.
    fetch: offline ? createOfflineFetch(offlineSkills, offlineRules) : idleLimitedFetch(config.modelTimeoutMs),
    // No OpenTelemetry tracer is registered in a Worker: the SDK's spans would record nothing, but
    // building their attributes and trace headers is work on every call.
    openTelemetry: false,
  });
  const made = { client, offline };
  forSkills.set(offlineRules ?? NONE, made);
  return made;
}
