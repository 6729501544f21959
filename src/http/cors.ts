/**
 * CORS for browser clients on other origins, from the CORS_ORIGINS allow-list (none unless configured).
 * A preflight (`OPTIONS` with `Origin` and `Access-Control-Request-Method`) is answered here, before
 * authentication: browsers send it without the `Authorization` header, so it could never pass auth.
 * Credentials policy: engram authenticates with a bearer header and sets no cookies, so it never sends
 * `Access-Control-Allow-Credentials`; a browser fetch with `credentials: "include"` is refused by design.
 */
import { createMiddleware } from "hono/factory";
import { AppError } from "../lib/errors";
import type { AppEnv } from "./context";

const METHODS = "GET, HEAD, POST, PUT, PATCH, DELETE";

/** Request headers a client may send: auth, JSON bodies, its own request id, stream resumption, the CLI label, MCP's session headers. */
const ALLOWED_HEADERS = "authorization, content-type, x-request-id, last-event-id, x-engram-client, mcp-session-id, mcp-protocol-version";

/**
 * Response headers a client reads beyond the CORS-safelisted ones: when to retry (429, 409 busy), the request
 * id to quote, the methods of a 405, the auth challenge of /mcp, and MCP's session id.
 */
export const EXPOSED_HEADERS = ["retry-after", "x-request-id", "allow", "www-authenticate", "mcp-session-id"] as const;

/** How long a browser may reuse a preflight's answer, in seconds (Chromium caps it at 7200). */
const PREFLIGHT_MAX_AGE = 600;

export const cors = createMiddleware<AppEnv>(async (c, next) => {
  const origin = c.req.header("origin");
  const allowed = origin !== undefined && c.var.config.corsOrigins.has(origin);
  const preflight = c.req.method === "OPTIONS" && origin !== undefined && c.req.header("access-control-request-method") !== undefined;
  if (preflight) {
    if (!allowed) throw new AppError("forbidden", `origin ${origin} is not allowed to call this API (CORS_ORIGINS)`);
    c.header("access-control-allow-origin", origin);
    c.header("access-control-allow-methods", METHODS);
    c.header("access-control-allow-headers", ALLOWED_HEADERS);
    c.header("access-control-max-age", String(PREFLIGHT_MAX_AGE));
    c.header("vary", "Origin");
    return c.body(null, 204);
  }
  await next();
  // The answer differs by Origin whenever an allow-list is set: shared caches must key on it.
  if (c.var.config.corsOrigins.size > 0) c.res.headers.append("vary", "Origin");
  if (allowed) {
    c.res.headers.set("access-control-allow-origin", origin);
    c.res.headers.set("access-control-expose-headers", EXPOSED_HEADERS.join(", "));
  }
});
