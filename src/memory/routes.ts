import { newRouter } from "../http/openapi";
import { connectionRoutes } from "./routes-connections";
import { factRoutes } from "./routes-facts";
import { memoryStateRoutes } from "./routes-memory";

/** Every memory endpoint: /v1/observations, /v1/memory/*, /v1/connections/*. */
export const memoryRoutes = newRouter().route("/", factRoutes).route("/", memoryStateRoutes).route("/", connectionRoutes);
