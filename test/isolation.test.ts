/**
 * Tenant isolation, generated from the route table (/openapi.json): user B calls every route that takes
 * an id with each of user A's ids (sessions, facts, connections, sites, memory entries, keys, the
 * user id), and every listing. Nothing of A's is returned, named in an error, or changed.
 */
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { type Operation, operations, userFingerprint, valueFor } from "./fuzz-helpers";
import { api, chat, createUser, script, textReply } from "./helpers";

const SECRET = "zebracodeword";
type User = { id: string; key: string };
let a: User;
let b: User;
let aIds: string[];
let ops: Operation[];

/** Bodies that pass validation on the routes that take one, so the request reaches the ownership check. */
const VALID: Record<string, unknown> = {
  "PATCH /v1/connections/{id}": { name: "renamed" },
  "PATCH /v1/sites/{site}": { name: "renamed" },
  "PUT /v1/sites/{site}/sync": { status: "ok" },
  "POST /v1/sessions/{id}/tool_result": { call_id: "toolu_x", content: "x" },
  "POST /v1/brain/proposals/{id}/approve": {},
  "POST /v1/brain/proposals/{id}/reject": {},
};

const json = async (res: Response) => (await res.json()) as Record<string, unknown>;

beforeAll(async () => {
  a = await createUser("pro");
  b = await createUser("pro");
  await script(a.id, textReply(`noted ${SECRET}`));
  const session = await chat(a.key, { message: `remember ${SECRET}` });
  const fact = await json(await api(a.key, "POST", "/v1/memory/facts", { facts: [{ text: `Ana's ${SECRET} is blue` }] }));
  const conn = await json(await api(a.key, "POST", "/v1/connections", { name: `Jira ${SECRET}` }));
  await api(a.key, "PUT", "/v1/sites/shop-a/sync", { name: `Shop ${SECRET}`, status: "ok" });
  await api(a.key, "PUT", "/v1/brain/soul", { content: `Ana ${SECRET}` });
  const entry = await json(await api(a.key, "POST", "/v1/brain/memory", { content: `likes ${SECRET}` }));
  const key = await json(await api(a.key, "POST", "/v1/keys", { name: "second" }));
  const idsIn = (v: unknown): string[] =>
    JSON.stringify(v ?? null)
      .match(/"id":"([^"]+)"/g)
      ?.map((m) => m.slice(6, -1)) ?? [];
  aIds = [session.sessionId, ...idsIn(fact), String(conn.id), "shop-a", ...idsIn(entry), String(key.id), a.id].filter((id) => id && id !== "undefined");
  ops = await operations();
});

describe("another user's ids, keys and sessions", () => {
  it("A has one of each kind of object to attack", () => {
    expect(aIds.length).toBeGreaterThanOrEqual(7);
  });

  it("no listing or read without an id shows B anything of A's", async () => {
    for (const op of ops.filter((o) => o.method === "get" && !o.path.includes("{") && !o.path.startsWith("/v1/admin/") && o.path.startsWith("/v1/"))) {
      const res = await api(b.key, "GET", op.path);
      const text = await res.text();
      expect(text, op.path).not.toContain(SECRET);
      for (const id of aIds) if (id !== "shop-a") expect(text, `${op.path} shows ${id}`).not.toContain(id);
    }
  });

  it("every id-taking route refuses B with 404/403 (or 400 for a body it cannot validate), leaks nothing and changes nothing of A's", async () => {
    const before = await userFingerprint(a.id);
    const withIds = ops.filter((op) => op.path.includes("{") && !op.path.startsWith("/v1/admin/"));
    expect(withIds.length).toBeGreaterThan(10);
    for (const op of withIds) {
      const route = `${op.method.toUpperCase()} ${op.path}`;
      const body = op.body ? (VALID[route] ?? fc.sample(valueFor(op.doc, op.body), { seed: 7, numRuns: 1 })[0]) : undefined;
      for (const id of aIds) {
        const path = op.path.replace(/\{\w+\}/g, encodeURIComponent(id));
        const res = await api(b.key, op.method.toUpperCase(), path, body);
        const text = await res.text();
        const label = `${route} with ${id}: ${res.status} ${text.slice(0, 200)}`;
        expect(text, label).not.toContain(SECRET);
        for (const other of aIds) if (other !== id && other !== "shop-a") expect(text, label).not.toContain(other);
        // Sites are named by their owner: B addressing any site name addresses B's own namespace.
        if (res.ok) expect(path.startsWith("/v1/sites/"), label).toBe(true);
        else expect([400, 403, 404, 409, 415], label).toContain(res.status);
        if (res.status === 409) expect(route, label).not.toMatch(/sessions|keys/);
      }
    }
    expect(await userFingerprint(a.id)).toBe(before);
    // A's data is all still there.
    expect((await api(a.key, "GET", `/v1/sessions/${aIds[0]}`)).status).toBe(200);
  });

  it("A's key revoked by B is a 404 and A's key keeps working; a key is one user's only", async () => {
    const keys = (await json(await api(a.key, "GET", "/v1/keys"))).keys as { id: string }[];
    for (const k of keys) expect((await api(b.key, "DELETE", `/v1/keys/${k.id}`)).status).toBe(404);
    expect((await api(a.key, "GET", "/v1/keys")).status).toBe(200);
  });
});
