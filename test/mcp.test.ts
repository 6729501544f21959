import { env, SELF } from "cloudflare:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { describe, expect, it, vi } from "vitest";
import { loadConfig } from "../src/config/config";
import { EXTRACT_KIND } from "../src/lessons/deps";
import { ingest } from "../src/lessons/transcripts";
import { recordUsage } from "../src/usage/record";
import { fixture } from "./fixtures/transcripts";
import { api, BASE, createUser, script, seen } from "./helpers";
import { bytes, capturedDeps, deliver, extraction, lesson, upload } from "./lessons-helpers";
import { connectMcp } from "./mcp-helpers";
import { userD1, userDb } from "./shard-helpers";

const T = 60_000;

/** A transcript of 40 failed commands with some chat between them: its moments fill three extraction chunks. */
function fortyFailures(): string {
  const lines: string[] = [];
  for (let i = 0; i < 40; i++) {
    const call = { type: "tool_use", id: `t${i}`, name: "Bash", input: { command: `make step-${i}` } };
    const result = { type: "tool_result", tool_use_id: `t${i}`, is_error: true, content: `Error: step-${i} failed\n${"detail ".repeat(200)}` };
    lines.push(JSON.stringify({ type: "assistant", message: { role: "assistant", content: [call] } }));
    lines.push(JSON.stringify({ type: "user", message: { role: "user", content: [result] } }));
    for (const said of ["filler", "more filler", "still filler", "last filler"])
      lines.push(JSON.stringify({ type: "user", message: { role: "user", content: `${said} ${i}` } }));
  }
  return `${lines.join("\n")}\n`;
}

type TextResult = { content: { type: string; text: string }[]; isError?: boolean };

async function call(client: Client, name: string, args: Record<string, unknown>) {
  const result = (await client.callTool({ name, arguments: args })) as TextResult;
  return { text: result.content.map((c) => c.text).join("\n"), isError: result.isError === true };
}

