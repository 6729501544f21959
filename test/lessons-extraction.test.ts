import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { EXTRACT_KIND } from "../src/lessons/deps";
import { CHUNK_CHARS, type ExtractionModel, extractTranscript } from "../src/lessons/extract";
import { extractionModel } from "../src/lessons/queue";
import { recall } from "../src/lessons/recall";
import { IDLE_MS, ingest, REGROW_BYTES, sweepIdle } from "../src/lessons/transcripts";
import { fixture } from "./fixtures/transcripts";
import { api, createUser, script, seen } from "./helpers";
import { bytes, capturedDeps, count, deliver, extraction, lesson } from "./lessons-helpers";
import { userD1 } from "./shard-helpers";

const T = 60_000;
const msg = (userId: string, transcriptId: string) => ({ kind: EXTRACT_KIND, userId, transcriptId });

async function ingestFixture(userId: string, name: string, sessionId?: string) {
  const f = fixture(name);
  const { deps, sent } = await capturedDeps(userId);
  const out = await ingest(deps, userId, { sessionId: sessionId ?? f.session_id, project: f.project, offset: 0, content: f.text, totalBytes: bytes(f.text) });
  return { ...out, sent, deps, f };
}

const lessonsOf = async (userId: string) =>
  (await userD1(userId))
    .prepare("SELECT id, title, content, origin, project, confirmations, unlearned FROM lessons WHERE user_id = ? ORDER BY created_at")
    .bind(userId)
    .all<{ id: string; title: string; content: string; origin: string; project: string | null; confirmations: number }>()
    .then((r) => r.results);

/** The extraction model, with the user erasing their memory while it is being asked. */
function erasingWhileAsked(key: string): ExtractionModel {
  const model = extractionModel(env);
  const create = (...args: unknown[]) =>
    api(key, "DELETE", "/v1/memory").then((res) => {
      expect(res.status).toBe(200);
      return (model.client.messages.create as (...a: unknown[]) => unknown)(...args);
    });
  return { ...model, client: { messages: { create } } as unknown as ExtractionModel["client"] };
}

const transcriptOf = async (userId: string) =>
  (await userD1(userId)).prepare("SELECT * FROM transcripts WHERE user_id = ?").bind(userId).first<{
    id: string;
    status: string;
    bytes_synced: number;
    bytes_received: number;
    attempts: number;
    error: string | null;
    entries_dropped: number;
    lessons_extracted: number;
  }>();

