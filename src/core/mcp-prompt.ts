import type { z } from "zod";
import type { McpCompleter, McpScope } from "./mcp-resource";
import type { McpAccess } from "./mcp-tool";

/** A message of a prompt's result: text, or a resource the server embeds whole. */
export type McpPromptMessage = { role: "user" | "assistant" } & ({ text: string } | { resource: { uri: string; mimeType: string; text: string } });

/**
 * A prompt a user picks from an MCP client's menu (a slash command): it fills the conversation with the user's
 * memory for a purpose. Its arguments are a zod object of strings: `prompts/list` shows each field (required
 * unless optional, with its description) and `prompts/get` validates the values with it.
 */
export interface McpPrompt<S extends z.ZodObject<Record<string, z.ZodType<string | undefined>>> = z.ZodObject<Record<string, z.ZodType<string | undefined>>>> {
  name: string;
  /** What the OAuth scopes that may get it name (src/oauth/scopes.ts): lessons, or the rest of the user's memory. */
  area: McpAccess["area"];
  title: string;
  description: string;
  args: S;
  messages(scope: McpScope, args: z.infer<S>): Promise<McpPromptMessage[]>;
  /** Completion of the arguments, by name. */
  complete?: Readonly<Record<string, McpCompleter>>;
}

/** Checks a prompt against its own argument schema; the result is an ordinary prompt the registry can hold. */
export const defineMcpPrompt = <S extends z.ZodObject<Record<string, z.ZodType<string | undefined>>>>(prompt: McpPrompt<S>): McpPrompt =>
  prompt as unknown as McpPrompt;
