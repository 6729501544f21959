import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, createUser } from "./helpers";
import { allShards, userD1 } from "./shard-helpers";

const admin = () => env.ADMIN_TOKEN ?? null;
type Users = { users: { id: string }[]; next_before: string | null };

describe("admin users", () => {
  it("lists users newest first, page by page", async () => {
    const created = [await createUser(), await createUser(), await createUser()];
    const first = (await (await api(admin(), "GET", "/v1/admin/users?limit=2")).json()) as Users;
    expect(first.users).toHaveLength(2);
    expect(first.next_before).not.toBeNull();
    const second = (await (await api(admin(), "GET", `/v1/admin/users?limit=200&before=${first.next_before}`)).json()) as Users;
    const ids = [...first.users, ...second.users].map((u) => u.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const u of created) expect(ids).toContain(u.id);
  });

  it("deletes a user with everything they had, and leaves other users alone", async () => {
    const [gone, kept] = [await createUser(), await createUser()];
    for (const u of [gone, kept]) expect((await api(u.key, "PUT", "/v1/brain/soul", { content: "Ana, baker." })).status).toBe(200);
    const res = await api(admin(), "DELETE", `/v1/admin/users/${gone.id}`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { deleted: string; receipt: { erased: Record<string, number | boolean> } };
    expect(body).toMatchObject({ deleted: gone.id, receipt: { erased: { brain_documents: 1 } } });
    expect((await api(gone.key, "GET", "/v1/brain/soul")).status).toBe(401);
    expect((await api(kept.key, "GET", "/v1/brain/soul")).status).toBe(200);
    expect((await api(admin(), "DELETE", `/v1/admin/users/${gone.id}`)).status).toBe(404);
  });

  it("says in the receipt that only the audit trail outlives a deleted account: usage and connections go too", async () => {
    const u = await createUser();
    expect((await api(u.key, "POST", "/v1/connections", { name: "Jira", learned_info: { project: "PROJ" } })).status).toBe(201);
    expect((await api(u.key, "POST", "/v1/chat", { message: "what time is it?", stream: false })).status).toBe(200);
    const count = async (table: string) =>
      (await (await userD1(u.id)).prepare(`SELECT count(*) AS n FROM ${table} WHERE user_id = ?`).bind(u.id).first<{ n: number }>())?.n;
    expect(await count("connections")).toBe(1);
    expect(await count("usage")).toBeGreaterThan(0);
    const res = await api(admin(), "DELETE", `/v1/admin/users/${u.id}`);
    const body = (await res.json()) as { receipt: { kept: string[] } };
    expect([await count("usage"), await count("connections")]).toEqual([0, 0]);
    expect(body.receipt.kept).toEqual(["audit_logs (this erasure and the account's deletion, without content)"]);
    expect(await count("audit_logs")).toBeGreaterThan(0);
    // Erasing one's own memory, by contrast, keeps the account's usage and connections, and says so.
    const other = await createUser();
    const erased = (await (await api(other.key, "DELETE", "/v1/memory")).json()) as { kept: string[] };
    expect(erased.kept).toEqual(expect.arrayContaining([expect.stringMatching(/^usage/), expect.stringMatching(/^connections/)]));
  });

  it("lists each user's settings as their shard holds them, and their plan as the directory and their shard both hold it", async () => {
    const shards = allShards().length;
    const placed = [await createUser("pro", 0), await createUser("pro", shards - 1), await createUser("free", Math.min(1, shards - 1))];
    for (const u of placed) expect((await api(u.key, "PUT", "/v1/brain/settings", { review_mode: true })).status).toBe(200);
    const listed = (await (await api(admin(), "GET", "/v1/admin/users?limit=200")).json()) as { users: { id: string; review_mode: boolean; plan: string }[] };
    for (const [i, u] of placed.entries()) {
      expect(listed.users.find((l) => l.id === u.id)).toMatchObject({ review_mode: true, plan: i === 2 ? "free" : "pro" });
      // The shard's copy of the plan (read by background work there) is the directory's.
      const copy = await (await userD1(u.id)).prepare("SELECT plan FROM users WHERE id = ?").bind(u.id).first<{ plan: string }>();
      expect(copy?.plan).toBe(i === 2 ? "free" : "pro");
    }
  });

  it("refuses a user's own key, bad ids and bad cursors, and changes nothing", async () => {
    const u = await createUser();
    expect((await api(u.key, "GET", "/v1/admin/users")).status).toBe(401);
    expect((await api(u.key, "DELETE", `/v1/admin/users/${u.id}`)).status).toBe(401);
    expect((await api(admin(), "DELETE", "/v1/admin/users/no%20such%20user")).status).toBe(400);
    expect((await api(admin(), "GET", "/v1/admin/users?before=yesterday")).status).toBe(400);
    expect((await api(admin(), "GET", "/v1/admin/users?limit=0")).status).toBe(400);
    expect((await api(u.key, "GET", "/v1/keys")).status).toBe(200);
  });
});
