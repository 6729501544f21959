import type { Db } from "../db/client";
import { newId } from "../db/client";
import { contextLogs } from "../db/schema";
import type { BuiltPrompt } from "./prompt";

/**
 * Records exactly what one chat turn injected (section names, item ids and the system text itself, so a
 * user can read what the model was shown) and what it left out, and why.
 */
export async function recordContextLog(db: Db, userId: string, sessionId: string, prompt: BuiltPrompt): Promise<string> {
  const id = newId("ctx");
  await db.insert(contextLogs).values({
    id,
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
  return id;
}
