import type { Capability } from "../core/capability";
import { builtinsOfflineRules } from "./offline-chat-rules";
import { currentTime } from "./time";

/** Tools every assistant has, with no memory of their own. */
export const builtinsCapability: Capability = { name: "builtins", tools: [currentTime], offline: builtinsOfflineRules };