describe("extraction (queue consumer)", () => {
  it(
    "sends only the signal moments, redacted, and stores valid lessons; invalid entries are dropped and counted",
    async () => {
      const u = await createUser();
      const { transcript, sent } = await ingestFixture(u.id, "fts5-quoting");
      expect(sent).toEqual([msg(u.id, transcript.id)]);
      await script(
        u.id,
        extraction([
          lesson({
            title: "Quote every token before an FTS5 MATCH",
            content: "FTS5 parses '-' and quotes as operators: double-quote each token.",
            tags: ["fts5", "sqlite"],
          }),
          lesson({ title: "x", content: "too short" }),
          { type: "gossip", title: "Not a lesson type", content: "This entry has an unknown type." },
        ]),
      );
      const result = await deliver(sent);
      expect(result.explicitAcks).toHaveLength(1);
      const stored = await lessonsOf(u.id);
      expect(stored.map((l) => l.title)).toEqual(["Quote every token before an FTS5 MATCH"]);
      expect(stored[0]?.project).toBeNull();
      const t = await transcriptOf(u.id);
      expect(t).toMatchObject({ status: "synced", bytes_synced: t?.bytes_received, entries_dropped: 2, lessons_extracted: 1 });

      const [request] = (await seen(u.id)).filter((r) => r.output_config?.format);
      const prompt = JSON.stringify(request?.messages);
      expect(prompt).toContain("fts5: syntax error");
      for (const secret of fixture("fts5-quoting").secrets ?? []) expect(prompt).not.toContain(secret);
      // The segments are dropped once extracted.
      expect(await count("SELECT count(*) n FROM transcript_segments WHERE user_id = ?", u.id)).toBe(0);
    },
    T,
  );

  it(
    "fails closed: a #cor correction is kept verbatim when the model fails, the transcript stays pending and is retried",
    async () => {
      const u = await createUser();
      const { sent } = await ingestFixture(u.id, "retry-backoff");
      await script(u.id, { structured: true, reply: { stop_reason: "refusal", content: [{ type: "text", text: "" }] } });
      const failed = await deliver(sent);
      expect(failed.explicitAcks).toEqual([]);
      expect(failed.retryMessages).toHaveLength(1);
      const afterFailure = await lessonsOf(u.id);
      expect(afterFailure).toHaveLength(1);
      expect(afterFailure[0]).toMatchObject({ origin: "cor", project: "billing-api" });
      expect(afterFailure[0]?.content).toContain("use exponential backoff with jitter, not a uniform sleep");
      expect(await transcriptOf(u.id)).toMatchObject({ status: "pending", bytes_synced: 0, attempts: 1 });
      expect((await transcriptOf(u.id))?.error).toContain("refused");

      // The retry succeeds: the model's lessons are stored, the correction is not stored twice.
      await script(u.id, extraction([lesson()]));
      const retried = await deliver(sent, 2);
      expect(retried.explicitAcks).toHaveLength(1);
      expect(await transcriptOf(u.id)).toMatchObject({ status: "synced", attempts: 0, error: null });
      const after = await lessonsOf(u.id);
      expect(after.map((l) => l.origin).sort()).toEqual(["cor", "extracted"]);

      // A third delivery (a duplicate message) finds nothing to do and calls no model.
      const calls = (await seen(u.id)).length;
      await deliver(sent, 1);
      expect((await seen(u.id)).length).toBe(calls);
      expect(await lessonsOf(u.id)).toHaveLength(2);
    },
    T,
  );

  it(
    "marks the transcript failed when its message reaches the dead-letter queue; a new upload queues it again",
    async () => {
      const u = await createUser();
      const { sent, deps, f, transcript } = await ingestFixture(u.id, "zod-version");
      await deliver(sent, 6, "engram-observations-dlq");
      expect((await transcriptOf(u.id))?.status).toBe("failed");
      const more = '{"type":"summary","summary":"later","leafUuid":"x"}\n';
      const again = await ingest({ ...deps }, u.id, {
        sessionId: f.session_id,
        project: f.project,
        offset: transcript.bytesReceived,
        content: more,
        totalBytes: bytes(f.text) + bytes(more),
      });
      expect(again.transcript.status).toBe("pending");
      expect(again.queued).toBe(true);
    },
    T,
  );

  it(
    "re-extracts a synced transcript once it has grown by the regrowth threshold; smaller tails wait for the idle sweep",
    async () => {
      const u = await createUser();
      const { sent, f, transcript } = await ingestFixture(u.id, "sys-exit-library");
      await script(
        u.id,
        extraction([lesson({ title: "Never call sys.exit() in library code", content: "Raise ConfigError; let the CLI entry point choose the exit code." })]),
      );
      await deliver(sent);
      let offset = transcript.bytesReceived;
      const small = `${JSON.stringify({ type: "user", message: { role: "user", content: "thanks" }, sessionId: f.session_id })}\n`;
      const { deps, sent: sentLater } = await capturedDeps(u.id);
      const tail = await ingest(deps, u.id, { sessionId: f.session_id, project: f.project, offset, content: small, totalBytes: offset + bytes(small) });
      expect(tail).toMatchObject({ queued: false, transcript: { status: "pending" } });
      offset += bytes(small);
      const filler = `${JSON.stringify({ type: "assistant", message: { role: "assistant", content: [{ type: "text", text: "x".repeat(REGROW_BYTES) }] } })}\n`;
      const grown = await ingest(deps, u.id, { sessionId: f.session_id, project: f.project, offset, content: filler, totalBytes: offset + bytes(filler) });
      expect(grown.queued).toBe(true);
      expect(sentLater).toHaveLength(1);

      // The sweep enqueues a pending tail once the session has been quiet long enough, not before.
      const { deps: sweepNow, sent: none } = await capturedDeps(u.id, () => Date.now());
      expect(await sweepIdle(sweepNow)).toBe(0);
      expect(none).toEqual([]);
      const { deps: later, sent: swept } = await capturedDeps(u.id, () => Date.now() + IDLE_MS + 60_000);
      await sweepIdle(later);
      expect(swept).toContainEqual(msg(u.id, transcript.id));
    },
    T,
  );

  it(
    "a transcript of only blank and bookkeeping lines ends synced with nothing extracted, and calls no model",
    async () => {
      const u = await createUser();
      const content = `\n${JSON.stringify({ type: "file-history-snapshot", snapshot: {} })}\n\n${JSON.stringify({ type: "system", content: "hook ran" })}\n`;
      const { deps, sent } = await capturedDeps(u.id);
      const out = await ingest(deps, u.id, { sessionId: "sess-quiet", project: null, offset: 0, content, totalBytes: bytes(content) });
      expect(out.queued).toBe(true);
      expect((await deliver(sent)).explicitAcks).toHaveLength(1);
      expect(await transcriptOf(u.id)).toMatchObject({ status: "synced", bytes_synced: bytes(content), lessons_extracted: 0 });
      expect(await seen(u.id)).toEqual([]);
    },
    T,
  );

  it(
    "the sweep settles a pending transcript with nothing unread (an empty upload older versions accepted) as synced",
    async () => {
      const u = await createUser();
      const old = Date.now() - IDLE_MS - 60_000;
      await (await userD1(u.id))
        .prepare(
          "INSERT INTO transcripts (id, user_id, session_id, bytes_received, total_bytes, content_hash, last_chunk_hash, status, created_at, updated_at) VALUES (?, ?, 'sess-0', 0, 0, '', '', 'pending', ?, ?)",
        )
        .bind(`trn_empty_${u.id}`, u.id, old, old)
        .run();
      const { deps, sent } = await capturedDeps(u.id);
      expect(await sweepIdle(deps)).toBe(0);
      expect(sent).toEqual([]);
      expect(await transcriptOf(u.id)).toMatchObject({ status: "synced", bytes_synced: 0, bytes_received: 0 });
      const stats = (await (await api(u.key, "GET", "/v1/lessons/stats")).json()) as { sync: { pending: number } };
      expect(stats.sync.pending).toBe(0);
    },
    T,
  );

  it(
    "re-syncing the same content creates no duplicate lessons (content-hash ids)",
    async () => {
      const u = await createUser();
      const first = await ingestFixture(u.id, "mocked-database");
      const out = [
        lesson({
          title: "Never mock the database in integration tests",
          content: "Mocked DB tests passed while the real migration broke production; use the real Postgres.",
          scope: "project",
        }),
      ];
      await script(u.id, extraction(out));
      await deliver(first.sent);
      const before = await lessonsOf(u.id);
      // The same transcript uploaded again from scratch (e.g. after the client lost its state) under the same session.
      await (await userD1(u.id)).prepare("DELETE FROM transcripts WHERE user_id = ?").bind(u.id).run();
      const second = await ingestFixture(u.id, "mocked-database");
      await script(u.id, extraction(out));
      await deliver(second.sent);
      expect(await lessonsOf(u.id)).toEqual(before);
      expect(before[0]?.project).toBe("orders-service");
    },
    T,
  );

  it(
    "counts a recalled lesson that comes back in a later session as confirmed, and ranks it up",
    async () => {
      const u = await createUser();
      const a = await ingestFixture(u.id, "retry-backoff");
      const rule = lesson();
      const rival = lesson({
        title: "Backoff for retries in the queue worker",
        content: "The queue worker retries with exponential backoff too, capped at five minutes.",
      });
      await script(u.id, extraction([rule, rival]));
      await deliver(a.sent);
      const { deps } = await capturedDeps(u.id);
      const first = await recall(deps.db, { userId: u.id, query: "retry backoff", limit: 5, client: "test" }, Date.now());
      expect(first.map((h) => h.lesson.title)).toEqual(expect.arrayContaining([rule.title, rival.title]));
      // Another session teaches the same lesson again.
      const b = await ingestFixture(u.id, "retry-backoff", "later-session");
      await script(u.id, extraction([rule]));
      await deliver(b.sent);
      const rows = await lessonsOf(u.id);
      expect(rows.find((l) => l.title === rule.title)?.confirmations).toBe(1);
      expect(rows.find((l) => l.title === rival.title)?.confirmations).toBe(0);
      const ranked = await recall(deps.db, { userId: u.id, query: "retry backoff", limit: 5, client: "test" }, Date.now());
      expect(ranked[0]?.lesson.title).toBe(rule.title);
      // Re-delivering the same session again confirms nothing more.
      await (await userD1(u.id)).prepare("UPDATE transcripts SET bytes_synced = 0 WHERE user_id = ? AND session_id = 'later-session'").bind(u.id).run();
      await script(u.id, extraction([rule]));
      await deliver(b.sent);
      expect((await lessonsOf(u.id)).find((l) => l.title === rule.title)?.confirmations).toBe(1);
    },
    T,
  );

  it(
    "chunks a long transcript into several model calls and sends every moment, none cut",
    async () => {
      const u = await createUser();
      const lines: string[] = [];
      for (let i = 0; i < 40; i++) {
        lines.push(
          JSON.stringify({
            type: "assistant",
            isSidechain: false,
            message: { role: "assistant", content: [{ type: "tool_use", id: `t${i}`, name: "Bash", input: { command: `make step-${i}` } }] },
          }),
        );
        lines.push(
          JSON.stringify({
            type: "user",
            isSidechain: false,
            message: {
              role: "user",
              content: [{ type: "tool_result", tool_use_id: `t${i}`, is_error: true, content: `Error: step-${i} failed\n${"detail ".repeat(200)}` }],
            },
          }),
        );
        lines.push(JSON.stringify({ type: "user", message: { role: "user", content: `filler ${i}` } }));
        lines.push(JSON.stringify({ type: "user", message: { role: "user", content: `more filler ${i}` } }));
        lines.push(JSON.stringify({ type: "user", message: { role: "user", content: `still filler ${i}` } }));
        lines.push(JSON.stringify({ type: "user", message: { role: "user", content: `last filler ${i}` } }));
      }
      const content = `${lines.join("\n")}\n`;
      const { deps, sent } = await capturedDeps(u.id);
      await ingest(deps, u.id, { sessionId: "long", project: null, offset: 0, content, totalBytes: bytes(content) });
      await deliver(sent);
      const calls = (await seen(u.id)).filter((r) => r.output_config?.format);
      expect(calls.length).toBeGreaterThan(1);
      const prompts = calls.map((c) => JSON.stringify(c.messages));
      for (const p of prompts) expect(p.length).toBeLessThan(CHUNK_CHARS * 1.5);
      for (let i = 0; i < 40; i++) expect(prompts.some((p) => p.includes(`step-${i} failed`))).toBe(true);
      expect((await transcriptOf(u.id))?.status).toBe("synced");
    },
    T,
  );

  it(
    "an extraction running while the user erases their memory writes no lesson back, not even a #cor correction",
    async () => {
      const u = await createUser();
      const { deps, transcript } = await ingestFixture(u.id, "retry-backoff");
      await script(u.id, extraction([lesson()]));
      expect(await extractTranscript(deps, erasingWhileAsked(u.key), u.id, transcript.id)).toMatchObject({ status: "nothing", created: 0 });
      expect(await lessonsOf(u.id)).toEqual([]);

      // The model fails after the erase: the corrections it would keep are not written either.
      const again = await ingestFixture(u.id, "retry-backoff");
      await script(u.id, { structured: true, reply: { stop_reason: "refusal", content: [{ type: "text", text: "" }] } });
      await expect(extractTranscript(again.deps, erasingWhileAsked(u.key), u.id, again.transcript.id)).rejects.toThrow();
      expect(await lessonsOf(u.id)).toEqual([]);
      expect(await transcriptOf(u.id)).toBeNull();
    },
    T,
  );

  it(
    "stores the model's lessons without invisible characters, as a saved lesson would be",
    async () => {
      const u = await createUser();
      const { deps, transcript } = await ingestFixture(u.id, "fts5-quoting");
      // A zero-width space and Unicode tag characters spelling "IGNORE", meant for the next model that reads it.
      const hidden = "\u200b\u{E0049}\u{E0047}\u{E004E}\u{E004F}\u{E0052}\u{E0045}";
      await script(
        u.id,
        extraction([lesson({ title: `Quote every${hidden} FTS5 token`, content: `Quote every FTS5 token in user search${hidden} queries, always.` })]),
      );
      await extractTranscript(deps, extractionModel(env), u.id, transcript.id);
      expect((await lessonsOf(u.id)).find((l) => l.origin === "extracted")).toMatchObject({
        title: "Quote every FTS5 token",
        content: "Quote every FTS5 token in user search queries, always.",
      });
    },
    T,
  );
});
