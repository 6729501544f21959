/**
 * What a forget took out of the two injected tiers, as its revision's summary remembers it, and what restoring an
 * earlier copy would bring back of it. One rule for the server (which refuses such a restore unless confirmed)
 * and the web app (which says so before asking).
 */
import { sentences } from "./sentences";

export type Forgotten = { keys: string[]; text: string[] };

const list = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []);

/** The keys and sentences a revision's summary says were forgotten; none for any other revision. */
export const forgottenIn = (summary: unknown): Forgotten => {
  const s = (summary ?? {}) as { forgotten_keys?: unknown; forgotten_text?: unknown };
  return { keys: list(s.forgotten_keys), text: list(s.forgotten_text) };
};

/** What a copy of the tiers (its profile keys and narrative) would bring back of `forgotten`, in words. */
export function broughtBack(copy: { scaffold: Record<string, unknown> | null; workingMemory: string | null }, forgotten: readonly Forgotten[]): string[] {
  const keys = new Set(Object.keys(copy.scaffold ?? {}));
  const said = new Set(sentences(copy.workingMemory ?? ""));
  const back = new Set<string>();
  for (const f of forgotten) {
    for (const k of f.keys) if (keys.has(k)) back.add(`the profile key ${k}`);
    for (const t of f.text) if (said.has(t)) back.add(`“${t}” in working memory`);
  }
  return [...back];
}
