import Anthropic from "@anthropic-ai/sdk";
import type { Config } from "../config/config";
import { offlineFetch } from "./offline";

export type ModelClient = Anthropic;

/** The one place the Anthropic client is built: the real API with a key, the offline model without. */
export function createModelClient(config: Config): { client: ModelClient; offline: boolean } {
  const offline = !config.anthropicApiKey;
  const client = new Anthropic({
    apiKey: config.anthropicApiKey ?? "offline",
    baseURL: offline ? "http://offline.engram.invalid" : config.anthropicBaseUrl,
    maxRetries: config.modelMaxRetries,
    timeout: config.modelTimeoutMs,
    ...(offline ? { fetch: offlineFetch } : {}),
  });
  return { client, offline };
}
