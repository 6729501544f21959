/**
 * `/mcp`: MCP Streamable HTTP, stateless (a new server and transport per request; nothing is kept between
 * requests, which suits Workers). Authenticated by a bearer API key, or an OAuth token limited to the tools
 * its scopes allow (src/oauth/); every tool runs scoped to that user. Replies are JSON (no server-initiated
 * streams), so GET has nothing to serve (405, as the transport specification allows).
 */
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { Hono } from "hono";
import type { Registry } from "../core/capability";
import { afterResponse } from "../http/after-response";
import type { AppEnv } from "../http/context";
import { AppError } from "../lib/errors";
import { authenticateMcp, grantedScopes } from "../oauth/mcp-auth";
import { allows, toolsFor } from "../oauth/scopes";
import { guardMcpOrigin } from "./origin";
import { createMcpServer } from "./server";

export function mcpRoutes(registry: Registry) {
  const app = new Hono<AppEnv>();
  // Origin and Host first: a request a browser was tricked into sending is refused before any credential is read.
  app.use("/mcp", guardMcpOrigin);
  app.use("/mcp", authenticateMcp);
  app.post("/mcp", async (c) => {
    // One JSON-RPC message a request, as MCP 2025-06-18 requires: the SDK still runs a batch array (up to 100
    // messages), which would let one request, charged once by the rate limit, run a hundred tool calls.
    let body: unknown;
    try {
      body = JSON.parse(await c.req.text());
    } catch {
      return jsonRpcError(-32700, "Parse error: the body is not JSON");
    }
    if (Array.isArray(body)) return jsonRpcError(-32600, "Invalid Request: JSON-RPC batches are not supported; send one message per POST");
    const user = c.var.user;
    // What the credential allows: a tool, resource or prompt it does not reach is not listed, and answers as unknown.
    const granted = grantedScopes(c);
    const reads = (area: "memory" | "lessons") => allows(granted, { writes: false, area });
    const server = createMcpServer(
      toolsFor(registry.mcpTools, granted),
      { db: c.var.db, env: c.env, config: c.var.config, userId: user.id, plan: user.plan, defer: afterResponse(c) },
      { resources: registry.mcpResources.filter((r) => reads(r.area)), prompts: registry.mcpPrompts.filter((p) => reads(p.area)) },
    );
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    try {
      return await transport.handleRequest(c.req.raw, { parsedBody: body });
    } finally {
      await server.close();
    }
  });
  // Every other method (GET, DELETE, PUT...): registered after POST, so only what POST did not take lands here.
  app.all("/mcp", (c) => {
    c.header("allow", "POST");
    throw new AppError("method_not_allowed", "this MCP server is stateless: POST JSON-RPC messages to /mcp");
  });
  return app;
}

/** A JSON-RPC error answered before any message runs (`id: null`: the request's id is unknown). */
const jsonRpcError = (code: number, message: string) => Response.json({ jsonrpc: "2.0", error: { code, message }, id: null }, { status: 400 });
