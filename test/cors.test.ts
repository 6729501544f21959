/**
 * CORS: preflights answered before auth for the allow-listed origins (wrangler.toml's local CORS_ORIGINS), refused
 * for others; actual responses, errors included, readable by the allowed page with the headers a client needs.
 */
import { env, SELF } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/config";
import { EXPOSED_HEADERS } from "../src/http/cors";
import { api, BASE, createUser } from "./helpers";

const ALLOWED = "http://localhost:8787";
const OTHER = "https://evil.example";

const preflight = (origin: string, path = "/v1/sessions", method = "POST", headers = "authorization, content-type") =>
  SELF.fetch(`${BASE}${path}`, {
    method: "OPTIONS",
    headers: { origin, "access-control-request-method": method, "access-control-request-headers": headers },
  });

let key: string;
beforeAll(async () => {
  ({ key } = await createUser());
});

describe("CORS", () => {
  it("is configured with the local dev server's origins in the test configuration", () => {
    expect([...loadConfig(env).corsOrigins]).toEqual(["http://localhost:8787", "http://127.0.0.1:8787"]);
  });

  it("answers an allowed origin's preflight without credentials, before auth", async () => {
    const res = await preflight(ALLOWED, "/v1/chat");
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe(ALLOWED);
    expect(res.headers.get("access-control-allow-methods")).toContain("POST");
    const allowHeaders = res.headers.get("access-control-allow-headers")?.split(/,\s*/) ?? [];
    expect(allowHeaders).toEqual(expect.arrayContaining(["authorization", "content-type", "last-event-id", "x-request-id"]));
    expect(res.headers.get("access-control-max-age")).toBe("600");
    expect(res.headers.get("vary")).toContain("Origin");
    // Bearer keys, no cookies: credentials are never allowed.
    expect(res.headers.get("access-control-allow-credentials")).toBeNull();
    // Admin and MCP paths are preflighted the same way.
    expect((await preflight(ALLOWED, "/v1/admin/users")).status).toBe(204);
    expect((await preflight(ALLOWED, "/mcp")).status).toBe(204);
  });

  it("refuses another origin's preflight with no CORS headers", async () => {
    const res = await preflight(OTHER);
    expect(res.status).toBe(403);
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("forbidden");
    expect(body.error.message).toContain(OTHER);
    // A look-alike of an allowed origin is another origin.
    expect((await preflight("http://localhost:8788")).status).toBe(403);
    expect((await preflight("http://localhost:8787.evil.example")).status).toBe(403);
  });

  it("lets the allowed page read responses and the headers it needs", async () => {
    const res = await api(key, "GET", "/v1/sessions", undefined, { origin: ALLOWED, "x-request-id": "cors-read-1" });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe(ALLOWED);
    expect(res.headers.get("access-control-expose-headers")?.split(", ")).toEqual([...EXPOSED_HEADERS]);
    expect(res.headers.get("x-request-id")).toBe("cors-read-1");
    expect(res.headers.get("vary")).toContain("Origin");
  });

  it("makes errors readable too: a 401, and a 405 with its Allow header", async () => {
    const denied = await api("not-a-key", "GET", "/v1/sessions", undefined, { origin: ALLOWED });
    expect(denied.status).toBe(401);
    expect(denied.headers.get("access-control-allow-origin")).toBe(ALLOWED);
    const wrongMethod = await api(key, "PUT", "/v1/sessions", {}, { origin: ALLOWED });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get("access-control-allow-origin")).toBe(ALLOWED);
    expect(wrongMethod.headers.get("access-control-expose-headers")).toContain("allow");
  });

  it("gives another origin's actual request no CORS headers (the browser hides the answer)", async () => {
    const res = await api(key, "GET", "/v1/sessions", undefined, { origin: OTHER });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
    expect(res.headers.get("access-control-expose-headers")).toBeNull();
  });

  it("leaves a request without Origin (curl, servers) as it was", async () => {
    const res = await api(key, "GET", "/v1/sessions");
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
    // An OPTIONS that is not a preflight is no way around auth.
    expect((await SELF.fetch(`${BASE}/v1/sessions`, { method: "OPTIONS" })).status).toBe(401);
  });

  it("streams a chat turn to the allowed origin with its headers", async () => {
    const res = await api(key, "POST", "/v1/chat", { message: "hello" }, { origin: ALLOWED });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    expect(res.headers.get("access-control-allow-origin")).toBe(ALLOWED);
    await res.text();
  });
});
