import { eq } from "drizzle-orm";
import type { Capability } from "../core/capability";
import { projectActivity, projects } from "../db/schema";
import { projectsContextProvider } from "./context";
import { projectsOfflineRules } from "./offline-chat-rules";
import { projectsOverview } from "./overview";
import { projectRoutes } from "./routes";
import { projectTools } from "./tools";

/**
 * Projects: the assistant organises conversations and memory into them, under the user's control
 * (docs/projects.md). Erasing a user's memory removes their projects and the activity log; the memory
 * rows themselves are erased by their own capabilities.
 */
export const projectsCapability: Capability = {
  name: "projects",
  tools: projectTools,
  contextProviders: [{ ...projectsContextProvider, priority: 20 }],
  routes: projectRoutes,
  overview: projectsOverview,
  offline: projectsOfflineRules,
  erase: async ({ db, userId }) => ({
    statements: [
      { count: "projects", statement: db.delete(projects).where(eq(projects.userId, userId)).returning({ id: projects.id }) },
      { statement: db.delete(projectActivity).where(eq(projectActivity.userId, userId)) },
    ],
  }),
};
