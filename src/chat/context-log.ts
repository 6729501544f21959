import type { Db } from "../db/client";
import { newId } from "../db/client";
import { contextLogs } from "../db/schema";
import type { BuiltPrompt } from "./prompt";

/**
 * The audit row of one chat turn: exactly what it injected (section names, item ids and the system text itself,
 * so a user can read what the model was shown) and what it left out, and why.
 */
export function contextLogInsert(db: Db, userId: string, sessionId: string, prompt: BuiltPrompt) {
  return db.insert(contextLogs).values({
    id: newId("ctx"),
    userId,
    sessionId,
    injected: {
      sections: prompt.injected,
      skipped: prompt.skipped,
      system_chars: prompt.system.length,
      system: prompt.system,
      turn_context: prompt.turnContext,
    },
  });
}
