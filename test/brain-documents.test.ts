import { describe, expect, it } from "vitest";
import { api, createUser } from "./helpers";
import { brainRows, call, soul, type Doc, type ErrorShape, type Written } from "./brain-helpers";

type Versions = { current: number; versions: { version: number; author: string; truncated: boolean; note: string | null; chars: number }[]; next_before: number | null };
type Diff = { from: number; to: number; diff: string; added: number; removed: number };

describe("SOUL over HTTP", () => {
  it("starts empty at version 0, then every write is a new version", async () => {
    const u = await createUser();
    expect(await soul(u.key)).toEqual({ kind: "soul", site: null, content: "", version: 0, stale: false, updated_at: null });
    const first = await call<Written>(u.key, "PUT", "/v1/brain/soul", { content: "Ana, baker.", expected_version: 0 });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ changed: true, truncated: false, document: { content: "Ana, baker.", version: 1 } });
    await call(u.key, "PUT", "/v1/brain/soul", { content: "Ana, baker in Porto." });
    const same = await call<Written>(u.key, "PUT", "/v1/brain/soul", { content: "  Ana, baker in Porto.  " });
    expect(same.body).toMatchObject({ changed: false, document: { version: 2 } });
    const v = await call<Versions>(u.key, "GET", "/v1/brain/soul/versions");
    expect(v.body.current).toBe(2);
    expect(v.body.versions.map((x) => [x.version, x.author])).toEqual([[2, "user"], [1, "user"]]);
    const page = await call<Versions>(u.key, "GET", "/v1/brain/soul/versions?limit=1");
    expect(page.body).toMatchObject({ versions: [{ version: 2 }], next_before: 2 });
    expect((await call<Versions>(u.key, "GET", "/v1/brain/soul/versions?limit=1&before=2")).body.versions[0]?.version).toBe(1);
  });

  it("answers 409 when expected_version is stale, and writes nothing", async () => {
    const u = await createUser();
    await call(u.key, "PUT", "/v1/brain/soul", { content: "one" });
    await call(u.key, "PUT", "/v1/brain/soul", { content: "two" });
    const res = await call<ErrorShape>(u.key, "PUT", "/v1/brain/soul", { content: "three", expected_version: 1 });
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ code: "conflict", message: expect.stringContaining("version 2, not 1") });
    expect((await call<ErrorShape>(u.key, "PUT", "/v1/brain/soul", { content: "new", expected_version: 0 })).status).toBe(409);
    expect(await soul(u.key)).toMatchObject({ content: "two", version: 2 });
    expect((await brainRows(u.id)).versions).toBe(2);
  });

  it("lets exactly one of two concurrent writers from the same version win", async () => {
    const u = await createUser();
    await call(u.key, "PUT", "/v1/brain/soul", { content: "base" });
    const results = await Promise.all(["left", "right", "middle"].map((content) => call(u.key, "PUT", "/v1/brain/soul", { content, expected_version: 1 })));
    expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409]);
    expect((await soul(u.key)).version).toBe(2);
    expect((await brainRows(u.id)).versions).toBe(2);
  });

  it("diffs two versions and rolls back to an old one as a new version", async () => {
    const u = await createUser();
    await call(u.key, "PUT", "/v1/brain/soul", { content: "Name: Ana\nJob: baker\nCity: Porto" });
    await call(u.key, "PUT", "/v1/brain/soul", { content: "Name: Ana\nJob: pastry chef\nCity: Porto" });
    const d = await call<Diff>(u.key, "GET", "/v1/brain/soul/diff?from=1&to=2");
    expect(d.body).toEqual({
      from: 1,
      to: 2,
      added: 1,
      removed: 1,
      diff: "--- SOUL v1\n+++ SOUL v2\n@@ -1,3 +1,3 @@\n Name: Ana\n-Job: baker\n+Job: pastry chef\n City: Porto",
    });
    expect((await call<Diff>(u.key, "GET", "/v1/brain/soul/diff?from=2")).body).toMatchObject({ to: 2, diff: "", added: 0, removed: 0 });
    const back = await call<Written>(u.key, "POST", "/v1/brain/soul/rollback", { version: 1, expected_version: 2 });
    expect(back.body).toMatchObject({ changed: true, document: { version: 3, content: "Name: Ana\nJob: baker\nCity: Porto" } });
    const v = await call<Versions>(u.key, "GET", "/v1/brain/soul/versions");
    expect(v.body.versions[0]).toMatchObject({ version: 3, author: "user", note: "rollback to version 1" });
    expect((await call(u.key, "POST", "/v1/brain/soul/rollback", { version: 2, expected_version: 2 })).status).toBe(409);
    expect((await call(u.key, "POST", "/v1/brain/soul/rollback", { version: 9 })).status).toBe(404);
    expect((await call(u.key, "GET", "/v1/brain/soul/diff?from=1&to=9")).status).toBe(404);
  });

  it("sanitizes what the user writes, as it does the model's", async () => {
    const u = await createUser();
    const res = await call<Written>(u.key, "PUT", "/v1/brain/soul", { content: "\u202Eevil\u202C Ana\u200D\u200B\u0000 \uD83D\uDC69\u200D\uD83D\uDCBB\n" });
    expect(res.body.document.content).toBe("evil Ana \uD83D\uDC69\u200D\uD83D\uDCBB");
  });

  it("enforces the plan's length cap: at the cap is fine, over it is 413 with nothing written", async () => {
    const free = await createUser();
    expect((await call(free.key, "PUT", "/v1/brain/soul", { content: "é".repeat(2000) })).status).toBe(200);
    const over = await call<ErrorShape>(free.key, "PUT", "/v1/brain/soul", { content: "x".repeat(2001) });
    expect(over.status).toBe(413);
    expect(over.body.error).toMatchObject({ code: "limit_exceeded", message: expect.stringContaining("at most 2000 characters on the free plan") });
    expect((await soul(free.key)).version).toBe(1);
    const pro = await createUser("pro");
    expect((await call(pro.key, "PUT", "/v1/brain/soul", { content: "x".repeat(2001) })).status).toBe(200);
  });

  const bad: [string, unknown, number, string][] = [
    ["malformed JSON", "{nope", 400, "invalid_request"],
    ["a missing content", {}, 400, "invalid_request"],
    ["a non-string content", { content: 7 }, 400, "invalid_request"],
    ["an unknown field", { content: "x", user_id: "usr_other" }, 400, "invalid_request"],
    ["a negative expected_version", { content: "x", expected_version: -1 }, 400, "invalid_request"],
    ["empty content", { content: "   " }, 400, "invalid_request"],
    ["only invisible characters", { content: "\u200B\u2060\uFEFF\u0001" }, 400, "invalid_request"],
    ["a 1 MB body", { content: "x".repeat(1024 * 1024) }, 413, "payload_too_large"],
  ];
  for (const [name, body, status, code] of bad) {
    it(`rejects ${name} with ${status} and writes nothing`, async () => {
      const u = await createUser();
      const res = await api(u.key, "PUT", "/v1/brain/soul", body);
      expect(res.status).toBe(status);
      const json = (await res.json()) as ErrorShape;
      expect(json.error.code).toBe(code);
      expect(json.error.request_id).toBeTruthy();
      expect(await brainRows(u.id)).toMatchObject({ documents: 0, versions: 0 });
    });
  }
});

