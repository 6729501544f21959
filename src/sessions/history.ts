import type { MessageParam } from "../chat/loop";

export type StoredMessage = { seq: number; role: "user" | "assistant"; content: MessageParam["content"]; created_at: number };

const asBlocks = (content: MessageParam["content"]) =>
  typeof content === "string" ? [{ type: "text" as const, text: content }] : content;

/**
 * Stored history -> Messages API messages. Consecutive messages of one role are merged (a turn that
 * stopped after tool results, or a cancelled or expired tool call, followed by a new user message; the
 * two halves of a paused web-search turn), with tool_result blocks kept first as the API requires.
 */
export function toModelMessages(rows: readonly StoredMessage[]): MessageParam[] {
  const out: MessageParam[] = [];
  for (const row of rows) {
    const prev = out.at(-1);
    if (prev && prev.role === row.role) {
      const blocks = [...asBlocks(prev.content), ...asBlocks(row.content)];
      blocks.sort((a, b) => Number(b.type === "tool_result") - Number(a.type === "tool_result"));
      out[out.length - 1] = { role: row.role, content: blocks } as MessageParam;
    } else {
      out.push({ role: row.role, content: row.content } as MessageParam);
    }
  }
  return out;
}

/** Short follow-ups ("and the other one?") say little on their own: seed retrieval with the last reply too. */
export function followUpQuery(message: string, lastReply: StoredMessage | undefined): string {
  if (message.length >= 50 || !lastReply) return message;
  const text = asBlocks(lastReply.content)
    .flatMap((b) => (b.type === "text" ? [b.text] : []))
    .join(" ");
  return `${message}\n${text.slice(0, 500)}`;
}
