/**
 * The offline model's rule for the built-in tools (docs/offline-model.md): "what time is it?" checks the clock.
 * The stand-in's English, registered through the capability value; nothing else imports it.
 */
import type { OfflineRules } from "../model/offline-rule";
import { currentTime } from "./time";

export const builtinsOfflineRules: OfflineRules = {
  tools: [currentTime.name],
  rules: [
    {
      stage: "ask",
      priority: 10,
      tool: ({ said }) =>
        /\b(what time|the time|what day|what date|today's date)\b/i.test(said) ? { name: currentTime.name, lead: "Let me check the clock." } : null,
    },
  ],
};
