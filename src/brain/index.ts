import type { Capability } from "../core/capability";
import { brainContextProvider } from "./context";
import { staleHeartbeatsJob } from "./cron";
import { eraseBrain } from "./erase";
import { brainMcpResources, brainMcpTools } from "./mcp";
import { brainOfflineRules } from "./offline-chat-rules";
import { brainOverview } from "./overview";
import { brainRoutes } from "./routes";
import { updateCustomerBrain } from "./tool";

/** The brain documents: SOUL, BIBLE, MEMORY and HEARTBEAT, written by the model and by the user. */
export const brainCapability: Capability = {
  name: "brain",
  tools: [updateCustomerBrain],
  mcpTools: brainMcpTools,
  mcpResources: brainMcpResources,
  contextProviders: [{ ...brainContextProvider, priority: 20 }],
  routes: brainRoutes,
  cronJobs: [staleHeartbeatsJob],
  overview: brainOverview,
  erase: eraseBrain,
  offline: brainOfflineRules,
};
