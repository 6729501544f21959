import type { Db } from "../db/client";
import { newId } from "../db/client";
import { usage } from "../db/schema";

export type UsageKind = (typeof usage.$inferInsert)["kind"];

export async function recordUsage(
  db: Db,
  row: { userId: string; kind: UsageKind; model: string | null; inputTokens: number; outputTokens: number; sessionId?: string | null },
) {
  await db.insert(usage).values({ id: newId("use"), ...row, sessionId: row.sessionId ?? null });
}
