/**
 * A capability only the test Worker has: a server tool that needs the user's approval (none of the
 * production tools does yet), one that shows what a tool sees of the turn, and one that holds the turn
 * open until it is cancelled (so a browser can press Stop mid-turn).
 */
import { z } from "zod";
import type { Capability } from "../src/core/capability";
import { defineTool } from "../src/core/tool";

export const wipeCounter = { wipes: 0 };

const wipeCache = defineTool({
  name: "wipe_cache",
  description: "Wipe the server-side cache",
  input: z.object({}),
  runs: "server",
  needsApproval: true,
  describe: () => "Wiping the cache",
  run: async () => ({ content: `wiped (${++wipeCounter.wipes})` }),
});

/** Tells the model which prompt sections (ToolContext.injected) the turn's tools see. */
const showContext = defineTool({
  name: "show_context",
  description: "Show the prompt sections this turn injected",
  input: z.object({}),
  runs: "server",
  needsApproval: false,
  describe: () => "Looking at the context",
  run: async (ctx) => {
    const calls = (ctx.turn.get("show_context") ?? 0) + 1;
    ctx.turn.set("show_context", calls);
    return { content: JSON.stringify({ sections: [...ctx.injected], calls }) };
  },
});

const holding = new Set<() => void>();

/** Ends every `filibuster` call in this isolate; the test Worker's session object calls it when a turn is cancelled. */
export function endFilibusters(): void {
  for (const end of holding) end();
  holding.clear();
}

/**
 * Keeps the turn streaming until the turn is cancelled (the client pressed Stop, or went away): nothing else
 * ends it. The offline model calls it for a message that says "filibuster".
 */
const filibuster = defineTool({
  name: "filibuster",
  description: "Keep talking until the user stops the turn",
  input: z.object({}),
  runs: "server",
  needsApproval: false,
  describe: () => "Talking until stopped",
  run: async () => {
    await new Promise<void>((resolve) => holding.add(resolve));
    return { content: "stopped by the user" };
  },
});

export const testCapability: Capability = { name: "test", tools: [wipeCache, showContext, filibuster] };
