import type { TurnScope } from "./context";
import type { McpAccess } from "./mcp-tool";

/** Who an MCP read is for: one authenticated user. Every read a resource or prompt makes is scoped by `userId`. */
export type McpScope = Pick<TurnScope, "db" | "env" | "config" | "userId" | "plan"> & {
  /** Work the answer need not wait for (a recall log write); absent: the reader awaits it itself. */
  defer?: (work: () => Promise<unknown>) => void;
};

/**
 * Suggestions for the value of a prompt argument or a URI template variable, from the user's own data (their sites,
 * their projects), for a client's autocomplete; `completion/complete` keeps those starting with what was typed.
 */
export type McpCompleter = (scope: McpScope) => Promise<string[]>;

/** One concrete resource of the user, as `resources/list` shows it. */
export type McpResourceEntry = { uri: string; name: string; title: string; description?: string };

/**
 * A kind of resource a capability serves at `/mcp`: one URI (`engram://brain/soul`) or a family under an RFC 6570
 * template (`engram://sites/{site}/bible`, offered by `resources/templates/list`). Its text reaches the client's
 * model, so `read` returns it escaped as every prompt text is (lib/prompt-text.ts).
 */
export interface McpResource {
  uriTemplate: string;
  /** What the OAuth scopes that may read it name (src/oauth/scopes.ts): lessons, or the rest of the user's memory. */
  area: McpAccess["area"];
  /** The kind's name and what it holds, for a client's resource picker. */
  name: string;
  title: string;
  description: string;
  mimeType: "text/plain" | "text/markdown";
  /** The user's resources of this kind that exist now (a template's family: one entry per site...). */
  list(scope: McpScope): Promise<McpResourceEntry[]>;
  /** The text of one, from the variables of its URI; null when the user has none (the client gets "not found"). */
  read(scope: McpScope, vars: Readonly<Record<string, string>>): Promise<string | null>;
  /** Completion of the template's variables, by name. */
  complete?: Readonly<Record<string, McpCompleter>>;
}
