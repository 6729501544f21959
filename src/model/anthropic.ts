import Anthropic from "@anthropic-ai/sdk";
import type { Config } from "../config/config";
import { idleLimitedFetch } from "./idle";
import { createOfflineFetch, type OfflineSkills } from "./offline";

export type ModelClient = Anthropic;

/**
 * The one place the Anthropic client is built: the real API when a key is set, the offline model
 * (same SDK, answered in-process) when not. `offlineSkills` lets a caller that asks for structured output
 * say how the offline model should fill it in.
 */
export function createModelClient(config: Config, offlineSkills?: OfflineSkills): { client: ModelClient; offline: boolean } {
  const offline = !config.anthropicApiKey;
  const client = new Anthropic({
    apiKey: config.anthropicApiKey ?? "offline",
    baseURL: offline ? "http://offline.engram.invalid" : config.anthropicBaseUrl,
    maxRetries: config.modelMaxRetries,
    timeout: config.modelTimeoutMs,
    // `timeout` ends a wait for headers; the idle limit ends a stream that stops sending.
    fetch: offline ? createOfflineFetch(offlineSkills) : idleLimitedFetch(config.modelTimeoutMs),
  });
  return { client, offline };
}
