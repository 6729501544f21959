import type { Db } from "../db/client";
import { newId } from "../db/client";
import { insertWhere } from "../db/insert-where";
import { contextLogs } from "../db/schema";
import { sessionLive } from "../db/session-live";
import type { BuiltPrompt } from "./prompt";

/**
 * The audit row of one chat turn: exactly what it injected (section names, item ids, the system text itself and
 * the turn's context and evidence, so a user can read what the model was shown) and what it left out, and why.
 * Written only while the session's row exists: a turn still running when its user's memory is erased (a session
 * started during the erase, or one left to the erase's sweep) must not write the memory it was shown back after
 * the erase.
 */
export function contextLogInsert(db: Db, userId: string, sessionId: string, prompt: BuiltPrompt) {
  const row = {
    id: newId("ctx"),
    userId,
    sessionId,
    injected: {
      sections: prompt.injected,
      skipped: prompt.skipped,
      system_chars: prompt.system.length,
      system: prompt.system,
      turn_context: prompt.turnContext,
      // Named by `sections[].ids` as well, so forgetting a fact still finds (and deletes) the rows that showed it.
      evidence: prompt.evidence.map((b) => ({ source: b.source, title: b.title, text: b.content.map((c) => c.text).join("\n") })),
    },
    createdAt: Date.now(),
  };
  return insertWhere(db, contextLogs, row, sessionLive(userId, sessionId));
}
