/**
 * The offline model as engram runs it: with the chat rules of production's capabilities (the registry's
 * `offline`), as the session runner hands them to `createModelClient`.
 */
import { capabilities } from "../src/capabilities";
import { composeRegistry } from "../src/core/capability";
import { type OfflineRequest, type OfflineSkills, createOfflineFetch as offlineFetch, offlineReply as reply } from "../src/model/offline";
import { planReply } from "../src/model/offline-plan";
import type { OfferedTool, ShownFact } from "../src/model/offline-rule";

export const { offline: offlineRules } = composeRegistry(capabilities);

export const offlineReply = (req: OfflineRequest, skills: OfflineSkills = {}) => reply(req, skills, offlineRules);
export const createOfflineFetch = (skills: OfflineSkills = {}) => offlineFetch(skills, offlineRules);

/** The calls the offline model plans for a message (null: none, it answers in words). */
export function planCalls(said: string, tools: OfferedTool[], context = "", facts: readonly ShownFact[] = []) {
  const plan = planReply({ said, tools, offers: (name) => tools.some((t) => t.name === name), context, facts }, offlineRules);
  return plan && "calls" in plan ? plan : null;
}
