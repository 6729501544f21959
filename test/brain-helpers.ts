import type { ChatEvent } from "../src/core/events";
import { api } from "./helpers";
import { userD1, userDb } from "./shard-helpers";

/** Drizzle over the user's shard, for calling the brain's domain functions directly. */
export const testDb = (userId: string) => userDb(userId);

/** Calls the API and parses the JSON body as `T` (tests assert on its shape). */
export async function call<T = Record<string, unknown>>(key: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await api(key, method, path, body);
  return { status: res.status, body: (await res.json()) as T };
}

export type Doc = { kind: string; site: string | null; content: string; version: number; stale: boolean; updated_at: number | null };
export type Written = { document: Doc; changed: boolean; truncated: boolean };
export type Entry = { id: string; content: string; site: string | null; project_id: string | null; author: string; session_id: string | null };
export type ErrorShape = { error: { code: string; message: string; request_id: string } };

export const soul = async (key: string) => (await call<Doc>(key, "GET", "/v1/brain/soul")).body;
export const memory = async (key: string) => (await call<{ entries: Entry[]; total: number }>(key, "GET", "/v1/brain/memory?limit=100")).body;

/** Rows of brain tables for a user, read straight from D1: proves that nothing was written. */
export async function brainRows(userId: string) {
  const count = async (table: string) =>
    (await (await userD1(userId)).prepare(`SELECT count(*) AS n FROM ${table} WHERE user_id = ?`).bind(userId).first<{ n: number }>())?.n ?? 0;
  return {
    documents: await count("brain_documents"),
    versions: await count("brain_versions"),
    entries: await count("brain_entries"),
    proposals: await count("brain_proposals"),
    sites: await count("sites"),
  };
}

/** A project owned by `userId` (the projects API is not the brain's; the row is all MEMORY checks). */
export async function createProject(userId: string, id = `prj_${crypto.randomUUID().slice(0, 8)}`) {
  await (await userD1(userId)).prepare("INSERT INTO projects (id, user_id, name, created_by) VALUES (?, ?, 'Test project', 'user')").bind(id, userId).run();
  return id;
}

/** Fills MEMORY directly (fast setup for limit tests). */
export async function seedEntries(userId: string, n: number) {
  const now = Date.now();
  const d1 = await userD1(userId);
  const rows = Array.from({ length: n }, (_, i) =>
    d1
      .prepare("INSERT INTO brain_entries (id, user_id, collection, content, author, created_at) VALUES (?, ?, 'memory', ?, 'user', ?)")
      .bind(`mem_seed_${userId}_${i}`, userId, `seeded insight number ${i}`, now - n + i),
  );
  await (await userD1(userId)).batch(rows);
}

export const ofType = <T extends ChatEvent["type"]>(events: ChatEvent[], type: T) =>
  events.filter((e): e is Extract<ChatEvent, { type: T }> => e.type === type);

/** The tool_result blocks the model received in its last request. */
export function lastToolResults(request: { messages: { content: unknown }[] } | undefined) {
  const content = request?.messages.at(-1)?.content;
  return (Array.isArray(content) ? content : []) as { type: string; tool_use_id: string; content: string; is_error?: boolean }[];
}
