import { eq } from "drizzle-orm";
import type { Capability } from "../core/capability";
import { lessons, transcripts } from "../db/schema";

/** Coding lessons from assistant transcripts. So far: their tables, erased with the user's memory. */
export const lessonsCapability: Capability = {
  name: "lessons",
  erase: async ({ db, userId }) => ({
    statements: [
      { count: "lessons", statement: db.delete(lessons).where(eq(lessons.userId, userId)).returning({ id: lessons.id }) },
      { count: "transcripts", statement: db.delete(transcripts).where(eq(transcripts.userId, userId)).returning({ id: transcripts.id }) },
    ],
  }),
};
