import { env, SELF } from "cloudflare:test";
import type { ChatEvent } from "../src/core/events";
import type { Step } from "./fake-anthropic/worker";

export const BASE = "http://engram.test";

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

export async function createUser(plan: "free" | "pro" = "free") {
  const res = await api(env.ADMIN_TOKEN ?? null, "POST", "/v1/admin/users", { name: "Test User", plan });
  if (res.status !== 201) throw new Error(`createUser: ${res.status} ${await res.text()}`);
  const body = (await res.json()) as { user: { id: string }; api_key: { key: string } };
  return { id: body.user.id, key: body.api_key.key };
}

/** Queues the fake model's next responses for this user. */
export async function script(userId: string, ...steps: Step[]) {
  await env.FAKE_ANTHROPIC.fetch("http://fake/__script", { method: "POST", body: JSON.stringify({ key: userId, steps }) });
}

export type SeenRequest = {
  model: string;
  system: string;
  messages: { role: string; content: string | { type: string; [k: string]: unknown }[] }[];
  tools?: { name: string; input_schema: unknown }[];
  metadata?: { user_id?: string };
};

/** The Messages API requests the fake received for this user. */
export async function seen(userId: string): Promise<SeenRequest[]> {
  const res = await env.FAKE_ANTHROPIC.fetch(`http://fake/__requests?key=${encodeURIComponent(userId)}`);
  return (await res.json()) as SeenRequest[];
}

/** Parses an SSE body into events. */
export async function readSse(res: Response): Promise<ChatEvent[]> {
  const text = await res.text();
  return text
    .split("\n\n")
    .filter((f) => f.trim())
    .map((frame) => {
      const type = /^event: (.+)$/m.exec(frame)?.[1];
      const data = /^data: (.+)$/m.exec(frame)?.[1];
      return { type, ...(data ? JSON.parse(data) : {}) } as ChatEvent;
    });
}

export async function chat(key: string, body: Record<string, unknown>) {
  const res = await api(key, "POST", "/v1/chat", body);
  if (res.status !== 200) throw new Error(`chat: ${res.status} ${await res.text()}`);
  const events = await readSse(res);
  const sessionId = events.find((e) => e.type === "session");
  return { events, sessionId: sessionId?.type === "session" ? sessionId.id : "", text: textOf(events) };
}

export const textOf = (events: ChatEvent[]) => events.flatMap((e) => (e.type === "text" ? [e.delta] : [])).join("");

export const textReply = (text: string): Step => ({ reply: { content: [{ type: "text", text }] } });

export const toolCall = (name: string, input: unknown, id = `toolu_${crypto.randomUUID().slice(0, 8)}`, text?: string): Step => ({
  reply: { content: [...(text ? [{ type: "text" as const, text }] : []), { type: "tool_use" as const, id, name, input }] },
});