describe("BIBLE over HTTP", () => {
  it("is per site: a write registers the site, reads of an unknown site are 404", async () => {
    const u = await createUser();
    expect((await call<ErrorShape>(u.key, "GET", "/v1/sites/blog/bible")).status).toBe(404);
    const w = await call<Written>(u.key, "PUT", "/v1/sites/blog/bible", { content: "A food blog on WordPress." });
    expect(w.body.document).toMatchObject({ kind: "bible", site: "blog", version: 1 });
    await call(u.key, "PUT", "/v1/sites/shop/bible", { content: "A Shopify shop." });
    expect((await call<Doc>(u.key, "GET", "/v1/sites/blog/bible")).body.content).toBe("A food blog on WordPress.");
    expect((await call<Versions>(u.key, "GET", "/v1/sites/shop/bible/versions")).body.current).toBe(1);
    await call(u.key, "PUT", "/v1/sites/blog/bible", { content: "A food blog on Ghost." });
    expect((await call<Diff>(u.key, "GET", "/v1/sites/blog/bible/diff?from=1")).body.diff).toContain("+A food blog on Ghost.");
    expect((await call<Written>(u.key, "POST", "/v1/sites/blog/bible/rollback", { version: 1 })).body.document.version).toBe(3);
    expect((await call(u.key, "GET", "/v1/sites/bad%20site/bible")).status).toBe(400);
  });

  it("caps the number of sites per plan (409) and the BIBLE length (413)", async () => {
    const u = await createUser();
    for (const s of ["a", "b", "c"]) expect((await call(u.key, "PUT", `/v1/sites/${s}/bible`, { content: s })).status).toBe(200);
    const fourth = await call<ErrorShape>(u.key, "PUT", "/v1/sites/d/bible", { content: "d" });
    expect(fourth.status).toBe(409);
    expect(fourth.body.error.message).toMatch(/3 sites/);
    expect((await call(u.key, "PUT", "/v1/sites/a/bible", { content: "y".repeat(4001) })).status).toBe(413);
    expect(await brainRows(u.id)).toMatchObject({ sites: 3, documents: 3, versions: 3 });
  });
});
