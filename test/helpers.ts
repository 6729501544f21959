import { env, runInDurableObject, SELF } from "cloudflare:test";
import Anthropic from "@anthropic-ai/sdk";
import { createParser } from "eventsource-parser";
import { expect } from "vitest";
import { loadConfig } from "../src/config/config";
import type { Env } from "../src/config/env";
import type { PromptContext } from "../src/core/context";
import type { ChatEvent } from "../src/core/events";
import { createDb } from "../src/db/client";
import { type TurnInput, type TurnRefusal, TurnRunner } from "../src/sessions/runner";
import { SessionStorage } from "../src/sessions/storage";
import { createSessionWithinBudget } from "../src/sessions/store";
import type { Step } from "./fake-anthropic/worker";
import { allShards, runOnAllShards, shardOf, userDb } from "./shard-helpers";
import { registry } from "./worker";

export const BASE = "http://engram.test";

/** The real SDK against the fake Messages API, without retries: what a test of the fake's wire talks through. */
export const fakeClient = () =>
  new Anthropic({
    apiKey: "test",
    baseURL: "http://fake-anthropic.test",
    maxRetries: 0,
    fetch: (url: RequestInfo | URL, init?: RequestInit) => env.FAKE_ANTHROPIC.fetch(url, init),
  });

/** A prompt-building context for a made-up user, at a fixed time: for tests of prompt assembly alone. */
export const promptContext = (): PromptContext => ({
  db: createDb(env.DB),
  env,
  config: loadConfig(env),
  userId: "usr_x",
  plan: "free",
  sessionId: "ses_x",
  siteId: null,
  projectId: null,
  query: "hello",
  now: Date.UTC(2026, 0, 1),
});

