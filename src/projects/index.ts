import { eq } from "drizzle-orm";
import type { Capability } from "../core/capability";
import { projects } from "../db/schema";

/** Projects a conversation belongs to. So far: their rows, checked on chat turns, and erased with the user's memory. */
export const projectsCapability: Capability = {
  name: "projects",
  erase: async ({ db, userId }) => ({
    statements: [{ count: "projects", statement: db.delete(projects).where(eq(projects.userId, userId)).returning({ id: projects.id }) }],
  }),
};
