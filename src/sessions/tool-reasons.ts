/**
 * What each tool call of a stored conversation was doing, in the words the live `tool_use` event gave it, so a
 * conversation read back shows the same lines as when it streamed (the history keeps the calls, not the words).
 */
import { toolByName } from "../core/capability";
import { describeTool, type Tool } from "../core/tool";

type Block = { type?: unknown; id?: unknown; name?: unknown; input?: unknown };

/** tool_use id -> reason, for every call in `messages` (each `{content}` a string or a list of blocks). */
export function toolReasons(tools: readonly Tool[], messages: readonly { content: unknown }[]): Record<string, string> {
  const reasons: Record<string, string> = {};
  for (const m of messages) {
    if (!Array.isArray(m.content)) continue;
    for (const b of m.content as Block[]) {
      if (b?.type !== "tool_use" || typeof b.id !== "string" || typeof b.name !== "string") continue;
      const tool = toolByName(tools, b.name);
      // A client's tool has no description here: the words the bridge gives it live.
      reasons[b.id] = tool ? describeTool(tool, b.input) : `Using ${b.name}`;
    }
  }
  return reasons;
}
