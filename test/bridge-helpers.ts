import { env } from "cloudflare:test";
import { expect } from "vitest";
import type { ChatEvent, ToolPendingEnvelope } from "../src/core/events";
import { api } from "./helpers";

export type Block = { type: string; [k: string]: unknown };
export type SessionState = {
  session: { id: string; pending: boolean; message_count: number };
  messages: { role: string; content: Block[] }[];
  pending: (ToolPendingEnvelope & { messages: { role: string; content: Block[] }[]; answered: { tool_use_id: string; is_error: boolean }[] }) | null;
};

/** A client tool as a web client would declare it. */
export const lookupOrder = {
  name: "lookup_order",
  description: "Look up an order in the shop's local database",
  input_schema: { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
};

export const deleteFile = {
  name: "delete_file",
  description: "Delete a file on the user's machine",
  input_schema: { type: "object", properties: { path: { type: "string" } } },
  needs_approval: true,
};

export async function chatTurn(key: string, body: Record<string, unknown>) {
  const res = await api(key, "POST", "/v1/chat", body);
  expect(res.status, await res.clone().text()).toBe(200);
  return sseTurn(res);
}

export async function resume(key: string, sessionId: string, body: Record<string, unknown>) {
  const res = await api(key, "POST", `/v1/sessions/${sessionId}/tool_result`, body);
  expect(res.status, await res.clone().text()).toBe(200);
  return sseTurn(res);
}

async function sseTurn(res: Response) {
  expect(res.headers.get("content-type")).toContain("text/event-stream");
  const events = parseSse(await res.text());
  const session = events.find((e) => e.type === "session");
  return { events, sessionId: session?.type === "session" ? session.id : "", end: events.at(-1), pending: pendingOf(events) };
}

/** SSE frames split on LF only, as the SSE spec does: U+2028 inside a JSON payload is not a line break. */
export function parseSse(text: string): ChatEvent[] {
  return text
    .split("\n\n")
    .filter((f) => f.trim())
    .map((frame) => {
      const lines = frame.split("\n");
      const type = lines.find((l) => l.startsWith("event: "))?.slice(7);
      const data = lines.find((l) => l.startsWith("data: "))?.slice(6);
      return { type, ...(data ? JSON.parse(data) : {}) } as ChatEvent;
    });
}

/** The tool_pending envelope ending a stream (without the SSE event name), or null. */
export function pendingOf(events: ChatEvent[]): ToolPendingEnvelope | null {
  const end = events.at(-1);
  if (end?.type !== "tool_pending") return null;
  const { type: _t, ...envelope } = end;
  return envelope;
}

export async function state(key: string, sessionId: string): Promise<SessionState> {
  const res = await api(key, "GET", `/v1/sessions/${sessionId}`);
  expect(res.status).toBe(200);
  return (await res.json()) as SessionState;
}

export async function errorOf(res: Response) {
  return { status: res.status, ...((await res.json()) as { error: { code: string; message: string } }).error };
}

export const sessionStub = (userId: string, sessionId: string) => env.SESSIONS.get(env.SESSIONS.idFromName(`${userId}/${sessionId}`));

/** Every tool_use in history is answered by a tool_result in the next message. */
export function expectWholeHistory(messages: SessionState["messages"]) {
  messages.forEach((m, i) => {
    const uses = m.content.filter((b) => b.type === "tool_use").map((b) => b.id);
    if (uses.length === 0) return;
    const answered = (messages[i + 1]?.content ?? []).filter((b) => b.type === "tool_result").map((b) => b.tool_use_id);
    expect(answered).toEqual(expect.arrayContaining(uses));
  });
}
