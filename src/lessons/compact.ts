/**
 * Compaction: near-duplicate lessons of one user (same type and project, titles and contents sharing most
 * of their words) merge into the one worth keeping (more confirmations, recalls, higher signal, then oldest).
 * The others are unlearned with `merged_into` set, so a merge can be undone with restore. A dry run only lists.
 */
import { and, desc, eq, sql } from "drizzle-orm";
import { runStatements, type Statement } from "../db/batch";
import type { Db } from "../db/client";
import { lessons } from "../db/schema";
import { stem, words } from "../memory/text";
import type { LessonRow } from "./store";

/** Jaccard similarity of content words at or above which two lessons are the same lesson. */
export const SIMILAR = 0.6;
/** Compaction reads at most this many of the user's newest active lessons per run. */
export const COMPACT_WINDOW = 2000;

export type Merge = { keep: string; drop: string[]; reason: string };

const stems = (text: string) => new Set(words(text).map(stem));

/**
 * No stop list: a word found in more than 5% of the lessons compared (and in more than 20 of them) says nothing
 * about whether two lessons are the same, whatever the language, and is left out of both the comparison and the
 * blocking.
 */
function uncommon(rows: readonly LessonRow[]): (terms: Set<string>) => Set<string> {
  const df = new Map<string, number>();
  for (const l of rows) for (const t of stems(`${l.title} ${l.content}`)) df.set(t, (df.get(t) ?? 0) + 1);
  const cap = Math.max(20, Math.floor(rows.length * 0.05));
  return (terms) => new Set([...terms].filter((t) => (df.get(t) ?? 0) <= cap));
}

function jaccard(a: Set<string>, b: Set<string>): number {
  let inter = 0;
  for (const x of a) if (b.has(x)) inter++;
  return inter / (a.size + b.size - inter || 1);
}

const SIGNAL_RANK = { HIGH: 3, MED: 2, LOW: 1 } as const;
const better = (a: LessonRow, b: LessonRow) =>
  b.confirmations - a.confirmations || b.recalls - a.recalls || SIGNAL_RANK[b.signal] - SIGNAL_RANK[a.signal] || a.createdAt - b.createdAt;

export function findMerges(rows: readonly LessonRow[]): Merge[] {
  const keep = uncommon(rows);
  const sets = rows.map((l) => keep(stems(`${l.title} ${l.content}`)));
  // Candidate pairs share a title word (blocking), so the comparison is not all pairs.
  const byWord = new Map<string, number[]>();
  rows.forEach((l, i) => {
    for (const w of keep(stems(l.title))) byWord.set(w, [...(byWord.get(w) ?? []), i]);
  });
  const parent = rows.map((_, i) => i);
  const find = (i: number): number => {
    while (parent[i] !== i) i = parent[i] = parent[parent[i] ?? i] ?? i;
    return i;
  };
  const pairs: [number, number][] = [];
  for (const members of byWord.values()) {
    if (members.length > 200) continue;
    for (let x = 0; x < members.length; x++)
      for (let y = x + 1; y < members.length; y++) {
        const i = members[x] ?? 0;
        const j = members[y] ?? 0;
        const a = rows[i];
        const b = rows[j];
        if (!a || !b || a.type !== b.type || a.project !== b.project) continue;
        const s = jaccard(sets[i] ?? new Set(), sets[j] ?? new Set());
        if (s >= SIMILAR) {
          parent[find(i)] = find(j);
          pairs.push([i, s]);
        }
      }
  }
  const lowest = new Map<number, number>();
  for (const [i, s] of pairs) lowest.set(find(i), Math.min(lowest.get(find(i)) ?? 1, s));
  const groups = new Map<number, LessonRow[]>();
  rows.forEach((l, i) => groups.set(find(i), [...(groups.get(find(i)) ?? []), l]));
  return [...groups.entries()]
    .filter(([, g]) => g.length > 1)
    .map(([root, g]) => {
      const [keep, ...drop] = [...g].sort(better);
      const shared = Math.round((lowest.get(root) ?? SIMILAR) * 100);
      return { keep: keep?.id ?? "", drop: drop.map((d) => d.id), reason: `same ${keep?.type} and project, at least ${shared}% of words shared` };
    });
}

export async function compactLessons(db: Db, userId: string, dryRun: boolean, now: number): Promise<{ merged: Merge[]; dry_run: boolean }> {
  const rows = await db
    .select()
    .from(lessons)
    .where(and(eq(lessons.userId, userId), eq(lessons.unlearned, false)))
    .orderBy(desc(lessons.createdAt), desc(lessons.id))
    .limit(COMPACT_WINDOW)
    .all();
  const merged = findMerges(rows);
  if (dryRun || !merged.length) return { merged, dry_run: dryRun };
  const statements: Statement[] = [];
  for (const m of merged) {
    const ids = JSON.stringify(m.drop);
    // Confirmations and recalls carry over to the kept lesson; its tags gain the dropped ones'.
    statements.push(sql`UPDATE lessons SET
        confirmations = confirmations + (SELECT coalesce(sum(confirmations), 0) FROM lessons
          WHERE user_id = ${userId} AND id IN (SELECT value FROM json_each(${ids})) AND unlearned = 0),
        recalls = recalls + (SELECT coalesce(sum(recalls), 0) FROM lessons
          WHERE user_id = ${userId} AND id IN (SELECT value FROM json_each(${ids})) AND unlearned = 0),
        tags = (SELECT json_group_array(DISTINCT value) FROM (SELECT value FROM json_each(lessons.tags)
          UNION SELECT j.value FROM lessons d, json_each(d.tags) j WHERE d.user_id = ${userId} AND d.id IN (SELECT value FROM json_each(${ids})))),
        updated_at = ${now}
      WHERE user_id = ${userId} AND id = ${m.keep} AND unlearned = 0`);
    statements.push(sql`UPDATE lessons SET unlearned = 1, merged_into = ${m.keep}, updated_at = ${now}
      WHERE user_id = ${userId} AND id IN (SELECT value FROM json_each(${ids})) AND unlearned = 0`);
  }
  await runStatements(db, statements);
  return { merged, dry_run: false };
}