export async function api(key: string | null, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  return SELF.fetch(`${BASE}${path}`, {
    method,
    headers: {
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
}

/** A user and their key; `shard` pins their rows to one shard (default: placed by the directory, as in production). */
export async function createUser(plan: "free" | "pro" = "free", shard?: number) {
  const res = await api(env.ADMIN_TOKEN ?? null, "POST", "/v1/admin/users", { name: "Test User", plan, shard });
  if (res.status !== 201) throw new Error(`createUser: ${res.status} ${await res.text()}`);
  const body = (await res.json()) as { user: { id: string }; api_key: { key: string } };
  await shardOf(body.user.id);
  return { id: body.user.id, key: body.api_key.key };
}

/** Queues the fake model's next responses for this user. */
export async function script(userId: string, ...steps: Step[]) {
  await env.FAKE_ANTHROPIC.fetch("http://fake/__script", { method: "POST", body: JSON.stringify({ key: userId, steps }) });
}

export type SeenRequest = {
  model: string;
  system: string | { type: "text"; text: string; cache_control?: unknown }[];
  thinking?: { type: string; display?: string };
  output_config?: { effort?: string; format?: unknown };
  tool_choice?: { type: string; name?: string };
  messages: { role: string; content: string | { type: string; [k: string]: unknown }[] }[];
  tools?: { name: string; input_schema: unknown }[];
  metadata?: { user_id?: string };
};

/**
 * The Messages API requests the fake received for this user, without the cache breakpoints (they are
 * request markers, not content: tests of what the model was sent compare content). `seenRaw` keeps them.
 */
export async function seen(userId: string): Promise<SeenRequest[]> {
  return JSON.parse(JSON.stringify(await seenRaw(userId), (k, v: unknown) => (k === "cache_control" ? undefined : v))) as SeenRequest[];
}

export async function seenRaw(userId: string): Promise<SeenRequest[]> {
  const res = await env.FAKE_ANTHROPIC.fetch(`http://fake/__requests?key=${encodeURIComponent(userId)}`);
  return (await res.json()) as SeenRequest[];
}

/** Parses an SSE body into events. */
/** Chat events of an SSE body, parsed as the SSE spec says (eventsource-parser). */
export function parseSse(text: string): ChatEvent[] {
  const events: ChatEvent[] = [];
  const parser = createParser({ onEvent: (e) => events.push({ type: e.event, ...(e.data ? JSON.parse(e.data) : {}) } as ChatEvent) });
  parser.feed(text);
  return events;
}

export async function readSse(res: Response): Promise<ChatEvent[]> {
  return parseSse(await res.text());
}

export async function chat(key: string, body: Record<string, unknown>) {
  const res = await api(key, "POST", "/v1/chat", body);
  if (res.status !== 200) throw new Error(`chat: ${res.status} ${await res.text()}`);
  const events = await readSse(res);
  const sessionId = events.find((e) => e.type === "session");
  return { events, sessionId: sessionId?.type === "session" ? sessionId.id : "", text: textOf(events) };
}

/** A new session of `userId`, with no turn yet: its id. */
export async function newSession(userId: string, title = "test"): Promise<string> {
  const row = await createSessionWithinBudget(await userDb(userId), userId, { title, siteId: null, projectId: null }, null, Date.now());
  if (!row) throw new Error("newSession: session not created");
  return row.id;
}

/**
 * Runs one chat turn in the session's Durable Object as a Worker whose settings `vars` replace (another
 * CHAT_MODEL; no ANTHROPIC_API_KEY, so the offline model): an operator's choice, which no request can make.
 * The real runner, tools and storage; the turn's events. A refused turn fails the test.
 */
export async function turnWithEnv(
  vars: Partial<Env>,
  turn: { userId: string; sessionId: string; message: string; clientTools?: TurnInput["clientTools"] },
): Promise<ChatEvent[]> {
  const stub = env.SESSIONS.get(env.SESSIONS.idFromName(`${turn.userId}/${turn.sessionId}`));
  const shard = await shardOf(turn.userId);
  return runInDurableObject(stub, async (_instance, state) => {
    const events: ChatEvent[] = [];
    const runner = new TurnRunner(
      new SessionStorage(state.storage),
      { ...env, ...vars },
      { set: async () => undefined, clear: async () => undefined },
      registry,
    );
    const sink = { emit: (e: ChatEvent) => void events.push(e), signal: new AbortController().signal };
    let refused: TurnRefusal | undefined;
    await runner.chat(
      { ...turn, turnId: crypto.randomUUID(), plan: "free", shard, siteId: null, projectId: null, stream: true, clientTools: turn.clientTools ?? [] },
      sink,
      (refusal) => {
        refused = refusal;
      },
    );
    expect(refused).toBeUndefined();
    return events;
  });
}

/** Event types without the streamed deltas (`text`, `thinking`), for asserting a turn's shape. */
export const shape = (events: readonly ChatEvent[]) => events.map((e) => e.type).filter((t) => t !== "text" && t !== "thinking");

/** What a stored message says: its last text block (a user turn opens with the per-turn context block). */
export const saidIn = (m: { content: unknown }) => {
  const blocks = Array.isArray(m.content) ? (m.content as { type: string; text?: string }[]) : [{ type: "text", text: String(m.content) }];
  return blocks.filter((b) => b.type === "text").at(-1)?.text;
};

/** The system prompt's text, whether sent as a string or as blocks. */
export const systemOf = (r: SeenRequest | undefined) => (typeof r?.system === "string" ? r.system : (r?.system ?? []).map((b) => b.text).join("\n"));

/**
 * Everything the model was told besides the conversation: the system prompt, then the per-turn context
 * block that opens the request's latest user turn.
 */
export function promptOf(r: SeenRequest | undefined): string {
  const opening = [...(r?.messages ?? [])].reverse().find((m) => m.role === "user" && Array.isArray(m.content) && m.content.some((b) => b.type === "text"));
  const blocks = Array.isArray(opening?.content) ? opening.content : [];
  const context = blocks.find((b) => b.type === "text" && typeof b.text === "string" && b.text.startsWith("<turn_context>"));
  return `${systemOf(r)}\n\n${typeof context?.text === "string" ? context.text : ""}`;
}

export type SentSearchResult = { type: "search_result"; source: string; title: string; content: { type: "text"; text: string }[]; citations?: unknown };

/** Every `search_result` block of a request (the memory recalled for its turn), in order. */
export const searchResultsOf = (r: SeenRequest | undefined): SentSearchResult[] =>
  (r?.messages ?? []).flatMap((m) => (Array.isArray(m.content) ? m.content.filter((b) => b.type === "search_result") : [])) as SentSearchResult[];

/** The recalled facts of a request as `text (source)` lines, for asserting what the model was shown. */
export const recalledIn = (r: SeenRequest | undefined): string[] => searchResultsOf(r).map((b) => `${b.content.map((c) => c.text).join("")} (${b.source})`);

export const textOf = (events: ChatEvent[]) => events.flatMap((e) => (e.type === "text" ? [e.delta] : [])).join("");

export const textReply = (text: string): Step => ({ reply: { content: [{ type: "text", text }] } });

export const toolCall = (name: string, input: unknown, id = `toolu_${crypto.randomUUID().slice(0, 8)}`, text?: string): Step => ({
  reply: { content: [...(text ? [{ type: "text" as const, text }] : []), { type: "tool_use" as const, id, name, input }] },
});

export type History = { messages: { role: string; content: { type: string; [k: string]: unknown }[] }[] };

/** A session's stored history, as GET /v1/sessions/{id} returns it. */
export async function history(key: string, sessionId: string): Promise<History> {
  const res = await api(key, "GET", `/v1/sessions/${sessionId}`);
  expect(res.status).toBe(200);
  return (await res.json()) as History;
}

/** The statements of the migration whose file name starts with `prefix` ("0015_"). */
export function migrationQueries(prefix: string): string[] {
  const m = env.TEST_MIGRATIONS.find((x) => x.name.startsWith(prefix));
  if (!m) throw new Error(`migration ${prefix} not found`);
  return m.queries;
}

export async function runSql(queries: readonly string[]): Promise<void> {
  for (const q of queries) await runOnAllShards(q);
}

/** The owner columns the full-text indexes searched by before every word was tagged (migration 0016 drops them). */
export const OLD_OWNER_COLUMNS = ["facts", "lessons"].map(
  (t) => `ALTER TABLE ${t} ADD COLUMN owner TEXT GENERATED ALWAYS AS (replace(user_id, '_', '')) VIRTUAL`,
);

/**
 * Text with the punctuation the full-text indexes turn into spaces (ASCII, typographic quotes and dashes,
 * arrows, guillemets, a no-break space), and every word a search must find in it.
 */
export const PUNCTUATED = {
  text: "Prefers pnpm—never npm (monorepo). Don’t mock “drizzle”; retry→backoff… path/to_file.ts, a-b, x=1, [brackets], {braces}, «guillemets», 2×speedup, it's\u00a0nonbreaking",
  words: ["pnpm", "never", "monorepo", "mock", "drizzle", "retry", "backoff", "path", "file", "brackets", "braces", "guillemets", "speedup", "nonbreaking"],
};

/**
 * Whether any segment of a full-text index (`<table>_data`, FTS5's shadow table) still holds a term's bytes.
 * Terms on a page are prefix-compressed against the previous term, so the first three bytes are not searched for.
 */
export async function ftsIndexHolds(table: string, term: string): Promise<boolean> {
  const rows = [];
  for (const d1 of allShards()) rows.push(...(await d1.prepare(`SELECT block FROM ${table}_data`).all<{ block: ArrayBuffer | number[] | null }>()).results);
  const needle = new TextEncoder().encode(term.slice(3));
  return rows.some((r) => {
    if (!r.block) return false;
    const bytes = r.block instanceof ArrayBuffer ? new Uint8Array(r.block) : Uint8Array.from(r.block);
    outer: for (let i = 0; i + needle.length <= bytes.length; i++) {
      for (let j = 0; j < needle.length; j++) if (bytes[i + j] !== needle[j]) continue outer;
      return true;
    }
    return false;
  });
}
