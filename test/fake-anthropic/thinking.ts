/**
 * Preserved thinking, as the current models check it. A thinking block's signature binds the model,
 * the account and the exact prefix before it; a block whose prefix changed (system, tools, an earlier
 * message, a block before it left out or moved) fails with the documented 400. Within the tool-use
 * turn being continued, the assistant messages must carry every thinking block the API returned, in
 * order: the fake remembers what it sent for each tool_use id.
 */
import { type ApiRequest, type Block, type Sequence, sign } from "./prefix";
import type { Rejection } from "./rules";

/** tool_use id -> signatures of the thinking blocks of the reply that made the call, in order. */
const issued = new Map<string, string[]>();

export function remember(content: Block[]): void {
  const signatures = content.filter(isThinking).map(signatureOf);
  for (const b of content) if (b.type === "tool_use") issued.set(String(b.id), signatures);
}

const isThinking = (b: Block) => b.type === "thinking" || b.type === "redacted_thinking";
const signatureOf = (b: Block) => String(b.type === "redacted_thinking" ? b.data : b.signature);

const bound = (path: string): Rejection => ({
  status: 400,
  type: "invalid_request_error",
  message: `${path}: Invalid \`signature\` in \`thinking\` block. The block is bound to a different conversation. Remove the block, or set \`thinking.block_binding.prefix_mismatch_behavior\` to "drop_block".`,
});

export function verifyThinking(req: ApiRequest, seq: Sequence, scope: string): Rejection | null {
  for (const item of seq.items) {
    if (item.message === undefined || !isThinking(item.block)) continue;
    if (req.messages[item.message]?.role !== "assistant") {
      return { status: 400, type: "invalid_request_error", message: `${item.path}: thinking blocks may only appear in assistant messages` };
    }
    if (signatureOf(item.block) !== sign(scope, item.before, item.block)) return bound(item.path);
  }
  return currentToolTurn(req);
}

/** The tool-use turn being continued: from the last user message that is not only tool results. */
function currentToolTurn(req: ApiRequest): Rejection | null {
  let start = req.messages.length - 1;
  while (start > 0) {
    const m = req.messages[start];
    const onlyResults = m?.role === "user" && typeof m.content !== "string" && m.content.length > 0 && m.content.every((b) => b.type === "tool_result");
    if (m?.role === "user" && !onlyResults) break;
    start -= 1;
  }
  for (let i = start; i < req.messages.length; i++) {
    const m = req.messages[i];
    if (m?.role !== "assistant" || typeof m.content === "string") continue;
    const call = m.content.find((b) => b.type === "tool_use");
    const expected = call ? issued.get(String(call.id)) : undefined;
    if (!expected?.length) continue;
    const sent = m.content.filter(isThinking).map(signatureOf);
    if (sent.join() !== expected.join()) {
      const first = m.content[0];
      return {
        status: 400,
        type: "invalid_request_error",
        message: `messages.${i}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${String(first?.type)}\`. When continuing a tool-use turn, the assistant message must contain every thinking block the API returned, unchanged and in order.`,
      };
    }
  }
  return null;
}
