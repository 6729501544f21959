import { z } from "zod";
import { defineTool } from "../core/tool";

export const currentTime = defineTool({
  name: "current_time",
  description: "Get the current date and time (UTC, ISO 8601). Use when the user asks about today's date or the time.",
  input: z.object({}),
  runs: "server",
  needsApproval: false,
  describe: () => "Checking the current time",
  run: async () => ({ content: new Date().toISOString() }),
});
