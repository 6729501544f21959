/** The projects and lessons sections of `GET /v1/overview`: counts and recent assistant actions, the caller's only. */
import { describe, expect, it } from "vitest";
import { api, chat, createUser, script, textReply, toolCall } from "./helpers";

type Overview = { counts: Record<string, number>; recent: { kind: string; title: string }[]; sections: string[]; unavailable: string[] };
const T = 60_000;
const overview = async (key: string) => (await (await api(key, "GET", "/v1/overview")).json()) as Overview;

describe("GET /v1/overview: projects and lessons", () => {
  it(
    "counts projects, shows the assistant's newest project action, and leaves out another user's",
    async () => {
      const a = await createUser();
      const b = await createUser();
      const empty = await overview(a.key);
      expect(empty.sections).toEqual(expect.arrayContaining(["projects", "lessons"]));
      expect(empty.counts).toMatchObject({
        projects: 0,
        projects_archived: 0,
        lessons: 0,
        transcripts_synced: 0,
        transcripts_pending: 0,
        transcripts_failed: 0,
      });

      const reason = "A distinct goal worth its own context.";
      await script(a.id, toolCall("create_project", { name: "True crime podcast", reason }), textReply("Created it."));
      await chat(a.key, { message: "I'm starting a podcast about true crime" });
      const own = (await (await api(a.key, "POST", "/v1/projects", { name: "Garden" })).json()) as { id: string };
      await api(a.key, "PATCH", `/v1/projects/${own.id}`, { archived: true });
      await api(b.key, "POST", "/v1/projects", { name: "B's secret plan" });

      const o = await overview(a.key);
      expect(o.counts).toMatchObject({ projects: 1, projects_archived: 1 });
      const actions = o.recent.filter((r) => r.kind === "project_action");
      // Only the assistant's actions: the user's own create and archive are not news to them.
      expect(actions).toHaveLength(1);
      expect(actions[0]?.title).toMatch(/True crime podcast/);
      expect(o.recent.some((r) => r.title.includes("B's secret"))).toBe(false);
    },
    T,
  );

  it(
    "counts learned lessons (not unlearned ones) and transcripts by sync state",
    async () => {
      const u = await createUser();
      const keep = await api(u.key, "POST", "/v1/lessons", { title: "Migrate first", content: "Apply migrations before the tests run." });
      const drop = (await (await api(u.key, "POST", "/v1/lessons", { title: "Pin wrangler", content: "Newer wrangler breaks npm ci here." })).json()) as {
        lesson: { id: string };
      };
      expect(keep.status).toBe(201);
      await api(u.key, "DELETE", `/v1/lessons/${drop.lesson.id}`);
      const line = `${JSON.stringify({ type: "user", message: { role: "user", content: "hello" } })}\n`;
      const up = await api(u.key, "POST", "/v1/transcripts", { session_id: "s-overview", project: null, offset: 0, content: line, total_bytes: line.length });
      expect(up.status).toBe(202);

      const o = await overview(u.key);
      expect(o.counts.lessons).toBe(1);
      // The upload is queued for extraction: whichever state it has reached, it is counted once.
      expect((o.counts.transcripts_synced ?? 0) + (o.counts.transcripts_pending ?? 0) + (o.counts.transcripts_failed ?? 0)).toBe(1);
      expect((await overview((await createUser()).key)).counts).toMatchObject({ lessons: 0, transcripts_pending: 0 });
    },
    T,
  );
});
