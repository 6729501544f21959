/**
 * The contract: the served /openapi.json is the one the typed client was generated from (client/openapi.json),
 * its patterns are ECMAScript without flags, every operation declares the statuses the shared middleware gives,
 * and the response checker every workerd test runs through (test/contract/) catches a response that drifts.
 */
import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import saved from "../client/openapi.json";
import { type OpenApiDoc, ResponseChecker } from "./contract/response-check";
import { api, BASE, createUser, newSession } from "./helpers";

type Doc = OpenApiDoc & { servers?: unknown; paths: Record<string, Record<string, { responses: Record<string, unknown>; requestBody?: unknown }>> };

const served = async (): Promise<Doc> => (await (await SELF.fetch(`${BASE}/openapi.json`)).json()) as Doc;

/** Every value of `key` anywhere in `value`. */
function collect(value: unknown, key: string, out: unknown[] = []): unknown[] {
  if (Array.isArray(value)) for (const v of value) collect(v, key, out);
  else if (value && typeof value === "object")
    for (const [k, v] of Object.entries(value)) {
      if (k === key) out.push(v);
      collect(v, key, out);
    }
  return out;
}

describe("the OpenAPI document", () => {
  it("is the one the typed client was generated from (else run `npm run client:generate`)", async () => {
    const { servers, ...doc } = await served();
    expect(servers).toEqual([{ url: BASE, description: expect.any(String) }]);
    expect(doc, "client/openapi.json is stale: run `npm run client:generate`").toEqual(saved);
  });

  it("writes every pattern as ECMAScript without flags", async () => {
    const patterns = collect(await served(), "pattern") as string[];
    expect(patterns.length).toBeGreaterThan(10);
    for (const p of patterns) {
      expect(() => new RegExp(p), p).not.toThrow();
      expect(() => new RegExp(p, "u"), p).not.toThrow();
      expect(p, "a flag suffix or a \\p escape needs the u flag").not.toMatch(/\/[dgimsuvy]+$|\\p\{/);
    }
    // Project names in any script are accepted by the pattern a client validates with.
    const doc = await served();
    const name = collect(doc.components.schemas.NewProject, "pattern")[0] as string;
    expect(new RegExp(name).test("Küchenumbau 家")).toBe(true);
    expect(new RegExp(name).test("a\u200bb")).toBe(false);
  });

  it("declares on every operation what the shared middleware can answer", async () => {
    const doc = await served();
    for (const [path, item] of Object.entries(doc.paths))
      for (const [method, op] of Object.entries(item)) {
        const statuses = Object.keys(op.responses);
        expect(statuses, `${method} ${path}`).toContain("500");
        if (path.startsWith("/v1/")) expect(statuses, `${method} ${path}`).toEqual(expect.arrayContaining(["401", "429"]));
        if (["post", "put", "patch"].includes(method)) expect(statuses, `${method} ${path}`).toEqual(expect.arrayContaining(["400", "413", "415"]));
      }
    expect(Object.keys(doc.paths["/v1/chat"]?.post?.responses ?? {})).toEqual(expect.arrayContaining(["409", "413", "503"]));
  });

  it("says a session without a pending call has pending null, and answers so", async () => {
    const { id, key } = await createUser();
    const sessionId = await newSession(id);
    const res = await api(key, "GET", `/v1/sessions/${sessionId}`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { pending: unknown }).pending).toBeNull();
    const schema = (await served()).paths["/v1/sessions/{id}"]?.get?.responses["200"];
    expect(collect(schema, "pending")[0]).toEqual({ anyOf: [{ $ref: "#/components/schemas/PendingTurn" }, { type: "null" }] });
  });
});

describe("the response checker", () => {
  it("catches an undeclared status, an undeclared type, a body off the schema, and a stray path", async () => {
    const checker = new ResponseChecker(await served());
    const error = { error: { code: "not_found", message: "no", request_id: "r" } };
    expect(checker.check("GET", "/v1/sessions", 200, "application/json", { sessions: [], next_before: null })).toBeNull();
    expect(checker.check("GET", "/v1/sessions/x", 418, "application/json", error)).toMatch(/status 418 is not declared/);
    expect(checker.check("GET", "/v1/sessions", 200, "text/html", undefined)).toMatch(/content type text\/html is not declared/);
    expect(checker.check("GET", "/v1/sessions", 200, "application/json", { sessions: [{ id: 1 }], next_before: null })).toMatch(/\/sessions\/0/);
    expect(checker.check("GET", "/v1/sessions/x", 200, "application/json", { session: {}, messages: [], summary: null })).toMatch(/pending/);
    expect(checker.check("GET", "/nowhere", 404, "application/json", error)).toBeNull();
    expect(checker.check("GET", "/nowhere", 404, "application/json", { oops: true })).toMatch(/not the Error shape/);
    // Literal paths win over templates: /v1/lessons/stats is not /v1/lessons/{id}.
    expect(checker.check("GET", "/v1/lessons/stats", 200, "application/json", { lesson: {} })).toMatch(/body does not match/);
  });
});
