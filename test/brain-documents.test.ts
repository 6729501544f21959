import { describe, expect, it } from "vitest";
import { commitWrite, planWrite, type WriteInput } from "../src/brain/documents";
import { type ProposalRow, propose, rejectProposal } from "../src/brain/review";
import { deleteSite } from "../src/brain/sites";
import { brainRows, call, type Doc, type ErrorShape, soul, testDb, type Written } from "./brain-helpers";
import { api, createUser } from "./helpers";
import { userD1 } from "./shard-helpers";

const soulWrite = (userId: string, content: string, expectedVersion?: number): WriteInput => ({
  userId,
  plan: "free",
  kind: "soul",
  site: null,
  content,
  author: "user",
  sessionId: null,
  expectedVersion,
});
const bibleWrite = (userId: string, site: string, content: string): WriteInput => ({ ...soulWrite(userId, content), kind: "bible", site });

type Versions = {
  current: number;
  versions: { version: number; author: string; truncated: boolean; note: string | null; chars: number }[];
  next_before: number | null;
};
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
    expect(v.body.versions.map((x) => [x.version, x.author])).toEqual([
      [2, "user"],
      [1, "user"],
    ]);
    const page = await call<Versions>(u.key, "GET", "/v1/brain/soul/versions?limit=1");
    expect(page.body).toMatchObject({ versions: [{ version: 2 }], next_before: 2 });
    expect((await call<Versions>(u.key, "GET", "/v1/brain/soul/versions?limit=1&before=2")).body.versions[0]?.version).toBe(1);
  });

  it("lists no versions, rather than 404, before the first write; a version or diff of it is 404 naming the version", async () => {
    const u = await createUser();
    const v = await call<Versions>(u.key, "GET", "/v1/brain/soul/versions");
    expect(v.status).toBe(200);
    expect(v.body).toEqual({ current: 0, versions: [], next_before: null });
    const one = await call<ErrorShape>(u.key, "GET", "/v1/brain/soul/versions/1");
    expect(one.status).toBe(404);
    expect(one.body.error).toMatchObject({ code: "not_found", message: "SOUL version 1 not found" });
    const diff = await call<ErrorShape>(u.key, "GET", "/v1/brain/soul/diff?from=1");
    expect(diff.status).toBe(404);
    expect(diff.body.error.message).toMatch(/^SOUL version \d not found$/);
    await call(u.key, "POST", "/v1/sites", { id: "shop" });
    expect((await call<Versions>(u.key, "GET", "/v1/sites/shop/bible/versions")).body).toEqual({ current: 0, versions: [], next_before: null });
    expect((await call(u.key, "GET", "/v1/sites/nope/bible/versions")).status).toBe(404);
    expect(await brainRows(u.id)).toMatchObject({ documents: 0, versions: 0 });
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

  it("lets exactly one of two writers that read the same version win, by the batch guard alone", async () => {
    const u = await createUser();
    await call(u.key, "PUT", "/v1/brain/soul", { content: "base" });
    const db = await testDb(u.id);
    // Both reads complete before either batch: the read-time version check passes for both.
    const [left, right] = [await planWrite(db, soulWrite(u.id, "left", 1)), await planWrite(db, soulWrite(u.id, "right", 1))];
    expect((await commitWrite(db, left)).version).toBe(2);
    await expect(commitWrite(db, right)).rejects.toMatchObject({ code: "conflict" });
    expect(await soul(u.key)).toMatchObject({ content: "left", version: 2 });
    const v = await call<Versions>(u.key, "GET", "/v1/brain/soul/versions");
    expect(v.body.versions.map((x) => x.version)).toEqual([2, 1]);
    expect((await call<{ content: string }>(u.key, "GET", "/v1/brain/soul/versions/2")).body.content).toBe("left");
  });

  it("lets exactly one of two writers creating the document win", async () => {
    const u = await createUser();
    const db = await testDb(u.id);
    const [a, b] = [await planWrite(db, soulWrite(u.id, "first", 0)), await planWrite(db, soulWrite(u.id, "second", 0))];
    await commitWrite(db, a);
    await expect(commitWrite(db, b)).rejects.toMatchObject({ code: "conflict" });
    expect(await soul(u.key)).toMatchObject({ content: "first", version: 1 });
    expect(await brainRows(u.id)).toMatchObject({ documents: 1, versions: 1 });
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

  it("holds the site cap when two writes to new sites read under it", async () => {
    const u = await createUser();
    for (const s of ["a", "b"]) await call(u.key, "POST", "/v1/sites", { id: s });
    const db = await testDb(u.id);
    const [c, d] = [await planWrite(db, bibleWrite(u.id, "c", "C")), await planWrite(db, bibleWrite(u.id, "d", "D"))];
    await commitWrite(db, c);
    await expect(commitWrite(db, d)).rejects.toMatchObject({ code: "quota_exceeded", message: expect.stringMatching(/3 sites/) });
    expect(await brainRows(u.id)).toMatchObject({ sites: 3, documents: 1, versions: 1 });
  });

  it("re-registers a site deleted while its first BIBLE was being written, never leaving an orphan", async () => {
    const u = await createUser();
    await call(u.key, "POST", "/v1/sites", { id: "blog" });
    const db = await testDb(u.id);
    const plan = await planWrite(db, bibleWrite(u.id, "blog", "A food blog."));
    await deleteSite(db, u.id, "blog");
    await commitWrite(db, plan);
    expect((await call(u.key, "GET", "/v1/sites/blog")).status).toBe(200);
    expect((await call<Doc>(u.key, "GET", "/v1/sites/blog/bible")).body).toMatchObject({ content: "A food blog.", version: 1 });
  });

  it("caps the number of sites per plan (403) and the BIBLE length (413)", async () => {
    const u = await createUser();
    for (const s of ["a", "b", "c"]) expect((await call(u.key, "PUT", `/v1/sites/${s}/bible`, { content: s })).status).toBe(200);
    const fourth = await call<ErrorShape>(u.key, "PUT", "/v1/sites/d/bible", { content: "d" });
    expect(fourth.status).toBe(403);
    expect(fourth.body.error.message).toMatch(/3 sites/);
    expect((await call(u.key, "PUT", "/v1/sites/a/bible", { content: "y".repeat(4001) })).status).toBe(413);
    expect(await brainRows(u.id)).toMatchObject({ sites: 3, documents: 3, versions: 3 });
  });
});

describe("approving a proposal that was rejected meanwhile", () => {
  const proposeDoc = async (userId: string, target: "soul" | "bible", content: string, site: string | null = null) =>
    propose(await testDb(userId), { userId, plan: "free", target, site, projectId: null, content, sessionId: null });
  const approval = (p: ProposalRow) => ({
    userId: p.userId,
    plan: "free" as const,
    kind: p.target as "soul" | "bible",
    site: p.site,
    content: p.content,
    author: "assistant" as const,
    sessionId: null,
    expectedVersion: p.baseVersion ?? 0,
    approves: p.id,
  });
  const status = async (userId: string, id: string) =>
    (await (await userD1(userId)).prepare("SELECT status FROM brain_proposals WHERE id = ?").bind(id).first<{ status: string }>())?.status;

  it("writes no SOUL and no version", async () => {
    const u = await createUser();
    const { proposal } = await proposeDoc(u.id, "soul", "Ana is a baker.");
    const plan = await planWrite(await testDb(u.id), approval(proposal));
    await rejectProposal(await testDb(u.id), u.id, proposal.id);
    await expect(commitWrite(await testDb(u.id), plan)).rejects.toMatchObject({ code: "conflict", message: "this proposal was already decided" });
    expect(await brainRows(u.id)).toMatchObject({ documents: 0, versions: 0 });
    expect(await status(u.id, proposal.id)).toBe("rejected");
  });

  it("writes no BIBLE and registers no site", async () => {
    const u = await createUser();
    const { proposal } = await proposeDoc(u.id, "bible", "A shop.", "shop");
    const plan = await planWrite(await testDb(u.id), approval(proposal));
    await rejectProposal(await testDb(u.id), u.id, proposal.id);
    await expect(commitWrite(await testDb(u.id), plan)).rejects.toMatchObject({ code: "conflict" });
    expect(await brainRows(u.id)).toMatchObject({ documents: 0, versions: 0, sites: 0 });
  });

  it("does not mark it approved when it would change nothing", async () => {
    const u = await createUser();
    await call(u.key, "PUT", "/v1/brain/soul", { content: "Same text." });
    const { proposal } = await proposeDoc(u.id, "soul", "Same text.");
    const plan = await planWrite(await testDb(u.id), approval(proposal));
    await rejectProposal(await testDb(u.id), u.id, proposal.id);
    await expect(commitWrite(await testDb(u.id), plan)).rejects.toMatchObject({ message: "this proposal was already decided" });
    expect(await status(u.id, proposal.id)).toBe("rejected");
  });
});
