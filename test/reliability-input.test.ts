/**
 * Bad and hostile input: a clear 4xx in the error shape and nothing written. Invisible characters are
 * stripped from text that later reaches a prompt.
 */
import { env, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH } from "../src/lib/json-guard";
import { api, BASE, createUser, history, saidIn, script, textReply } from "./helpers";
import { userD1 } from "./shard-helpers";

/** API keys are counted in the directory, every other table on the user's shard. */
const count = async (table: string, userId: string) =>
  (
    await (table === "api_keys" ? env.DB : await userD1(userId))
      .prepare(`SELECT count(*) AS n FROM ${table} WHERE user_id = ?`)
      .bind(userId)
      .first<{ n: number }>()
  )?.n ?? 0;
const totalUsers = async () => (await env.DB.prepare("SELECT count(*) AS n FROM users").first<{ n: number }>())?.n ?? 0;

const nested = (depth: number, leaf: unknown = 1): unknown => {
  let v: unknown = leaf;
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
};

async function expectError(res: Response, status: number, code: string) {
  expect(res.status).toBe(status);
  const body = (await res.json()) as { error: { code: string; message: string; request_id: string } };
  expect(body.error.code).toBe(code);
  expect(body.error.request_id).toBeTruthy();
  return body.error.message;
}

const raw = (key: string, method: string, path: string, init: { body?: string; type?: string } = {}) =>
  SELF.fetch(`${BASE}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(init.type ? { "content-type": init.type } : {}) },
    ...(init.body !== undefined ? { body: init.body } : {}),
  });

// Tags, bidi override, zero-width space, BOM, a C0 control: all invisible.
const HIDDEN = "\u{E0049}\u{E0047}\u202E\u200B\uFEFF\u0007";

describe("JSON bodies", () => {
  it("an empty body or another content type on a JSON route is 415, and a bodiless POST is never read as {}", async () => {
    const u = await createUser();
    const users = await totalUsers();
    await expectError(await raw(u.key, "POST", "/v1/keys", { body: "", type: "text/plain" }), 415, "unsupported_media_type");
    await expectError(await raw(u.key, "POST", "/v1/keys"), 415, "unsupported_media_type");
    await expectError(await raw(u.key, "POST", "/v1/keys", { body: "", type: "application/json" }), 415, "unsupported_media_type");
    await expectError(await raw(u.key, "PUT", "/v1/sites/shop/sync"), 415, "unsupported_media_type");
    await expectError(await raw(env.ADMIN_TOKEN ?? "", "POST", "/v1/admin/users"), 415, "unsupported_media_type");
    await expectError(await raw(u.key, "POST", "/v1/connections", { body: '{"name":"x"}', type: "text/plain" }), 415, "unsupported_media_type");
    expect(await count("api_keys", u.id)).toBe(1);
    expect(await count("sites", u.id)).toBe(0);
    expect(await count("connections", u.id)).toBe(0);
    expect(await totalUsers()).toBe(users);
    // A route without a body still takes a bodiless POST.
    expect((await raw(u.key, "POST", "/v1/keys/rotate")).status).toBe(201);
  });

  it(`nesting deeper than ${MAX_JSON_DEPTH} levels is 400 before anything is written (no orphan session, no stored observation)`, async () => {
    const u = await createUser();
    const deep = nested(999);
    const tool = { name: "deep", description: "d", input_schema: { type: "object", properties: { x: nested(40) } } };
    await expectError(await api(u.key, "POST", "/v1/chat", { message: "hi", client_tools: [tool] }), 400, "invalid_request");
    await expectError(
      await api(u.key, "POST", "/v1/observations", { observations: [{ type: "learned_fact", content: "x", source_metadata: { source: "a", deep } }] }),
      400,
      "invalid_request",
    );
    await expectError(await api(u.key, "POST", "/v1/memory/facts", { facts: [{ text: "x", metadata: { deep } }] }), 400, "invalid_request");
    await expectError(await api(u.key, "POST", "/v1/connections", { name: "c", learned_info: { deep } }), 400, "invalid_request");
    // Far deeper than any parser's stack: still a clean 400.
    await expectError(await api(u.key, "POST", "/v1/observations", `${"[".repeat(20_000)}${"]".repeat(20_000)}`), 400, "invalid_request");
    for (const table of ["sessions", "context_events", "facts", "connections"]) expect(await count(table, u.id)).toBe(0);
    // Within the limit is fine.
    expect((await api(u.key, "POST", "/v1/memory/facts", { facts: [{ text: "Ana likes tea", metadata: { ok: nested(MAX_JSON_DEPTH - 4) } }] })).status).toBe(
      201,
    );
  });

  it("a lone surrogate anywhere in a body is 400 and nothing is written (never silently turned into U+FFFD)", async () => {
    const u = await createUser();
    const lone = '{"facts":[{"text":"Ana \\ud800 likes tea"}]}';
    await expectError(await api(u.key, "POST", "/v1/memory/facts", lone), 400, "invalid_request");
    await expectError(await api(u.key, "POST", "/v1/connections", '{"name":"x","learned_info":{"\\udc00":1}}'), 400, "invalid_request");
    await expectError(await api(u.key, "POST", "/v1/chat", '{"message":"hi \\udfff"}'), 400, "invalid_request");
    for (const table of ["sessions", "facts", "connections"]) expect(await count(table, u.id)).toBe(0);
    // A proper pair (an emoji) is fine.
    expect((await api(u.key, "POST", "/v1/memory/facts", '{"facts":[{"text":"Ana likes \\ud83c\\udf75"}]}')).status).toBe(201);
  });
});

describe("invisible and control characters", () => {
  it("are stripped from facts, observations, connection names, user and key names, and chat messages", async () => {
    const u = await createUser();
    const fact = (await (await api(u.key, "POST", "/v1/memory/facts", { facts: [{ text: `Ana${HIDDEN} likes tea` }] })).json()) as {
      facts: { text: string }[];
    };
    expect(fact.facts[0]?.text).toBe("Ana likes tea");
    const obs = (await (await api(u.key, "POST", "/v1/observations", { observations: [{ type: "learned_fact", content: `likes${HIDDEN} jazz` }] })).json()) as {
      events: { content: string }[];
    };
    expect(obs.events[0]?.content).toBe("likes jazz");
    const conn = (await (await api(u.key, "POST", "/v1/connections", { name: `Ji${HIDDEN}ra` })).json()) as { name: string };
    expect(conn.name).toBe("Jira");
    expect((await api(u.key, "POST", "/v1/keys", { name: `lap${HIDDEN}top` })).status).toBe(201);
    const keys = (await (await api(u.key, "GET", "/v1/keys")).json()) as { keys: { name: string | null }[] };
    expect(keys.keys.map((k) => k.name)).toContain("laptop");
    const admin = (await (await api(env.ADMIN_TOKEN ?? "", "POST", "/v1/admin/users", { name: `Bo${HIDDEN}b` })).json()) as { user: { name: string } };
    expect(admin.user.name).toBe("Bob");
    // An emoji sequence keeps its joiner.
    const emoji = (await (await api(u.key, "POST", "/v1/memory/facts", { facts: [{ text: "Ana is a 👩‍💻" }] })).json()) as { facts: { text: string }[] };
    expect(emoji.facts[0]?.text).toBe("Ana is a 👩‍💻");

    await script(u.id, textReply("Hello."));
    const res = await api(u.key, "POST", "/v1/chat", { message: `hel${HIDDEN}lo`, stream: false });
    expect(res.status).toBe(200);
    const { session_id } = (await res.json()) as { session_id: string };
    const h = await history(u.key, session_id);
    expect(saidIn(h.messages[0] ?? { content: [] })).toBe("hello");
  });

  it("text that is nothing but invisible characters is 400, nothing written", async () => {
    const u = await createUser();
    await expectError(await api(u.key, "POST", "/v1/memory/facts", { facts: [{ text: HIDDEN }] }), 400, "invalid_request");
    await expectError(await api(u.key, "POST", "/v1/chat", { message: HIDDEN }), 400, "invalid_request");
    await expectError(await api(u.key, "POST", "/v1/connections", { name: HIDDEN }), 400, "invalid_request");
    for (const table of ["sessions", "facts", "connections"]) expect(await count(table, u.id)).toBe(0);
  });
});

describe("query parameters", () => {
  it("a required one that is missing says 'required', and a number that is not one says so (not 'received NaN')", async () => {
    const u = await createUser();
    const cases: [string, string][] = [
      ["/v1/brain/soul/diff", "from: required"],
      ["/v1/brain/soul/diff?from=abc", "from: must be a number"],
      ["/v1/memory/facts?limit=ten", "limit: must be a number"],
      ["/v1/memory/facts/search", "q: required"],
      ["/v1/usage?days=a%20week", "days: must be a number"],
    ];
    for (const [path, message] of cases) {
      const res = await api(u.key, "GET", path);
      expect(res.status, path).toBe(400);
      expect(((await res.json()) as { error: { code: string; message: string } }).error).toMatchObject({ code: "invalid_request", message });
    }
  });
});

describe("other edges", () => {
  it("an out-of-range date in a site sync is 400, not 500; nothing registered", async () => {
    const u = await createUser();
    for (const at of [8.64e15 + 1, 1e300, Number.MAX_SAFE_INTEGER]) {
      await expectError(await api(u.key, "PUT", "/v1/sites/shop/sync", { recent_changes: [{ at, summary: "deploy" }] }), 400, "invalid_request");
    }
    expect(await count("sites", u.id)).toBe(0);
    expect((await api(u.key, "PUT", "/v1/sites/shop/sync", { recent_changes: [{ at: Date.UTC(2026, 0, 1), summary: "deploy" }] })).status).toBe(200);
  });

  it("an Idempotency-Key reused with a different body is 409 (metadata counts); the same body replays", async () => {
    const u = await createUser();
    const body = (source: string) => ({ observations: [{ type: "learned_fact", content: "likes jazz", source_metadata: { source } }] });
    const headers = { "idempotency-key": "k-1" };
    expect((await api(u.key, "POST", "/v1/observations", body("a"), headers)).status).toBe(202);
    const again = await api(u.key, "POST", "/v1/observations", body("a"), headers);
    expect(((await again.json()) as { replayed: boolean }).replayed).toBe(true);
    await expectError(await api(u.key, "POST", "/v1/observations", body("b"), headers), 409, "conflict");
    expect(await count("context_events", u.id)).toBe(1);
  });

  it("a user cannot revoke their last active key (409, says what to do); with two keys one can go", async () => {
    const u = await createUser();
    const keys = (await (await api(u.key, "GET", "/v1/keys")).json()) as { keys: { id: string }[] };
    const only = keys.keys[0]?.id ?? "";
    const message = await expectError(await api(u.key, "DELETE", `/v1/keys/${only}`), 409, "conflict");
    expect(message).toMatch(/only active API key.*POST \/v1\/keys/);
    expect((await api(u.key, "GET", "/v1/keys")).status).toBe(200);
    const second = (await (await api(u.key, "POST", "/v1/keys", { name: "b" })).json()) as { id: string; key: string };
    expect((await api(u.key, "DELETE", `/v1/keys/${only}`)).status).toBe(200);
    await expectError(await api(second.key, "DELETE", `/v1/keys/${second.id}`), 409, "conflict");
    await expectError(await api(second.key, "DELETE", `/v1/keys/${only}`), 404, "not_found");
  });
});
