import { describe, expect, it } from "vitest";
import { api, BASE, createUser } from "./helpers";

describe("health and API description", () => {
  it("reports the database and the model", async () => {
    const res = await api(null, "GET", "/healthz");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true, db: true, model: "anthropic", vectors: "local" });
    expect(res.headers.get("x-request-id")).toBeTruthy();
  });

  it("serves an OpenAPI 3.1 document generated from the routes", async () => {
    const res = await api(null, "GET", "/openapi.json");
    const doc = (await res.json()) as { openapi: string; paths: Record<string, unknown>; components: { schemas: Record<string, unknown> } };
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(["/v1/chat", "/v1/admin/users", "/v1/sessions/{id}", "/healthz"]));
    expect(doc.components.schemas).toHaveProperty("ChatRequest");
  });

  it("names every operation for SDK generation and states who may call it", async () => {
    type Operation = { operationId?: string; security?: Record<string, string[]>[] };
    const res = await api(null, "GET", "/openapi.json");
    const doc = (await res.json()) as { servers: { url: string }[]; paths: Record<string, Record<string, Operation>> };
    const operations = Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ at: `${method} ${path}`, ...op })));
    expect(operations.length).toBeGreaterThan(50);
    expect(operations.filter((op) => !op.operationId).map((op) => op.at)).toEqual([]);
    const ids = operations.map((op) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(expect.arrayContaining(["chat", "resumeTurn", "getSoul", "putBible", "searchFacts", "createUser"]));
    // Only the health probe is open; everything else names the bearer scheme.
    expect(operations.filter((op) => !op.security || op.security.length === 0).map((op) => op.at)).toEqual(["get /healthz"]);
    expect(doc.servers).toEqual([expect.objectContaining({ url: new URL(BASE).origin })]);
  });

  it("answers unknown paths with the error shape", async () => {
    const res = await api(null, "GET", "/nope", undefined, { "x-request-id": "abc-123" });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: { code: "not_found", message: "no route for GET /nope", request_id: "abc-123" } });
  });

  it("answers a path that exists under other methods with 405 and the methods it takes", async () => {
    const u = await createUser();
    const cases: [string, string, string][] = [
      ["PUT", "/v1/sessions", "GET, HEAD"],
      ["POST", "/v1/sessions/ses_x", "GET, PATCH, DELETE, HEAD"],
      ["GET", "/v1/sessions/ses_x/tool_result", "POST"],
      ["DELETE", "/v1/brain/soul", "GET, PUT, HEAD"],
      ["GET", "/v1/chat", "POST"],
      ["POST", "/openapi.json", "GET, HEAD"],
    ];
    for (const [method, path, allow] of cases) {
      const res = await api(u.key, method, path);
      expect(res.status, `${method} ${path}`).toBe(405);
      expect(res.headers.get("allow")?.split(", ").sort()).toEqual(allow.split(", ").sort());
      expect(await res.json()).toMatchObject({ error: { code: "method_not_allowed", message: expect.stringContaining(path) } });
    }
    // Paths that exist under no method stay 404, and auth still comes first.
    expect((await api(u.key, "GET", "/v1/sessions/ses_x/nope")).status).toBe(404);
    expect((await api(u.key, "PUT", "/v1/sessions/")).status).toBe(404);
    expect((await api(null, "PUT", "/v1/sessions")).status).toBe(401);
    // The MCP endpoint is stateless: no stream to GET, no session to DELETE.
    for (const method of ["GET", "DELETE", "PUT", "PATCH"]) {
      const res = await api(u.key, method, "/mcp");
      expect(res.status).toBe(405);
      expect(res.headers.get("allow")).toBe("POST");
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("method_not_allowed");
    }
  });
});
