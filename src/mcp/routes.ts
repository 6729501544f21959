/**
 * `/mcp`: MCP Streamable HTTP, stateless (a new server and transport per request; nothing is kept between
 * requests, which suits Workers). Authenticated like the API: `Authorization: Bearer <the user's API key>`,
 * and every tool runs scoped to that user. Replies are JSON (no server-initiated streams), so GET has nothing
 * to serve (405, as the transport specification allows).
 */
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { Hono } from "hono";
import { requireUser } from "../auth/middleware";
import type { Registry } from "../core/capability";
import { afterResponse } from "../http/after-response";
import type { AppEnv } from "../http/context";
import { rateLimitUser } from "../http/rate-limit";
import { AppError } from "../lib/errors";
import { createMcpServer } from "./server";

export function mcpRoutes(registry: Registry) {
  const app = new Hono<AppEnv>();
  app.use("/mcp", async (c, next) => {
    // RFC 9728-style hint for MCP clients: the credential is a bearer API key.
    c.header("WWW-Authenticate", 'Bearer realm="engram"');
    return requireUser(c, async () => {
      await rateLimitUser(c, next);
    });
  });
  app.post("/mcp", async (c) => {
    const user = c.var.user;
    const server = createMcpServer(registry.mcpTools, {
      db: c.var.db,
      env: c.env,
      config: c.var.config,
      userId: user.id,
      plan: user.plan,
      defer: afterResponse(c),
    });
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    try {
      return await transport.handleRequest(c.req.raw);
    } finally {
      await server.close();
    }
  });
  app.on(["GET", "DELETE"], "/mcp", () => {
    throw new AppError("method_not_allowed", "this MCP server is stateless: POST JSON-RPC messages to /mcp");
  });
  return app;
}
