/** Engram through its public HTTP API, as a client would use it: verbatim import, then search. */
import { api } from "../../test/helpers";
import type { Turn } from "./dataset";

export type Mode = "hybrid" | "fulltext" | "vector";

/** The route's cap on facts per import request. */
const CHUNK = 1000;

export type Imported = {
  /** Fact id to the turn it stores. */
  turnOf: Map<string, string>;
  /** Turns marked superseded by a later one on import: left out of default searches. */
  superseded: Set<string>;
  ms: number;
};

type ImportBody = { facts: { id: string; superseded_by: string | null }[]; superseded: string[] };

export async function importTurns(apiKey: string, turns: readonly Turn[]): Promise<Imported> {
  const turnOf = new Map<string, string>();
  const supersededIds = new Set<string>();
  const t0 = performance.now();
  for (let i = 0; i < turns.length; i += CHUNK) {
    const chunk = turns.slice(i, i + CHUNK);
    const facts = chunk.map((t) => ({ text: t.text, metadata: { date: t.date, session_id: `session_${t.session}`, dia_id: t.diaId } }));
    const res = await api(apiKey, "POST", "/v1/memory/facts", { facts });
    if (res.status !== 201) throw new Error(`import: ${res.status} ${await res.text()}`);
    const body = (await res.json()) as ImportBody;
    // One fact per distinct text, in input order: the ids line up with the turns only if no two texts are equal.
    if (body.facts.length !== chunk.length) throw new Error(`import: ${body.facts.length} facts for ${chunk.length} turns (equal texts merged)`);
    body.facts.forEach((f, j) => {
      turnOf.set(f.id, chunk[j]?.diaId ?? "");
      if (f.superseded_by) supersededIds.add(f.id);
    });
    for (const id of body.superseded) supersededIds.add(id);
  }
  const superseded = new Set([...supersededIds].map((id) => turnOf.get(id) ?? id));
  return { turnOf, superseded, ms: performance.now() - t0 };
}

type SearchBody = { results: { id: string }[] };

/** The k best turns for the question; `params` (e.g. "history=true") is set on the URL over the defaults. */
export async function search(apiKey: string, imported: Imported, q: string, mode: Mode, k: number, params: string) {
  const query = new URLSearchParams({ q, k: String(k), mode });
  for (const [name, value] of new URLSearchParams(params)) query.set(name, value);
  const t0 = performance.now();
  const res = await api(apiKey, "GET", `/v1/memory/facts/search?${query}`);
  if (res.status !== 200) throw new Error(`search: ${res.status} ${await res.text()}`);
  const body = (await res.json()) as SearchBody;
  const ms = performance.now() - t0;
  return { ranked: body.results.map((r) => imported.turnOf.get(r.id) ?? `?${r.id}`), ms };
}
