/**
 * "What do you remember about me": the prompt that puts everything engram keeps about the user as documents (every
 * resource the capabilities serve: SOUL, working memory, MEMORY notes, each site's BIBLE...) into the conversation
 * and asks the model to say it back in plain words, so the user can see it and correct it. The core builds it from
 * the registry's resources: it names no capability.
 */
import { z } from "zod";
import { defineMcpPrompt, type McpPrompt, type McpPromptMessage } from "../core/mcp-prompt";
import type { McpResource } from "../core/mcp-resource";
import { readResource } from "./resources";

/** Documents one prompt embeds at most (a user with many sites has a BIBLE and a HEARTBEAT for each). */
const EMBEDDED = 20;

export function rememberPrompt(resources: readonly McpResource[]): McpPrompt {
  return defineMcpPrompt({
    name: "what_you_remember",
    area: "memory",
    title: "What do you remember about me?",
    description: "Everything engram keeps about you (your SOUL, working memory, notes and site rules), said back in plain words.",
    args: z.object({}),
    messages: async (scope) => {
      const listed = (await Promise.all(resources.map((r) => r.list(scope)))).flat().slice(0, EMBEDDED);
      const read = await Promise.all(listed.map((entry) => readResource(resources, scope, entry.uri)));
      const documents: McpPromptMessage[] = read.flatMap((r) => (r?.text ? [{ role: "user" as const, resource: r }] : []));
      if (!documents.length) return [{ role: "user", text: "engram holds nothing about me yet. Say so, and tell me how it learns (from our conversations)." }];
      return [
        { role: "user", text: "Here is what engram, my memory service, keeps about me:" },
        ...documents,
        {
          role: "user",
          text:
            "Tell me in plain words what you know about me from these documents, grouped by topic. Point out anything " +
            "that looks outdated or contradictory, and ask me to correct what is wrong.",
        },
      ];
    },
  });
}
