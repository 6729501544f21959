import { describe, expect, it, vi } from "vitest";
import { COMPACT_WINDOW } from "../src/lessons/compact";
import { MAX_CONTENT_BYTES } from "../src/lessons/transcripts";
import { fixture } from "./fixtures/transcripts";
import { api, createUser } from "./helpers";
import { bytes, count, upload } from "./lessons-helpers";
import { withEnv } from "./limits-helpers";
import { userD1 } from "./shard-helpers";

type TranscriptBody = {
  transcript: { session_id: string; bytes_received: number; last_synced_bytes: number; status: string; project: string | null };
  queued: boolean;
};
type LessonBody = { id: string; title: string; content: string; tags: string[]; project: string | null; unlearned: boolean; recalls: number; score?: number };

const remember = async (key: string, body: Record<string, unknown>) => {
  const res = await api(key, "POST", "/v1/lessons", body);
  expect(res.status).toBe(201);
  return ((await res.json()) as { lesson: LessonBody; created: boolean }).lesson;
};

const searchLessons = async (key: string, q: string, extra = "") => {
  const res = await api(key, "GET", `/v1/lessons?q=${encodeURIComponent(q)}${extra}`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { lessons: LessonBody[] }).lessons;
};

describe("POST /v1/transcripts", () => {
  it("accepts a transcript whole, then its growth from the byte offset the server holds", async () => {
    const u = await createUser();
    const f = fixture("retry-backoff");
    const lines = f.text.split("\n").filter(Boolean);
    const first = `${lines.slice(0, 6).join("\n")}\n`;
    const rest = `${lines.slice(6).join("\n")}\n`;
    const res = await upload(u.key, { session_id: f.session_id, project: "billing-api", offset: 0, content: first, total_bytes: bytes(first) });
    expect(res.status).toBe(202);
    const body = (await res.json()) as TranscriptBody;
    expect(body.transcript).toMatchObject({ session_id: f.session_id, project: "billing-api", bytes_received: bytes(first), status: "pending" });
    expect(body.queued).toBe(true);

    const second = await upload(u.key, { session_id: f.session_id, offset: bytes(first), content: rest, total_bytes: bytes(f.text) });
    expect(second.status).toBe(202);
    const state = ((await second.json()) as TranscriptBody).transcript;
    expect(state.bytes_received).toBe(bytes(f.text));
    expect(state.project).toBe("billing-api");

    const got = await api(u.key, "GET", `/v1/transcripts/${f.session_id}`);
    expect(((await got.json()) as TranscriptBody).transcript.bytes_received).toBe(bytes(f.text));
    const list = (await (await api(u.key, "GET", "/v1/transcripts")).json()) as { transcripts: { session_id: string }[] };
    expect(list.transcripts.map((t) => t.session_id)).toEqual([f.session_id]);
  });

  it("answers 409 offset_mismatch with the server's byte count, and a replayed upload changes nothing", async () => {
    const u = await createUser();
    const content = `${fixture("zod-version").text.split("\n")[0]}\n`;
    const body = { session_id: "sess-offset", project: null, offset: 0, content, total_bytes: bytes(content) };
    expect((await upload(u.key, body)).status).toBe(202);
    // The same upload again (its response was lost): accepted, nothing added.
    const replay = await upload(u.key, body);
    expect(replay.status).toBe(202);
    expect(((await replay.json()) as TranscriptBody).transcript.bytes_received).toBe(bytes(content));
    // A different upload at a stale offset: told where to resume.
    const stale = await upload(u.key, { ...body, content: "{}\n" });
    expect(stale.status).toBe(409);
    expect(await stale.json()).toMatchObject({ error: { code: "offset_mismatch" }, bytes_received: bytes(content) });
    const ahead = await upload(u.key, { ...body, offset: bytes(content) + 10 });
    expect(ahead.status).toBe(409);
    expect(await count("SELECT bytes_received n FROM transcripts WHERE user_id = ?", u.id)).toBe(bytes(content));
  });

  it("rejects partial lines, bad bodies and oversize content with nothing written", async () => {
    const u = await createUser();
    const partial = await upload(u.key, { session_id: "s1", offset: 0, content: '{"type":"user"', total_bytes: 14 });
    expect(partial.status).toBe(400);
    expect(await partial.json()).toMatchObject({ error: { code: "invalid_request" } });
    for (const bad of [
      { session_id: "s1", offset: -1, content: "", total_bytes: 0 },
      { session_id: "../x", offset: 0, content: "", total_bytes: 0 },
      { session_id: "s1", offset: 0, content: "", total_bytes: 0, extra: true },
      { session_id: "s1", content: "", total_bytes: 0 },
    ]) {
      expect((await upload(u.key, bad)).status).toBe(400);
    }
    const big = `${"x".repeat(MAX_CONTENT_BYTES)}\n`;
    const tooBig = await upload(u.key, { session_id: "s1", offset: 0, content: big, total_bytes: big.length });
    expect(tooBig.status).toBe(413);
    expect(await tooBig.json()).toMatchObject({ error: { code: "payload_too_large" } });
    expect(await count("SELECT count(*) n FROM transcripts WHERE user_id = ?", u.id)).toBe(0);
    expect((await api(null, "POST", "/v1/transcripts", { session_id: "s1", offset: 0, content: "", total_bytes: 0 })).status).toBe(401);
  });

  it("refuses an empty upload with 400 and writes nothing, for a new session and for a stored one", async () => {
    const u = await createUser();
    const empty = await upload(u.key, { session_id: "sess-empty", offset: 0, content: "", total_bytes: 0 });
    expect(empty.status).toBe(400);
    expect(await empty.json()).toMatchObject({ error: { code: "invalid_request", message: expect.stringContaining("empty") } });
    expect((await api(u.key, "GET", "/v1/transcripts/sess-empty")).status).toBe(404);
    expect(await count("SELECT count(*) n FROM transcripts WHERE user_id = ?", u.id)).toBe(0);

    const line = `${fixture("zod-version").text.split("\n")[0]}\n`;
    expect((await upload(u.key, { session_id: "sess-empty", project: "a", offset: 0, content: line, total_bytes: bytes(line) })).status).toBe(202);
    const again = await upload(u.key, { session_id: "sess-empty", project: "b", offset: bytes(line), content: "", total_bytes: bytes(line) });
    expect(again.status).toBe(400);
    const state = ((await (await api(u.key, "GET", "/v1/transcripts/sess-empty")).json()) as TranscriptBody).transcript;
    expect(state).toMatchObject({ bytes_received: bytes(line), project: "a" });
  });

  it("stores the transcript with secrets redacted", async () => {
    const u = await createUser();
    const f = fixture("fts5-quoting");
    expect((await upload(u.key, { session_id: f.session_id, project: f.project, offset: 0, content: f.text, total_bytes: bytes(f.text) })).status).toBe(202);
    const stored = await (await userD1(u.id)).prepare("SELECT events FROM transcript_segments WHERE user_id = ?").bind(u.id).all<{ events: string }>();
    const text = stored.results.map((r) => r.events).join("\n");
    expect(text).toContain("fts5: syntax error");
    for (const secret of f.secrets ?? []) expect(text).not.toContain(secret);
    expect(text).toContain("[REDACTED]");
  });

  it("never shows one user's transcripts to another", async () => {
    const a = await createUser();
    const b = await createUser();
    const content = `${fixture("zod-version").text.split("\n")[0]}\n`;
    await upload(a.key, { session_id: "shared-id", offset: 0, content, total_bytes: bytes(content) });
    expect((await api(b.key, "GET", "/v1/transcripts/shared-id")).status).toBe(404);
    const list = (await (await api(b.key, "GET", "/v1/transcripts")).json()) as { transcripts: unknown[] };
    expect(list.transcripts).toEqual([]);
    // The same session id is B's own, independent transcript.
    const own = await upload(b.key, { session_id: "shared-id", offset: 0, content, total_bytes: bytes(content) });
    expect(own.status).toBe(202);
  });
});

