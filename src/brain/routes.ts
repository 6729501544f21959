import { newRouter } from "../http/openapi";
import { bibleRoutes, soulRoutes } from "./routes-documents";
import { memoryRoutes } from "./routes-memory";
import { reviewRoutes } from "./routes-review";
import { siteRoutes } from "./routes-sites";

/** Every brain endpoint: SOUL, BIBLE, MEMORY, HEARTBEAT and sync, sites, settings and proposals. */
export const brainRoutes = newRouter().route("/", soulRoutes).route("/", bibleRoutes).route("/", memoryRoutes).route("/", siteRoutes).route("/", reviewRoutes);
