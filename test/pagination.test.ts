/**
 * Every list pages the same way (src/db/cursor.ts): newest first by (time, id), so rows written in the same
 * millisecond (one import, one batch of observations) are neither skipped nor repeated across pages.
 */
import { describe, expect, it } from "vitest";
import { api, createUser } from "./helpers";

type Row = { id: string };

/** Follows `next_before` page by page (`limit` rows each) and returns every row seen, in order. */
async function pageThrough(key: string, path: string, list: string, limit: number): Promise<Row[]> {
  const rows: Row[] = [];
  let before: string | null = null;
  for (let pages = 0; pages < 50; pages++) {
    const sep = path.includes("?") ? "&" : "?";
    const res = await api(key, "GET", `${path}${sep}limit=${limit}${before ? `&before=${encodeURIComponent(before)}` : ""}`);
    expect(res.status, await res.clone().text()).toBe(200);
    const body = (await res.json()) as Record<string, unknown> & { next_before: string | null };
    const page = body[list] as Row[];
    expect(page.length).toBeLessThanOrEqual(limit);
    rows.push(...page);
    before = body.next_before;
    if (!before) return rows;
  }
  throw new Error(`${path} never ended`);
}

/** Paged with 2 rows a page, the list is exactly its one big page: every row once, in the same order. */
async function expectPagesMatch(key: string, path: string, list: string, expected: number) {
  const whole = await pageThrough(key, path, list, 100);
  expect(whole).toHaveLength(expected);
  const paged = await pageThrough(key, path, list, 2);
  expect(paged.map((r) => r.id)).toEqual(whole.map((r) => r.id));
  return whole;
}

describe("keyset pagination", () => {
  it("pages through facts imported in one request, and only the caller's", async () => {
    const [u, other] = [await createUser(), await createUser()];
    const texts = ["Ana lives in Porto", "Ana bakes bread", "Ana has a cat", "Ana swims", "Ana reads novels"];
    for (const who of [u, other]) {
      const res = await api(who.key, "POST", "/v1/memory/facts", { facts: texts.map((text) => ({ text })) });
      expect(res.status, await res.clone().text()).toBe(201);
    }
    const mine = await expectPagesMatch(u.key, "/v1/memory/facts", "facts", 5);
    const theirs = await pageThrough(other.key, "/v1/memory/facts", "facts", 100);
    expect(mine.map((f) => f.id)).not.toContain(theirs[0]?.id);
  });

  it("keeps a list's filter on every page (superseded facts only when asked for)", async () => {
    const u = await createUser();
    for (const city of ["Porto", "Lyon", "Oslo"]) {
      const res = await api(u.key, "POST", "/v1/memory/facts", { facts: [{ text: `Ana lives in ${city}`, key: "home city" }] });
      expect(res.status, await res.clone().text()).toBe(201);
    }
    await api(u.key, "POST", "/v1/memory/facts", { facts: [{ text: "Ana bakes bread" }, { text: "Ana has a cat" }] });
    await expectPagesMatch(u.key, "/v1/memory/facts", "facts", 3);
    await expectPagesMatch(u.key, "/v1/memory/facts?include_superseded=true", "facts", 5);
  });

  it("pages through observations recorded in one request", async () => {
    const u = await createUser();
    const observations = ["tea", "coffee", "juice", "water", "milk"].map((d) => ({ type: "learned_fact", content: `User likes ${d}` }));
    expect((await api(u.key, "POST", "/v1/observations", { observations })).status).toBe(202);
    await expectPagesMatch(u.key, "/v1/memory/events", "events", 5);
  });

  it("pages through the project activity log", async () => {
    const u = await createUser();
    for (const name of ["Garden", "Podcast", "Kitchen"]) expect((await api(u.key, "POST", "/v1/projects", { name })).status).toBe(201);
    await expectPagesMatch(u.key, "/v1/projects/activity", "activity", 3);
  });
});
