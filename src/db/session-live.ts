/**
 * A write a chat turn makes on the user's behalf is made only while the turn's session row exists: a turn can
 * outlive an erase (which leaves some conversations to the sweep) or the deletion of its session, and must not
 * write what it learned from the erased conversation back.
 */
import { and, eq, type SQL, sql } from "drizzle-orm";
import { sessions } from "./schema";

export const sessionLive = (userId: string, sessionId: string): SQL =>
  sql`EXISTS (SELECT 1 FROM ${sessions} WHERE ${and(eq(sessions.id, sessionId), eq(sessions.userId, userId))})`;

/** What a write refused by `sessionLive` tells the model (or the caller): why nothing was written. */
export const SESSION_GONE = "this conversation was deleted or its memory erased while it ran: nothing was written";
