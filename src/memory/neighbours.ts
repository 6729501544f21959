/**
 * A conversational turn often makes sense only with the turns around it. Facts imported from one session
 * (same `metadata.session_id`, written in order) sit in consecutive rows; the turn just before and just after
 * a hit are its neighbours. They are attached to the hit, never counted as results of their own.
 */
import { sql } from "drizzle-orm";
import type { Db } from "../db/client";

export type Neighbour = { id: string; text: string; position: "before" | "after" };

/** Rows further apart than this are not neighbours, whatever their session says (and the lookup stays a short range scan). */
const REACH = 50;

export async function neighboursOf(
  db: Db,
  userId: string,
  hits: readonly { id: string; rowid: number; metadata: string }[],
): Promise<Map<string, Neighbour[]>> {
  const keyed = hits.flatMap((h) => {
    const session = (JSON.parse(h.metadata) as { session_id?: unknown }).session_id;
    return typeof session === "string" ? [[h.id, h.rowid, session]] : [];
  });
  const out = new Map<string, Neighbour[]>();
  if (!keyed.length) return out;
  const near = (op: "max" | "min") => {
    const cmp = op === "max" ? sql`g.rowid < h.rid AND g.rowid >= h.rid - ${REACH}` : sql`g.rowid > h.rid AND g.rowid <= h.rid + ${REACH}`;
    return sql`(SELECT ${sql.raw(op)}(g.rowid) FROM facts g WHERE g.user_id = ${userId} AND ${cmp} AND g.metadata->>'session_id' = h.sess)`;
  };
  const rows = await db.all<{ hit: string; id: string; text: string; position: Neighbour["position"] }>(sql`
    WITH h(hit, rid, sess) AS (SELECT value->>0, value->>1, value->>2 FROM json_each(${JSON.stringify(keyed)}))
    SELECT h.hit AS hit, f.id AS id, f.text AS text, CASE WHEN f.rowid < h.rid THEN 'before' ELSE 'after' END AS position
    FROM h JOIN facts f ON f.user_id = ${userId} AND (f.rowid = ${near("max")} OR f.rowid = ${near("min")})
    ORDER BY f.rowid`);
  for (const r of rows) out.set(r.hit, [...(out.get(r.hit) ?? []), { id: r.id, text: r.text, position: r.position }]);
  return out;
}
