/**
 * Erased text does not stay readable in the full-text index: FTS5 keeps its inverted index in shadow
 * tables (`<name>_data`, terms stored as bytes), which a plain delete only marks.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, createUser, ftsIndexHolds } from "./helpers";

describe("full-text index after erasure", () => {
  it("the secure-delete option is on for the facts and lessons indexes", async () => {
    for (const table of ["facts_fts", "lessons_fts"]) {
      const row = await env.DB.prepare(`SELECT v FROM ${table}_config WHERE k = 'secure-delete'`).first<{ v: number }>();
      expect(row?.v).toBe(1);
    }
  });

  it("DELETE /v1/memory leaves no trace of a fact's words in the facts index's shadow tables", async () => {
    const u = await createUser();
    const keep = await createUser();
    // Unusual words (not stemmed away), so a hit can only come from these facts.
    expect(
      (await api(u.key, "POST", "/v1/memory/facts", { facts: [{ text: "Ana's secret codeword is zqxwvplumb" }, { text: "Ana visits qzyxmarrow" }] })).status,
    ).toBe(201);
    expect((await api(keep.key, "POST", "/v1/memory/facts", { facts: [{ text: "Bob keeps kvothefrond" }] })).status).toBe(201);
    expect(await ftsIndexHolds("facts_fts", "zqxwvplumb")).toBe(true);
    expect((await api(u.key, "DELETE", "/v1/memory")).status).toBe(200);
    expect(await ftsIndexHolds("facts_fts", "zqxwvplumb")).toBe(false);
    expect(await ftsIndexHolds("facts_fts", "qzyxmarrow")).toBe(false);
    // The other user's words are still indexed and searchable.
    expect(await ftsIndexHolds("facts_fts", "kvothefrond")).toBe(true);
    const found = (await (await api(keep.key, "GET", "/v1/memory/facts/search?q=kvothefrond&mode=fulltext")).json()) as { results: unknown[] };
    expect(found.results).toHaveLength(1);
  });
});
