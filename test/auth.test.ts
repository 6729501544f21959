import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { rotateKey } from "../src/auth/service";
import { api, createUser } from "./helpers";
import { userDb } from "./shard-helpers";

const ADMIN = () => env.ADMIN_TOKEN ?? "";

describe("POST /v1/admin/users", () => {
  it("creates a user and returns its API key once, storing only a hash", async () => {
    const res = await api(ADMIN(), "POST", "/v1/admin/users", { name: "Ada", email: "ada@example.com", plan: "pro" });
    expect(res.status).toBe(201);
    const body = (await res.json()) as { user: { id: string; plan: string }; api_key: { id: string; key: string; prefix: string } };
    expect(body.user).toMatchObject({ name: "Ada", plan: "pro", review_mode: false });
    expect(body.api_key.key).toMatch(/^egm_[\w-]{40,}$/);
    expect(body.api_key.key.startsWith(body.api_key.prefix)).toBe(true);
    const stored = await env.DB.prepare("SELECT hash, prefix FROM api_keys WHERE user_id = ?").bind(body.user.id).all<{ hash: string; prefix: string }>();
    expect(stored.results).toHaveLength(1);
    expect(stored.results[0]?.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(stored.results)).not.toContain(body.api_key.key);
    // The key works.
    expect((await api(body.api_key.key, "GET", "/v1/keys")).status).toBe(200);
  });

  it("refuses without the admin token, with a user's key, or with a wrong token", async () => {
    const u = await createUser();
    for (const key of [null, u.key, "wrong-token-0123456789"]) {
      const res = await api(key, "POST", "/v1/admin/users", { name: "x" });
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ error: { code: "unauthorized" } });
    }
  });

  it("rejects bad input and creates nothing", async () => {
    const before = await env.DB.prepare("SELECT count(*) AS n FROM users").first<{ n: number }>();
    for (const body of [{ plan: "platinum" }, { email: "not-an-email" }, { name: "x", is_admin: true }, "{oops"]) {
      const res = await api(ADMIN(), "POST", "/v1/admin/users", body);
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error: { code: "invalid_request" } });
    }
    const after = await env.DB.prepare("SELECT count(*) AS n FROM users").first<{ n: number }>();
    expect(after?.n).toBe(before?.n);
  });
});

describe("API keys", () => {
  it("rotates: the new key works and the old one is revoked", async () => {
    const u = await createUser();
    const res = await api(u.key, "POST", "/v1/keys/rotate");
    expect(res.status).toBe(201);
    const rotated = (await res.json()) as { key: string; revoked: string };
    expect((await api(u.key, "GET", "/v1/keys")).status).toBe(401);
    const list = (await (await api(rotated.key, "GET", "/v1/keys")).json()) as { keys: { id: string; revoked_at: number | null }[] };
    expect(list.keys).toHaveLength(2);
    expect(list.keys.find((k) => k.id === rotated.revoked)?.revoked_at).toBeTypeOf("number");
  });

  it("does not let a key revoked mid-request mint a successor", async () => {
    const u = await createUser();
    const keys = (await (await api(u.key, "GET", "/v1/keys")).json()) as { keys: { id: string }[] };
    const keyId = keys.keys[0]?.id ?? "";
    // The request was authenticated, then the key was revoked before the rotation ran.
    await env.DB.prepare("UPDATE api_keys SET revoked_at = 1 WHERE id = ?").bind(keyId).run();
    await expect(rotateKey(await userDb(u.id), { id: u.id, plan: "free", keyId, shard: 0, movingTo: null }, Date.now())).rejects.toMatchObject({
      code: "unauthorized",
    });
    const count = await env.DB.prepare("SELECT count(*) AS n FROM api_keys WHERE user_id = ?").bind(u.id).first<{ n: number }>();
    expect(count?.n).toBe(1);
  });

  it("issues and revokes additional keys, never another user's", async () => {
    const u = await createUser();
    const other = await createUser();
    const created = (await (await api(u.key, "POST", "/v1/keys", { name: "laptop" })).json()) as { id: string; key: string };
    expect((await api(created.key, "GET", "/v1/keys")).status).toBe(200);
    const otherKeys = (await (await api(other.key, "GET", "/v1/keys")).json()) as { keys: { id: string }[] };
    const otherKeyId = otherKeys.keys[0]?.id ?? "";
    expect((await api(u.key, "DELETE", `/v1/keys/${otherKeyId}`)).status).toBe(404);
    expect((await api(other.key, "GET", "/v1/keys")).status).toBe(200);
    expect((await api(u.key, "DELETE", `/v1/keys/${created.id}`)).status).toBe(200);
    expect((await api(created.key, "GET", "/v1/keys")).status).toBe(401);
    expect((await api(u.key, "DELETE", `/v1/keys/${created.id}`)).status).toBe(404);
  });

  it("rejects malformed bearer headers", async () => {
    const u = await createUser();
    for (const header of [`Basic ${u.key}`, u.key, "Bearer", `Bearer ${u.key} extra`]) {
      const res = await api(null, "GET", "/v1/keys", undefined, { authorization: header });
      expect(res.status).toBe(401);
    }
  });
});
