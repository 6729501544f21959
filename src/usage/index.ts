import type { Capability } from "../core/capability";
import { usageRoutes } from "./routes";

/** Token usage and estimated cost: read endpoints (rows are written by the chat core and the background calls). */
export const usageCapability: Capability = { name: "usage", routes: usageRoutes };
