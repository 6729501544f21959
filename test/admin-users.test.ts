import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, createUser } from "./helpers";

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
