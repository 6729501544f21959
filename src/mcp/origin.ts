/**
 * DNS-rebinding protection for `/mcp`, as the Streamable HTTP transport requires: a page on a foreign site that
 * points its own host name at a local engram (`wrangler dev` on 127.0.0.1) makes the browser call /mcp as that
 * site, so the browser's `Origin` (sent on every POST) names the attacker's site. Checked before anything else:
 * - `Origin`, when present, must be a loopback origin (a tool the user runs locally, such as the MCP Inspector) or
 *   listed in MCP_ALLOWED_ORIGINS; absent, the caller is not a browser (Claude Code, an SDK client, a connector's
 *   backend) and nothing is checked. A foreign Origin gets 403, whatever the credential.
 * - `Host`, when MCP_ALLOWED_HOSTS is set, must name one of those hosts (the local configuration lists the
 *   loopback names). Unset (production): Cloudflare routes only this deployment's host names to the Worker.
 */
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../http/context";

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);

function originAllowed(origin: string, allowed: readonly string[]): boolean {
  if (allowed.includes(origin)) return true;
  if (!URL.canParse(origin)) return false; // "null" (a sandboxed frame, a privacy-stripped origin) included
  const url = new URL(origin);
  return (url.protocol === "http:" || url.protocol === "https:") && LOOPBACK.has(url.hostname) && url.origin === origin;
}

/** The host name of a Host header value (`engram.example.com:443` -> `engram.example.com`, `[::1]:8787` -> `[::1]`). */
const hostName = (host: string) => (URL.canParse(`http://${host}`) ? new URL(`http://${host}`).hostname : null);

/** 403 with a JSON-RPC error that has no id, as the transport specification allows. */
const forbidden = (message: string) => Response.json({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }, { status: 403 });

export const guardMcpOrigin: MiddlewareHandler<AppEnv> = async (c, next) => {
  const { mcpAllowedOrigins, mcpAllowedHosts } = c.var.config;
  const origin = c.req.header("origin");
  if (origin !== undefined && !originAllowed(origin, mcpAllowedOrigins))
    return forbidden("Forbidden: this Origin may not call engram's MCP server (MCP_ALLOWED_ORIGINS lists the allowed ones)");
  if (mcpAllowedHosts.length) {
    const name = hostName(c.req.header("host") ?? new URL(c.req.url).host);
    if (!name || !mcpAllowedHosts.includes(name)) return forbidden("Forbidden: engram's MCP server does not answer for this Host (MCP_ALLOWED_HOSTS)");
  }
  await next();
};