describe("MCP server at /mcp", () => {
  it(
    "lists the six tools, each saying when to call it",
    async () => {
      const u = await createUser();
      const client = await connectMcp(u.key);
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(["brain_extract", "brain_read", "brain_recall", "brain_remember", "memory_remember", "memory_search"]);
      expect(tools.find((t) => t.name === "brain_recall")?.description).toMatch(/BEFORE writing code/);
      expect(tools.find((t) => t.name === "brain_recall")?.inputSchema).toMatchObject({ type: "object", properties: { query: { type: "string" } } });
      await client.close();
    },
    T,
  );

  it(
    "turns an uploaded transcript into lessons that brain_recall finds, and logs the recall",
    async () => {
      const u = await createUser();
      const f = fixture("retry-backoff");
      // Scripted twice: the queue's own delivery may race the explicit one; both store the same content-hash id.
      const out = extraction([lesson({ title: "Exponential backoff with jitter for 429 retries", scope: "project" })]);
      await script(u.id, out, out);
      const res = await upload(u.key, { session_id: f.session_id, project: f.project, offset: 0, content: f.text, total_bytes: bytes(f.text) });
      const { transcript } = (await res.json()) as { transcript: { status: string } };
      expect(transcript.status).toBe("pending");
      // Deliver the extraction message as the queue would (the queue's own delivery finds it done, or does it first).
      const row = await (await userD1(u.id)).prepare("SELECT id FROM transcripts WHERE user_id = ?").bind(u.id).first<{ id: string }>();
      await deliver([{ kind: EXTRACT_KIND, userId: u.id, transcriptId: row?.id ?? "" }]);

      const client = await connectMcp(u.key);
      const recalled = await call(client, "brain_recall", { query: "retry 429 with sleep", project: "billing-api" });
      expect(recalled.isError).toBe(false);
      expect(recalled.text).toContain("Exponential backoff with jitter for 429 retries");
      expect(recalled.text).toContain("project=billing-api");
      // The recall log is written after the answer is sent: it shows up within moments.
      await vi.waitFor(async () => {
        const log = (await (await api(u.key, "GET", "/v1/lessons/recalls")).json()) as { recalls: { client: string; query: string }[] };
        expect(log.recalls[0]).toMatchObject({ client: "mcp", query: "retry 429 with sleep" });
      });
      const synced = (await (await api(u.key, "GET", `/v1/transcripts/${f.session_id}`)).json()) as { transcript: { status: string } };
      expect(synced.transcript.status).toBe("synced");
      await client.close();
    },
    T,
  );

  it(
    "remembers and recalls within one user only; another user's key sees none of it",
    async () => {
      const a = await createUser();
      const b = await createUser();
      const ca = await connectMcp(a.key);
      const saved = await call(ca, "brain_remember", {
        title: "Never mock the database in integration tests",
        content: "Use the real Postgres from docker compose; mocks hid a broken migration.",
        signal: "HIGH",
        flags: ["AVOID"],
        type: "antipattern",
      });
      expect(saved.text).toMatch(/^Saved: les_/);
      expect(
        (
          await call(ca, "brain_remember", {
            title: "Never mock the database in integration tests",
            content: "Use the real Postgres from docker compose; mocks hid a broken migration.",
            signal: "HIGH",
            flags: ["AVOID"],
            type: "antipattern",
          })
        ).text,
      ).toMatch(/^Already known/);
      expect((await call(ca, "brain_recall", { query: "mock database" })).text).toContain("[antipattern HIGH AVOID] Never mock the database");

      const cb = await connectMcp(b.key);
      expect((await call(cb, "brain_recall", { query: "mock database" })).text).toBe("No lessons match. Nothing learned about this yet.");
      const lessonId = /les_[0-9a-f]{32}/.exec(saved.text)?.[0] ?? "";
      expect((await api(b.key, "GET", `/v1/lessons/${lessonId}`)).status).toBe(404);
      await ca.close();
      await cb.close();
    },
    T,
  );

  it(
    "brain_recall finds a lesson by a long query with no searchable word (a row of emoji)",
    async () => {
      const u = await createUser();
      const client = await connectMcp(u.key);
      await call(client, "brain_remember", { title: "Emoji headings 😀", content: `Keep ${"😀".repeat(20)} in the changelog headings.` });
      const found = await call(client, "brain_recall", { query: "😀".repeat(13) });
      expect(found.isError).toBe(false);
      expect(found.text).toContain("Emoji headings");
      await client.close();
    },
    T,
  );

  it(
    "returns bad tool input as an error result, writing nothing",
    async () => {
      const u = await createUser();
      const client = await connectMcp(u.key);
      const bad = await call(client, "brain_remember", { title: "x", content: "short" });
      expect(bad.isError).toBe(true);
      expect(bad.text).toContain("Invalid input for brain_remember");
      expect((await call(client, "brain_recall", { query: "" })).isError).toBe(true);
      const list = (await (await api(u.key, "GET", "/v1/lessons")).json()) as { lessons: unknown[] };
      expect(list.lessons).toEqual([]);
      await client.close();
    },
    T,
  );

  it(
    "refuses a missing, wrong or revoked key",
    async () => {
      const u = await createUser();
      await expect(connectMcp(null)).rejects.toThrow();
      await expect(connectMcp("egm_not-a-key")).rejects.toThrow();
      const rotated = await api(u.key, "POST", "/v1/keys/rotate");
      expect(rotated.status).toBe(201);
      await expect(connectMcp(u.key)).rejects.toThrow();
      const raw = await SELF.fetch(`${BASE}/mcp`, {
        method: "POST",
        headers: { authorization: `Bearer ${u.key}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
      expect(raw.status).toBe(401);
      expect(raw.headers.get("www-authenticate")).toContain("Bearer");
      const { key } = (await rotated.json()) as { key: string };
      const client = await connectMcp(key);
      expect((await client.listTools()).tools).toHaveLength(6);
      await client.close();
    },
    T,
  );

  it(
    "serves the user's memory: memory_remember queues an observation, brain_read reads SOUL, memory_search searches facts",
    async () => {
      const u = await createUser();
      expect((await api(u.key, "PUT", "/v1/brain/soul", { content: "Be terse. The user is a backend engineer." })).status).toBe(200);
      expect((await api(u.key, "POST", "/v1/memory/facts", { facts: [{ text: "The user deploys with Cloudflare Workers." }] })).status).toBe(201);
      const client = await connectMcp(u.key);
      expect((await call(client, "brain_read", { document: "soul" })).text).toBe("Be terse. The user is a backend engineer.");
      expect((await call(client, "brain_read", { document: "bible", site: "shop" })).text).toBe("BIBLE is empty.");
      const embeddings = async () =>
        (await (await userD1(u.id)).prepare("SELECT count(*) AS n FROM usage WHERE user_id = ? AND kind = 'embedding'").bind(u.id).first<{ n: number }>())?.n;
      const before = await embeddings();
      expect((await call(client, "memory_search", { query: "how does the user deploy" })).text).toContain("Cloudflare Workers");
      // The query's embedding is billed like the HTTP search's.
      expect(await embeddings()).toBe((before ?? 0) + 1);
      const noted = await call(client, "memory_remember", { content: "Prefers pnpm over npm", category: "preference" });
      expect(noted.text).toMatch(/^Noted/);
      const events = (await (await api(u.key, "GET", "/v1/memory/events")).json()) as { events: { content: string }[] };
      expect(events.events.map((e) => e.content)).toContain("Prefers pnpm over npm");
      await client.close();
    },
    T,
  );

  it(
    "brain_extract extracts pending transcripts now, with the conversation model",
    async () => {
      const u = await createUser();
      const f = fixture("sys-exit-library");
      // Stored directly so no queue delivery races the on-demand extraction.
      const { deps } = await capturedDeps(u.id);
      await ingest(deps, u.id, { sessionId: f.session_id, project: f.project, offset: 0, content: f.text, totalBytes: bytes(f.text) });
      await script(
        u.id,
        extraction([
          lesson({ title: "Never call sys.exit() in library code", content: "Raise ConfigError and let the CLI entry point choose the exit code." }),
        ]),
      );
      const client = await connectMcp(u.key);
      const out = await call(client, "brain_extract", { session_id: f.session_id });
      expect(out.text).toContain(`${f.session_id}: 1 new lesson(s)`);
      const requests = (await (await env.FAKE_ANTHROPIC.fetch(`http://fake/__requests?key=${u.id}`)).json()) as { model: string; output_config?: unknown }[];
      expect(requests.filter((r) => r.output_config).at(-1)?.model).toBe("claude-sonnet-5-5");
      expect((await call(client, "brain_extract", {})).text).toBe("No transcript is waiting for extraction.");
      await client.close();
    },
    T,
  );

  it(
    "brain_extract is refused once today's chat budget is used up: a tool error saying so, no model call, the transcript stays pending and the background extracts it",
    async () => {
      const u = await createUser();
      const f = fixture("sys-exit-library");
      const { deps } = await capturedDeps(u.id);
      const { transcript } = await ingest(deps, u.id, { sessionId: f.session_id, project: f.project, offset: 0, content: f.text, totalBytes: bytes(f.text) });
      await recordUsage(await userDb(u.id), {
        userId: u.id,
        kind: "chat",
        model: env.CHAT_MODEL ?? null,
        usage: { input_tokens: loadConfig(env).dailyChatTokens, output_tokens: 0 },
      });

      const client = await connectMcp(u.key);
      const out = await call(client, "brain_extract", { session_id: f.session_id });
      expect(out.isError).toBe(true);
      expect(out.text).toMatch(/today's chat budget of \d+ tokens is used up; it resets at \d{4}-\d\d-\d\dT/);
      expect(out.text).toContain(`${f.session_id} stays pending`);
      const asked = (await (await env.FAKE_ANTHROPIC.fetch(`http://fake/__requests?key=${u.id}`)).json()) as { output_config?: unknown }[];
      expect(asked.filter((r) => r.output_config)).toEqual([]);
      const state = async () => ((await (await api(u.key, "GET", `/v1/transcripts/${f.session_id}`)).json()) as { transcript: { status: string } }).transcript;
      expect((await state()).status).toBe("pending");

      // The background extraction (the background model, outside the chat budget) still learns from it.
      await script(
        u.id,
        extraction([lesson({ title: "Never call sys.exit() in library code", content: "Raise an error; the CLI entry point picks the exit code." })]),
      );
      await deliver([{ kind: EXTRACT_KIND, userId: u.id, transcriptId: transcript.id }]);
      expect((await state()).status).toBe("synced");
      await client.close();
    },
    T,
  );

  it(
    "brain_extract stops between the chunks of a transcript once today's chat budget is spent; the background extracts the rest, each failure once",
    async () => {
      const u = await createUser();
      const content = fortyFailures();
      const { deps } = await capturedDeps(u.id);
      const { transcript } = await ingest(deps, u.id, { sessionId: "long", project: null, offset: 0, content, totalBytes: bytes(content) });
      const limit = loadConfig(env).dailyChatTokens;
      await recordUsage(await userDb(u.id), {
        userId: u.id,
        kind: "chat",
        model: env.CHAT_MODEL ?? null,
        usage: { input_tokens: limit - 1, output_tokens: 0 },
      });
      await script(
        u.id,
        ...Array.from({ length: 10 }, (_, i) => extraction([lesson({ title: `Lesson from part ${i + 1}` })], { input_tokens: 5_000, output_tokens: 100 })),
      );

      const client = await connectMcp(u.key);
      const out = await call(client, "brain_extract", { session_id: "long" });
      await client.close();
      // One call may start with 1 token left; none starts once the budget is spent.
      const onDemand = (await seen(u.id)).filter((r) => r.output_config?.format);
      const usage = (await (await api(u.key, "GET", "/v1/usage?days=1")).json()) as { chat_budget: { used: number } };
      expect({ calls: onDemand.length, overBy: usage.chat_budget.used - limit }).toEqual({ calls: 1, overBy: 5_099 });
      expect(out.text).toMatch(
        /^long: 1 new lesson\(s\), 0 confirmed, 0 invalid entries dropped from 1 of its 3 parts; the rest stays pending, not extracted: today's chat budget of \d+ tokens is used up/,
      );
      const state = async () =>
        ((await (await api(u.key, "GET", "/v1/transcripts/long")).json()) as { transcript: { status: string; lessons_extracted: number } }).transcript;
      expect(await state()).toMatchObject({ status: "pending", lessons_extracted: 1 });

      // The session goes on; the background model (outside the budget) then sends only what was not sent, in order:
      // every failure exactly once overall, the new one last.
      const more = `${JSON.stringify({ type: "user", message: { role: "user", content: [{ type: "tool_result", tool_use_id: "t40", is_error: true, content: "Error: step-40 failed" }] } })}\n`;
      await ingest(deps, u.id, { sessionId: "long", project: null, offset: bytes(content), content: more, totalBytes: bytes(content + more) });
      await deliver([{ kind: EXTRACT_KIND, userId: u.id, transcriptId: transcript.id }]);
      expect(await state()).toMatchObject({ status: "synced", lessons_extracted: 3 });
      const prompts = (await seen(u.id)).filter((r) => r.output_config?.format).map((r) => JSON.stringify(r.messages));
      expect(prompts).toHaveLength(3);
      const failures = prompts.flatMap((p) => [...p.matchAll(/Error: step-(\d+) failed/g)].map((m) => Number(m[1])));
      expect(failures).toEqual(Array.from({ length: 41 }, (_, i) => i));
    },
    T,
  );

  it(
    "brain_extract's tokens are recorded with their cost and count against the daily chat budget",
    async () => {
      const u = await createUser();
      const f = fixture("sys-exit-library");
      const { deps } = await capturedDeps(u.id);
      await ingest(deps, u.id, { sessionId: f.session_id, project: f.project, offset: 0, content: f.text, totalBytes: bytes(f.text) });
      const limit = loadConfig(env).dailyChatTokens;
      const lessons = [lesson({ title: "Never call sys.exit() in library code", content: "Raise an error; the CLI entry point picks the exit code." })];
      await script(u.id, extraction(lessons, { input_tokens: limit - 10, output_tokens: 10 }));
      const client = await connectMcp(u.key);
      expect((await call(client, "brain_extract", { session_id: f.session_id })).text).toContain(`${f.session_id}: 1 new lesson(s)`);

      const usage = (await (await api(u.key, "GET", "/v1/usage?days=1")).json()) as {
        by_kind: { kind: string; input_tokens: number; output_tokens: number; cost_usd: number }[];
        chat_budget: { used: number; remaining: number };
      };
      const row = usage.by_kind.find((k) => k.kind === "extraction_on_demand");
      expect(row).toMatchObject({ input_tokens: limit - 10, output_tokens: 10 });
      expect(row?.cost_usd).toBeGreaterThan(0);
      expect(usage.chat_budget).toMatchObject({ used: limit, remaining: 0 });
      const turn = await api(u.key, "POST", "/v1/chat", { message: "hello", stream: false });
      expect(turn.status).toBe(429);
      await client.close();
    },
    T,
  );

  it(
    "refuses a JSON-RPC batch array with a JSON-RPC error and runs none of its calls; a single message still runs",
    async () => {
      const u = await createUser();
      const post = (body: unknown) =>
        SELF.fetch(`${BASE}/mcp`, {
          method: "POST",
          headers: { authorization: `Bearer ${u.key}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
          body: JSON.stringify(body),
        });
      const remember = (i: number) => ({
        jsonrpc: "2.0",
        id: i,
        method: "tools/call",
        params: {
          name: "brain_remember",
          arguments: { title: `Batched rule number ${i}`, content: `Distinct rule ${i}, long enough to be stored as a lesson.` },
        },
      });
      const batch = await post([remember(1), remember(2), remember(3)]);
      expect(batch.status).toBe(400);
      expect(await batch.json()).toMatchObject({
        jsonrpc: "2.0",
        id: null,
        error: { code: -32600, message: expect.stringContaining("batches are not supported") },
      });
      const lessons = async () => ((await (await api(u.key, "GET", "/v1/lessons")).json()) as { lessons: unknown[] }).lessons;
      expect(await lessons()).toEqual([]);

      const client = await connectMcp(u.key);
      expect((await call(client, "brain_remember", remember(4).params.arguments)).isError).toBe(false);
      expect(await lessons()).toHaveLength(1);
      await client.close();
    },
    T,
  );
});