describe("/v1/lessons", () => {
  it("remembers, searches (project first), unlearns, restores, and logs every recall", async () => {
    const u = await createUser();
    const global = await remember(u.key, {
      title: "Quote every token in FTS5 MATCH queries",
      content: "User input with hyphens or quotes breaks FTS5 syntax; quote each token.",
    });
    const local = await remember(u.key, {
      title: "notes-app searchNotes quotes FTS5 tokens",
      content: "In notes-app, searchNotes double-quotes tokens before MATCH.",
      project: "notes-app",
      type: "pattern",
    });
    await remember(u.key, { title: "Use exponential backoff for retries", content: "Back off exponentially with jitter instead of a uniform sleep." });

    const again = await api(u.key, "POST", "/v1/lessons", {
      title: "Quote every token in FTS5 MATCH queries",
      content: "User input with hyphens or quotes breaks FTS5 syntax; quote each token.",
    });
    expect(await again.json()).toMatchObject({ lesson: { id: global.id }, created: false });

    const hits = await searchLessons(u.key, "fts5 query quoting", "&project=notes-app");
    expect(hits.map((h) => h.id)).toEqual([local.id, global.id]);
    // The project's lesson comes first even though the global one matches more of the query.
    expect(hits[1]?.score).toBeGreaterThan(hits[0]?.score ?? 1);

    const unlearned = await api(u.key, "DELETE", `/v1/lessons/${global.id}`);
    expect(((await unlearned.json()) as { lesson: LessonBody }).lesson.unlearned).toBe(true);
    expect((await searchLessons(u.key, "fts5 tokens")).map((h) => h.id)).toEqual([local.id]);
    expect((await api(u.key, "GET", `/v1/lessons/${global.id}`)).status).toBe(200);
    const restored = await api(u.key, "POST", `/v1/lessons/${global.id}/restore`);
    expect(((await restored.json()) as { lesson: LessonBody }).lesson.unlearned).toBe(false);
    expect((await searchLessons(u.key, "fts5 tokens")).map((h) => h.id)).toContain(global.id);

    // Recalls are logged after the answer is sent: all three show up within moments.
    await vi.waitFor(async () => {
      const recalls = (await (await api(u.key, "GET", "/v1/lessons/recalls?limit=5", undefined, {})).json()) as {
        recalls: { query: string; client: string; result_ids: string[] }[];
      };
      expect(recalls.recalls[0]).toMatchObject({ query: "fts5 tokens", client: "api" });
      expect(recalls.recalls).toHaveLength(3);
    });

    const stats = (await (await api(u.key, "GET", "/v1/lessons/stats")).json()) as Record<string, unknown>;
    expect(stats).toMatchObject({ by_type: { lesson: 2, pattern: 1 }, sync: { transcripts: 0, pending: 0, failed: 0 } });
    expect((stats.top_recalled as { id: string; recalls: number }[])[0]).toMatchObject({ recalls: 3 });
    expect((stats.recalls_per_day as { count: number }[])[0]?.count).toBe(3);
  });

  it("stores a saved lesson with its secrets redacted, and never logs a secret typed into a search", async () => {
    const u = await createUser();
    const key = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789";
    const saved = await remember(u.key, {
      title: "Call the eval API with ANTHROPIC_API_KEY=sk-ant-api03-zyxwvutsrqponmlkjihg",
      content: `Use the team key ${key} for the eval runs, not the personal one.`,
      tags: ["eval", "ghp_abcdefghijklmnopqrstuvwxyz0123"],
    });
    expect(JSON.stringify(saved)).not.toMatch(/sk-ant-api03|ghp_/);
    expect(saved.content).toBe("Use the team key [REDACTED] for the eval runs, not the personal one.");
    expect(saved.tags).toEqual(["eval"]);
    const hits = await searchLessons(u.key, `eval runs ${key}`);
    expect(hits.map((h) => h.id)).toEqual([saved.id]);
    expect(JSON.stringify(hits)).not.toContain("sk-ant-api03");
    await vi.waitFor(async () => {
      const recalls = (await (await api(u.key, "GET", "/v1/lessons/recalls?limit=5")).json()) as { recalls: { query: string }[] };
      expect(recalls.recalls.map((r) => r.query)).toEqual(["eval runs [REDACTED]"]);
    });
  });

  it("restoring a lesson past the lesson quota is 403 and it stays unlearned; with room again it restores", async () => {
    const call = withEnv({ PLAN_QUOTAS: JSON.stringify({ free: { lessons: 2 } }) });
    const u = await createUser();
    const save = async (title: string) => {
      const res = await call(u.key, "POST", "/v1/lessons", { title, content: `${title}: a rule long enough to be a lesson.` });
      expect(res.status).toBe(201);
      return ((await res.json()) as { lesson: LessonBody }).lesson;
    };
    const first = await save("Rule one about D1");
    const second = await save("Rule two about wrangler");
    for (const l of [first, second]) expect((await call(u.key, "DELETE", `/v1/lessons/${l.id}`)).status).toBe(200);
    const third = await save("Rule three about vitest");
    await save("Rule four about FTS5");
    const refused = await call(u.key, "POST", `/v1/lessons/${first.id}/restore`);
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("quota_exceeded");
    expect(((await (await call(u.key, "GET", `/v1/lessons/${first.id}`)).json()) as { lesson: LessonBody }).lesson.unlearned).toBe(true);
    expect(await count("SELECT count(*) AS n FROM lessons WHERE user_id = ? AND unlearned = 0", u.id)).toBe(2);
    // Restoring a live lesson changes nothing, so it is never refused; unlearning one makes room.
    expect((await call(u.key, "POST", `/v1/lessons/${third.id}/restore`)).status).toBe(200);
    expect((await call(u.key, "DELETE", `/v1/lessons/${third.id}`)).status).toBe(200);
    expect((await call(u.key, "POST", `/v1/lessons/${first.id}/restore`)).status).toBe(200);
    expect((await call(u.key, "POST", `/v1/lessons/${second.id}/restore`)).status).toBe(403);
    expect((await call(u.key, "POST", "/v1/lessons/les_00000000000000000000000000000000/restore")).status).toBe(404);
  });

  it("searches safely with any string: FTS5 operators, quotes and SQL are plain text", async () => {
    const u = await createUser();
    const l = await remember(u.key, {
      title: "Never mock the database in integration tests",
      content: 'A "mocked" DB hid a broken migration; use the real Postgres.',
    });
    for (const q of [
      '"',
      '"mock',
      "mock*",
      "NEAR(mock database)",
      "mock OR",
      "-mock",
      "'); DROP TABLE lessons; --",
      "title:mock",
      "^mock",
      "{title}: x",
      "%",
      "_",
      "\\",
      "🙂",
      "AND",
      "() OR ()",
    ]) {
      const res = await api(u.key, "GET", `/v1/lessons?q=${encodeURIComponent(q)}`);
      expect(res.status, q).toBe(200);
    }
    expect((await searchLessons(u.key, "NEAR(mock database)")).map((h) => h.id)).toEqual([l.id]);
    expect((await searchLessons(u.key, '"mocked"')).map((h) => h.id)).toEqual([l.id]);
    expect(await count("SELECT count(*) n FROM lessons WHERE user_id = ?", u.id)).toBe(1);
  });

  it("lists newest first with a cursor, filtered by type and project", async () => {
    const u = await createUser();
    for (let i = 0; i < 5; i++) await remember(u.key, { title: `Lesson number ${i}`, content: `Content of lesson ${i} here.`, project: i % 2 ? "p1" : null });
    const page1 = (await (await api(u.key, "GET", "/v1/lessons?limit=3")).json()) as { lessons: LessonBody[]; next_cursor: string };
    expect(page1.lessons.map((l) => l.title)).toEqual(["Lesson number 4", "Lesson number 3", "Lesson number 2"]);
    const page2 = (await (await api(u.key, "GET", `/v1/lessons?limit=3&cursor=${page1.next_cursor}`)).json()) as { lessons: LessonBody[] };
    expect(page2.lessons.map((l) => l.title)).toEqual(["Lesson number 1", "Lesson number 0"]);
    const other = await createUser();
    await remember(other.key, { title: "Lesson of p2", content: "Only in project p2 here.", project: "p2" });
    const p2 = (await (await api(other.key, "GET", "/v1/lessons?project=p1")).json()) as { lessons: LessonBody[] };
    expect(p2.lessons).toEqual([]);
    expect((await (await api(u.key, "GET", "/v1/lessons?type=decision")).json()) as { lessons: unknown[] }).toEqual({ lessons: [], next_cursor: null });
  });

  it("keeps lessons private: another user's id is not found, unlearn or restore", async () => {
    const a = await createUser();
    const b = await createUser();
    const l = await remember(a.key, { title: "Private lesson of A", content: "Only A may read this lesson." });
    for (const [method, path] of [
      ["GET", `/v1/lessons/${l.id}`],
      ["DELETE", `/v1/lessons/${l.id}`],
      ["POST", `/v1/lessons/${l.id}/restore`],
    ] as const) {
      expect((await api(b.key, method, path)).status).toBe(404);
    }
    expect(await searchLessons(b.key, "private lesson")).toEqual([]);
    expect((await api(a.key, "GET", "/v1/lessons/not-an-id")).status).toBe(400);
    expect((await api(a.key, "POST", "/v1/lessons", { title: "x", content: "short" })).status).toBe(400);
    expect((await api(a.key, "POST", "/v1/lessons", { title: "Bad tags here", content: "A valid content string.", tags: ["<script>"] })).status).toBe(400);
  });

  it("compaction finds near-duplicates among the newest lessons of a user who holds more than it reads", async () => {
    const u = await createUser();
    const old = JSON.stringify(Array.from({ length: COMPACT_WINDOW }, (_, i) => i));
    await (await userD1(u.id))
      .prepare(
        `INSERT INTO lessons (id, user_id, type, title, content, created_at, updated_at)
       SELECT 'les_old' || value, ?1, 'lesson', 'Unique rule ' || value || ' word' || value, 'Content for unique rule ' || value || ' token' || value, 1000 + value, 1000 + value
       FROM json_each(?2)`,
      )
      .bind(u.id, old)
      .run();
    const a = await remember(u.key, { title: "Quote FTS5 tokens", content: "Quote every FTS5 token in user search queries." });
    const b = await remember(u.key, { title: "Quote the FTS5 tokens", content: "Quote every FTS5 token in the user search queries." });
    const res = await api(u.key, "POST", "/v1/lessons/compact", { dry_run: true });
    const body = (await res.json()) as { merged: { keep: string; drop: string[] }[] };
    expect(body.merged.flatMap((m) => [m.keep, ...m.drop]).sort()).toEqual([a.id, b.id].sort());
  });

  it("compacts near-duplicates: a dry run lists, the real run merges and restore undoes", async () => {
    const u = await createUser();
    const a = await remember(u.key, {
      title: "Use exponential backoff with jitter for retries",
      content: "Retry rate-limited calls with exponential backoff and jitter, not a uniform sleep.",
    });
    const b = await remember(u.key, {
      title: "Retries: exponential backoff with jitter",
      content: "Retry rate limited calls using exponential backoff plus jitter, never a uniform sleep.",
    });
    const other = await remember(u.key, { title: "Never mock the database in integration tests", content: "Use the real Postgres in integration tests." });
    // Each lesson's own standing before the merge: the merge adds the dropped one's to the kept one.
    const standing = { [a.id]: { confirmations: 1, recalls: 2 }, [b.id]: { confirmations: 3, recalls: 5 } };
    for (const [id, s] of Object.entries(standing))
      await (await userD1(u.id)).prepare("UPDATE lessons SET confirmations = ?, recalls = ? WHERE id = ?").bind(s.confirmations, s.recalls, id).run();
    const dry = await api(u.key, "POST", "/v1/lessons/compact", { dry_run: true });
    const planned = (await dry.json()) as { merged: { keep: string; drop: string[] }[]; dry_run: boolean };
    expect(planned.dry_run).toBe(true);
    expect(planned.merged).toHaveLength(1);
    expect(new Set([planned.merged[0]?.keep, ...(planned.merged[0]?.drop ?? [])])).toEqual(new Set([a.id, b.id]));
    expect(await count("SELECT count(*) n FROM lessons WHERE user_id = ? AND unlearned = 0", u.id)).toBe(3);

    const done = (await (await api(u.key, "POST", "/v1/lessons/compact", { dry_run: false })).json()) as { merged: { keep: string; drop: string[] }[] };
    const dropped = done.merged[0]?.drop[0] ?? "";
    const gone = (await (await api(u.key, "GET", `/v1/lessons/${dropped}`)).json()) as { lesson: { unlearned: boolean; merged_into: string } };
    expect(gone.lesson).toMatchObject({ unlearned: true, merged_into: done.merged[0]?.keep });
    expect(await count("SELECT count(*) n FROM lessons WHERE user_id = ? AND unlearned = 0", u.id)).toBe(2);
    expect((await (await api(u.key, "GET", `/v1/lessons/${other.id}`)).json()) as { lesson: { unlearned: boolean } }).toMatchObject({
      lesson: { unlearned: false },
    });
    const kept = done.merged[0]?.keep ?? "";
    const lessonOf = async (id: string) =>
      ((await (await api(u.key, "GET", `/v1/lessons/${id}`)).json()) as { lesson: { confirmations: number; recalls: number } }).lesson;
    expect(await lessonOf(kept)).toMatchObject({ confirmations: 4, recalls: 7 });
    // Undoing the merge gives each lesson back its own standing: nothing counted twice.
    expect((await api(u.key, "POST", `/v1/lessons/${dropped}/restore`)).status).toBe(200);
    expect(await lessonOf(kept)).toMatchObject(standing[kept] ?? {});
    expect(await lessonOf(dropped)).toMatchObject(standing[dropped] ?? {});
    expect((await api(u.key, "POST", `/v1/lessons/${dropped}/restore`)).status).toBe(200);
    expect(await lessonOf(kept)).toMatchObject(standing[kept] ?? {});
    expect((await api(u.key, "POST", "/v1/lessons/compact", { dry_run: "yes" })).status).toBe(400);
  });
});
