/**
 * Every user-supplied name or title goes through the shared sanitizer (src/lib/sanitize.ts) before it is
 * stored: session titles (rename), site and project names, remembered lessons, transcript project names.
 */
import { describe, expect, it } from "vitest";
import { createSessionWithinBudget } from "../src/sessions/store";
import { api, createUser } from "./helpers";
import { userD1, userDb } from "./shard-helpers";

// Bidi override, zero-width space, a tag character and a Hangul filler: invisible, and gone once cleaned.
const HIDDEN = "\u202E\u200B\u{E0041}\u3164";
const dirty = (s: string) => `${HIDDEN}${s}\u200B`;

async function column(table: string, col: string, userId: string): Promise<string[]> {
  const { results } = await (await userD1(userId)).prepare(`SELECT ${col} AS v FROM ${table} WHERE user_id = ?1`).bind(userId).all<{ v: string }>();
  return results.map((r) => r.v);
}

describe("names and titles are cleaned by the shared sanitizer", () => {
  it("renaming a session strips invisible characters; a title of nothing but them is 400 and renames nothing", async () => {
    const u = await createUser();
    const session = await createSessionWithinBudget(await userDb(u.id), u.id, { title: "Original", siteId: null, projectId: null }, null, Date.now());
    const path = `/v1/sessions/${session?.id}`;
    const renamed = await api(u.key, "PATCH", path, { title: dirty("Trip plans") });
    expect(renamed.status).toBe(200);
    expect(((await renamed.json()) as { session: { title: string } }).session.title).toBe("Trip plans");
    expect((await api(u.key, "PATCH", path, { title: HIDDEN })).status).toBe(400);
    expect(await column("sessions", "title", u.id)).toEqual(["Trip plans"]);
  });

  it("site names, on creation and rename", async () => {
    const u = await createUser();
    expect((await api(u.key, "POST", "/v1/sites", { id: "shop", name: dirty("My Shop") })).status).toBe(201);
    expect(await column("sites", "name", u.id)).toEqual(["My Shop"]);
    expect((await api(u.key, "PATCH", "/v1/sites/shop", { name: dirty("Our Shop") })).status).toBe(200);
    expect(await column("sites", "name", u.id)).toEqual(["Our Shop"]);
  });

  it("project names and descriptions, on creation and update", async () => {
    const u = await createUser();
    const made = await api(u.key, "POST", "/v1/projects", { name: "Garden\u3164", description: "Beds\u3164 and herbs" });
    expect(made.status).toBe(201);
    const { id } = (await made.json()) as { id: string };
    expect((await api(u.key, "PATCH", `/v1/projects/${id}`, { name: "Allotment\u3164" })).status).toBe(200);
    expect(await column("projects", "name", u.id)).toEqual(["Allotment"]);
    expect(await column("projects", "description", u.id)).toEqual(["Beds and herbs"]);
  });

  it("a remembered lesson's title, content and project, and an uploaded transcript's project", async () => {
    const u = await createUser();
    const lesson = await api(u.key, "POST", "/v1/lessons", {
      title: dirty("Run migrations before deploy"),
      content: dirty("Always apply D1 migrations before deploying the Worker, or the new code reads missing columns."),
      project: dirty("billing"),
    });
    expect(lesson.status).toBeLessThan(300);
    expect(await column("lessons", "title", u.id)).toEqual(["Run migrations before deploy"]);
    expect(await column("lessons", "project", u.id)).toEqual(["billing"]);
    expect((await column("lessons", "content", u.id))[0]).toMatch(/^Always apply/);
    const line = `${JSON.stringify({ type: "user", message: { role: "user", content: "hi" } })}\n`;
    const up = await api(u.key, "POST", "/v1/transcripts", {
      session_id: "33333333-3333-4333-8333-333333333333",
      project: dirty("repo"),
      offset: 0,
      content: line,
      total_bytes: new TextEncoder().encode(line).length,
    });
    expect(up.status).toBe(202);
    expect(await column("transcripts", "project", u.id)).toEqual(["repo"]);
  });
});
