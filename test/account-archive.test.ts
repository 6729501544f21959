/**
 * The account archive: export, erase, import, export again gives the same content; a second import adds nothing;
 * another user's data is never in an export; an invalid archive is refused whole; a failed commit leaves nothing.
 */
import { env, SELF } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { IMPORT_MAX_BYTES, importArchive } from "../src/account/import";
import type { SessionObject } from "../src/sessions/session-do";
import { sessionStub } from "../src/sessions/store";
import { remember } from "./archive-helpers";
import { failWrites, repairAll } from "./fault-helpers";
import { api, BASE, createUser } from "./helpers";
import { importFacts, search } from "./memory-helpers";
import { lastShard, userD1, userDb } from "./shard-helpers";
import { registry } from "./worker";

type Line = { kind?: string; data: Record<string, unknown> } & Record<string, unknown>;

afterEach(repairAll);

async function exportText(key: string): Promise<string> {
  const res = await api(key, "GET", "/v1/export");
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("application/x-ndjson; charset=utf-8");
  return new TextDecoder().decode(await res.arrayBuffer());
}

const linesOf = (text: string): Line[] =>
  text
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Line);

const importText = (key: string, text: string, type = "application/x-ndjson") =>
  SELF.fetch(`${BASE}/v1/import`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": type }, body: text });

const count = async (table: string, userId: string) =>
  (await (await userD1(userId)).prepare(`SELECT count(*) AS n FROM ${table} WHERE user_id = ?`).bind(userId).first<{ n: number }>())?.n ?? 0;

/** Fields that name rows (ids and references) or are redone by an import: the content is the rest. */
const ID_FIELDS = new Set([
  "id",
  "session_id",
  "project_id",
  "document_id",
  "connection_id",
  "transcript_id",
  "superseded_by",
  "merged_into",
  "event_ids",
  "result_ids",
]);
const REDONE = new Set(["embedded_at", "rev", "exported_at", "seq", "undo"]);

/**
 * An archive's content: every record without its ids, in a stable order. Left out: the header and trailer, and
 * what happened after `since` (the erase's own revision, the usage of indexing the imported facts).
 */
function content(lines: readonly Line[], since = Number.POSITIVE_INFINITY): string[] {
  return lines
    .filter((l) => l.kind !== undefined && l.kind !== "end" && !(Number(l.data.created_at) >= since && (l.kind === "revision" || l.kind === "usage")))
    .map((l) => JSON.stringify([l.kind, Object.fromEntries(Object.entries(l.data).filter(([k]) => !ID_FIELDS.has(k) && !REDONE.has(k)))]))
    .sort();
}

const data = (lines: readonly Line[], kind: string) => lines.filter((l) => l.kind === kind).map((l) => l.data);

describe("GET /v1/export", () => {
  it("holds every kind of the user's memory, and nothing of another user's or any secret", async () => {
    const a = await createUser();
    const b = await createUser();
    await remember(a, "Ana");
    await remember(b, "Bruno");
    const text = await exportText(a.key);
    const lines = linesOf(text);
    expect(lines[0]).toMatchObject({ format: "engram.archive", version: 1 });
    expect(lines.at(-1)).toEqual({ kind: "end", data: { records: lines.length - 2 } });
    const kinds = new Set(lines.map((l) => l.kind));
    for (const k of [
      "account",
      "settings",
      "tiers",
      "fact",
      "observation",
      "revision",
      "session",
      "message",
      "context_log",
      "connection",
      "brain_document",
      "brain_version",
      "memory_entry",
      "site",
      "project",
      "project_activity",
      "lesson",
      "usage",
    ])
      expect(kinds, k).toContain(k);
    expect(data(lines, "settings")).toEqual([
      { version: 2, review_mode: true, memory: { consent: { brain: "auto", memory: "auto", facts: "auto", lessons: "auto" }, sensitive: [] } },
    ]);
    expect(data(lines, "tiers")[0]).toMatchObject({ working_memory: "Ana likes tea.", scaffold: { Drinks: "tea" } });
    const porto = data(lines, "fact").find((f) => f.text === "Ana lives in Porto");
    const lisbon = data(lines, "fact").find((f) => f.text === "Ana lives in Lisbon");
    expect(porto?.superseded_by).toBe(lisbon?.id);
    expect(lisbon).toMatchObject({ key: "user.home_city", superseded_by: null });
    expect(data(lines, "message").map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    // Tenancy and secrets: nothing of Bruno's, no key or key hash.
    expect(text).not.toContain("Bruno");
    expect(text).not.toContain(b.id);
    expect(text).not.toContain(a.key);
    // Keys live in the directory (env.DB), not on the user's shard.
    const hash = await env.DB.prepare("SELECT hash FROM api_keys WHERE user_id = ?").bind(a.id).first<{ hash: string }>();
    expect(text).not.toContain(hash?.hash);
    expect(await exportText(b.key)).not.toContain("Ana");
  });

  it("names the account as the directory holds it, wherever the user's rows live", async () => {
    // A shard other than the directory (when bound): its users row holds memory tiers, never the name, email or plan.
    const a = await createUser("pro", lastShard());
    const [account] = data(linesOf(await exportText(a.key)), "account");
    expect(account).toMatchObject({ name: "Test User", email: null, plan: "pro" });
  });

  it("streams a large account page by page, every row once", async () => {
    const a = await createUser();
    const facts = Array.from({ length: 1_200 }, (_, i) => ({
      kind: "fact",
      data: { id: `fct_page${String(i).padStart(5, "0")}`, text: `Paged fact number ${i}` },
    }));
    const archive = [{ format: "engram.archive", version: 1, exported_at: 1 }, ...facts, { kind: "end", data: { records: facts.length } }];
    expect((await importText(a.key, archive.map((l) => JSON.stringify(l)).join("\n"))).status).toBe(200);
    const res = await api(a.key, "GET", "/v1/export");
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const chunks: Uint8Array[] = [];
    for (let r = await reader.read(); !r.done; r = await reader.read()) chunks.push(r.value);
    // 1,200 facts are three pages of 500: each page its own chunk, as the client pulls.
    expect(chunks.length).toBeGreaterThanOrEqual(3 + 4);
    const lines = linesOf(new TextDecoder().decode(Buffer.concat(chunks)));
    const texts = data(lines, "fact").map((f) => f.text);
    expect(new Set(texts).size).toBe(1_200);
    expect(texts).toHaveLength(1_200);
  });

  it("answers 401 without a key", async () => {
    expect((await api(null, "GET", "/v1/export")).status).toBe(401);
  });
});

describe("POST /v1/import", () => {
  it("round trip: export, erase, import, export again gives the same content; a second import adds nothing", async () => {
    const a = await createUser();
    await remember(a, "Ana");
    const first = await exportText(a.key);
    const erasedAt = Date.now();
    expect((await api(a.key, "DELETE", "/v1/memory")).status).toBe(200);

    const res = await importText(a.key, first);
    expect(res.status).toBe(200);
    const receipt = (await res.json()) as { imported: Record<string, number>; skipped: Record<string, number>; indexing: number; format_version: number };
    expect(receipt.format_version).toBe(1);
    expect(receipt.imported).toMatchObject({
      fact: 4,
      session: 1,
      message: 4,
      brain_document: 2,
      brain_version: 2,
      project: 1,
      lesson: 1,
      revision: 1,
      usage: 0,
    });
    expect(receipt.indexing).toBe(3);
    // Indexing runs after the answer (waitUntil): the live facts reach the vector index.
    await vi.waitFor(async () => expect(await count("local_vectors", a.id)).toBe(3), { timeout: 20_000 });

    const second = await exportText(a.key);
    expect(content(linesOf(second), erasedAt)).toEqual(content(linesOf(first)));
    // Supersession survives the new ids; search finds the live fact, not the superseded one.
    const facts = data(linesOf(second), "fact");
    const porto = facts.find((f) => f.text === "Ana lives in Porto");
    expect(porto?.superseded_by).toBe(facts.find((f) => f.text === "Ana lives in Lisbon")?.id);
    expect((await search(a.key, "lives", "&mode=fulltext")).results.map((r) => r.text)).toEqual(["Ana lives in Lisbon"]);
    // The conversation is readable through the session API under its new id.
    const [session] = data(linesOf(second), "session");
    const read = (await (await api(a.key, "GET", `/v1/sessions/${session?.id}`)).json()) as { messages: { role: string }[] };
    expect(read.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(((await (await api(a.key, "GET", "/v1/brain/settings")).json()) as { review_mode: boolean }).review_mode).toBe(true);

    // Idempotent: the same archive again, and the export it made, add nothing.
    for (const archive of [first, second]) {
      const again = (await (await importText(a.key, archive)).json()) as { imported: Record<string, number> };
      expect(Object.values(again.imported).every((n) => n === 0)).toBe(true);
    }
    const third = await exportText(a.key);
    expect(linesOf(third).slice(1)).toEqual(linesOf(second).slice(1));
  });

  it("into the account it came from adds nothing; into another account copies it under new ids, the source untouched", async () => {
    const a = await createUser();
    const b = await createUser();
    await remember(a, "Ana");
    const archive = await exportText(a.key);
    const before = await count("facts", a.id);
    const same = (await (await importText(a.key, archive)).json()) as { imported: Record<string, number> };
    expect(Object.values(same.imported).every((n) => n === 0)).toBe(true);
    expect(await count("facts", a.id)).toBe(before);

    expect((await importText(b.key, archive)).status).toBe(200);
    const copied = linesOf(await exportText(b.key));
    // New ids everywhere (a site is named by its slug; a lesson's id hashes its owner, so it is new too).
    const ids = new Set(linesOf(archive).flatMap((l) => (l.kind !== "site" && typeof l.data?.id === "string" ? [l.data.id] : [])));
    expect(copied.filter((l) => l.kind !== "site" && ids.has(String(l.data?.id)))).toEqual([]);
    expect(data(copied, "fact")).toHaveLength(4);
    expect(await count("facts", a.id)).toBe(before);
    expect(await exportText(a.key)).not.toContain(b.id);
  });

  it("carries what the assistant may remember: modes and never-remember rules arrive in the other account", async () => {
    const a = await createUser();
    const b = await createUser();
    const settings = { consent: { brain: "ask", memory: "auto", facts: "off", lessons: "auto" }, sensitive: [{ kind: "pattern", text: "Acme Corp" }] };
    expect((await api(a.key, "PATCH", "/v1/settings", settings)).status).toBe(200);
    const archive = await exportText(a.key);
    expect(data(linesOf(archive), "settings")[0]).toMatchObject({ version: 2, memory: settings });
    expect((await importText(b.key, archive)).status).toBe(200);
    expect(await (await api(b.key, "GET", "/v1/settings")).json()).toMatchObject(settings);
  });

  it("refuses an invalid archive whole, naming the line, and writes nothing", async () => {
    const a = await createUser();
    const source = await createUser();
    await importFacts(source.key, [{ text: "Tea is good" }, { text: "Coffee is better" }]);
    const good = linesOf(await exportText(source.key));
    const raw = (ls: unknown[]) => ls.map((l) => (typeof l === "string" ? l : JSON.stringify(l))).join("\n");
    const factAt = good.findIndex((l) => l.kind === "fact");
    const cases: [string, RegExp][] = [
      [raw([...good.slice(0, factAt), "{not json", ...good.slice(factAt)]), new RegExp(`archive line ${factAt + 1}: not a JSON value`)],
      [raw(good.map((l, i) => (i === factAt ? { ...l, kind: "spaceship" } : l))), new RegExp(`archive line ${factAt + 1}: unknown record kind`)],
      [raw(good.map((l, i) => (i === factAt ? { ...l, data: { ...l.data, text: 42 } } : l))), new RegExp(`archive line ${factAt + 1}: fact: text`)],
      [raw(good.map((l, i) => (i === factAt ? { ...l, data: { ...l.data, secret_field: 1 } } : l))), /unknown field/],
      [raw(good.map((l, i) => (i === factAt ? { ...l, data: { ...l.data, metadata: null } } : l))), new RegExp(`archive line ${factAt + 1}: fact: metadata`)],
      [raw(good.map((l) => (l.kind === "tiers" ? { ...l, data: { ...l.data, scaffold: "not an object" } } : l))), /tiers: scaffold/],
      [raw(good.slice(0, -1)), /cut short/],
      [raw(good.map((l) => (l.kind === "end" ? { kind: "end", data: { records: 999 } } : l))), /holds 999 records/],
      [raw(good.map((l, i) => (i === 0 ? { ...l, version: 99 } : l))), /format version 99 is newer/],
      [raw([...good.slice(0, factAt), good[factAt], ...good.slice(factAt)]), /appears twice/],
    ];
    for (const [body, message] of cases) {
      const res = await importText(a.key, body);
      expect(res.status, String(message)).toBe(400);
      const err = (await res.json()) as { error: { code: string; message: string } };
      expect(err.error.code).toBe("invalid_request");
      expect(err.error.message).toMatch(message);
    }
    expect((await importText(a.key, raw(good), "application/json")).status).toBe(415);
    expect(await count("facts", a.id)).toBe(0);
  });

  it("refuses an archive over the size limit with 413, writing nothing", async () => {
    const a = await createUser();
    const line = JSON.stringify({ kind: "fact", data: { id: "fct_big", text: "x".repeat(1000) } });
    const body = `${JSON.stringify({ format: "engram.archive", version: 1, exported_at: 1 })}\n${`${line}\n`.repeat(IMPORT_MAX_BYTES / 1000 + 10)}`;
    const res = await importText(a.key, body);
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("payload_too_large");
    expect(await count("facts", a.id)).toBe(0);
  });

  it("refuses an archive that would pass the plan's quota, writing nothing", async () => {
    const a = await createUser();
    const source = await createUser();
    await importFacts(source.key, [{ text: "Tea is good" }, { text: "Coffee is better" }]);
    await importFacts(a.key, [{ text: "Water is best" }]);
    const deps = { db: await userDb(a.id), userId: a.id, now: Date.now(), writeHistory: async () => true, contentIds: registry.contentIds };
    const archive = await exportText(source.key);
    await expect(importArchive({ ...deps, quotas: { facts: 2 } }, archive)).rejects.toThrow("would bring your facts to 3, over your plan's 2");
    expect(await count("facts", a.id)).toBe(1);
    expect((await importArchive({ ...deps, quotas: { facts: 3 } }, archive)).receipt.imported.fact).toBe(2);
  });

  it("a commit that fails imports nothing, and empties the conversations it wrote", async () => {
    const a = await createUser();
    const source = await createUser();
    await remember(source, "Ana");
    const archive = await exportText(source.key);
    // The batch's last table fails: every earlier statement of it must roll back.
    await failWrites("context_logs", a.id);
    const written: string[] = [];
    const deps = {
      db: await userDb(a.id),
      userId: a.id,
      now: Date.now(),
      writeHistory: async (sessionId: string, messages: Parameters<SessionObject["importHistory"]>[0], reset: boolean) => {
        if (messages.length) written.push(sessionId);
        return (await sessionStub(env, a.id, sessionId).importHistory(messages, reset)) as boolean;
      },
      contentIds: registry.contentIds,
      quotas: {},
    };
    await expect(importArchive(deps, archive)).rejects.toThrow();
    for (const table of ["facts", "sessions", "brain_documents", "projects", "lessons", "memory_runs", "context_events"])
      expect(await count(table, a.id), table).toBe(0);
    expect(written).toHaveLength(1);
    const page = (await sessionStub(env, a.id, written[0] ?? "").historyPage(0, 10)) as unknown[];
    expect(page).toEqual([]);
  });
});
