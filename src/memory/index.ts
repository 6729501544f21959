import type { Capability } from "../core/capability";
import { memoryArchive } from "./archive";
import { memorySweepJob } from "./cron";
import { CONSOLIDATE_KIND } from "./deps";
import { eraseMemory } from "./erase";
import { memoryMcpResources, memoryMcpTools } from "./mcp";
import { memoryOfflineRules } from "./offline-chat-rules";
import { memoryOverview } from "./overview";
import { memoryProviders } from "./providers";
import { handleConsolidation, markDeadLettered } from "./queue";
import { memoryRoutes } from "./routes";
import { memoryTools, observeFromCore } from "./tools";

/** Adaptive memory: observations, background consolidation, working memory, scaffold and searchable facts. */
export const memoryCapability: Capability = {
  name: "memory",
  tools: memoryTools,
  mcpTools: memoryMcpTools,
  mcpResources: memoryMcpResources,
  contextProviders: memoryProviders.map((p) => ({ ...p, priority: 10 })),
  routes: memoryRoutes,
  queueKinds: [{ kind: CONSOLIDATE_KIND, handle: handleConsolidation, deadLetter: markDeadLettered }],
  cronJobs: [memorySweepJob],
  overview: memoryOverview,
  erase: eraseMemory,
  archive: memoryArchive,
  observe: observeFromCore,
  offline: memoryOfflineRules,
};
