import { describe, expect, it } from "vitest";
import { errorOf } from "./bridge-helpers";
import { api, chat, createUser, script, textReply } from "./helpers";
import { activityOf, factProject, importFact, newProject, projectOfRow, projectsOf } from "./projects-helpers";
import { userD1 } from "./shard-helpers";

const T = 60_000;

async function memoryEntry(key: string, content: string, projectId: string): Promise<string> {
  const res = await api(key, "POST", "/v1/brain/memory", { content, project_id: projectId });
  expect(res.status, await res.clone().text()).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

async function lesson(userId: string, id: string, project: string) {
  await (await userD1(userId))
    .prepare("INSERT INTO lessons (id, user_id, type, content, project) VALUES (?, ?, 'lesson', 'use WAL mode', ?)")
    .bind(id, userId, project)
    .run();
}

describe("projects API", () => {
  it(
    "creates, renames, describes, archives and unarchives, logging each change as the user's",
    async () => {
      const u = await createUser();
      const p = await newProject(u.key, "Garden", "Vegetables on the balcony");
      expect(p).toMatchObject({ name: "Garden", description: "Vegetables on the balcony", created_by: "user", reason: null, archived: false });

      const renamed = await api(u.key, "PATCH", `/v1/projects/${p.id}`, { name: "Balcony garden", description: null });
      expect(await renamed.json()).toMatchObject({ name: "Balcony garden", description: null });
      const archived = await api(u.key, "PATCH", `/v1/projects/${p.id}`, { archived: true });
      expect(await archived.json()).toMatchObject({ archived: true });
      expect(await projectsOf(u.key)).toEqual([]);
      expect((await projectsOf(u.key, true)).map((x) => x.id)).toEqual([p.id]);
      // An archived project cannot take new conversations.
      const chatIn = await api(u.key, "POST", "/v1/chat", { message: "hi", project_id: p.id, stream: false });
      expect(chatIn.status).toBe(404);
      // The answer says why a project the user can see in their list is refused.
      expect(((await chatIn.json()) as { error: { message: string } }).error.message).toContain("archived project takes no new chats: unarchive it");
      await api(u.key, "PATCH", `/v1/projects/${p.id}`, { archived: false });

      const log = await activityOf(u.key);
      expect(log.map((a) => a.action)).toEqual(["unarchive", "archive", "describe", "rename", "create"]);
      expect(log.every((a) => a.actor === "user" && a.project_id === p.id)).toBe(true);
    },
    T,
  );

  it(
    "rejects a duplicate name, ignoring case and including archived projects, and writes nothing",
    async () => {
      const u = await createUser();
      const p = await newProject(u.key, "Podcast");
      const dup = await api(u.key, "POST", "/v1/projects", { name: "  podcast " });
      expect(await errorOf(dup)).toMatchObject({ status: 409, code: "conflict", message: expect.stringContaining('"podcast" already exists') });
      await api(u.key, "PATCH", `/v1/projects/${p.id}`, { archived: true });
      const other = await newProject(u.key, "Other");
      const renameClash = await api(u.key, "PATCH", `/v1/projects/${other.id}`, { name: "PODCAST" });
      expect(await errorOf(renameClash)).toMatchObject({ status: 409, code: "conflict" });
      expect((await projectsOf(u.key, true)).map((x) => x.name).sort()).toEqual(["Other", "Podcast"]);
      expect((await activityOf(u.key)).map((a) => a.action)).toEqual(["create", "archive", "create"]);
      // Another user may use the same name.
      const v = await createUser();
      expect((await newProject(v.key, "Podcast")).name).toBe("Podcast");
    },
    T,
  );

  it(
    "rejects bad input with the error shape and writes nothing",
    async () => {
      const u = await createUser();
      for (const body of [{}, { name: "" }, { name: "x".repeat(81) }, { name: "a\u0000b" }, { name: "ok", extra: 1 }]) {
        const res = await api(u.key, "POST", "/v1/projects", body);
        expect(await errorOf(res)).toMatchObject({ status: 400, code: "invalid_request" });
      }
      const p = await newProject(u.key, "Ok");
      const empty = await api(u.key, "PATCH", `/v1/projects/${p.id}`, {});
      expect(await errorOf(empty)).toMatchObject({ status: 400, code: "invalid_request" });
      const self = await api(u.key, "POST", `/v1/projects/${p.id}/merge`, { into: p.id });
      expect(await errorOf(self)).toMatchObject({ status: 400 });
      expect(await projectsOf(u.key)).toHaveLength(1);
      expect(await activityOf(u.key)).toHaveLength(1);
    },
    T,
  );

  it(
    "answers 404 for another user's project, memory and activity, and changes none of them",
    async () => {
      const owner = await createUser();
      const intruder = await createUser();
      const p = await newProject(owner.key, "Secret plans");
      const fact = await importFact(owner.key, "The launch date is in March", p.id);
      const [entry] = await activityOf(owner.key);
      const mine = await newProject(intruder.key, "Mine");
      const attempts = [
        api(intruder.key, "GET", `/v1/projects/${p.id}`),
        api(intruder.key, "PATCH", `/v1/projects/${p.id}`, { name: "Taken over" }),
        api(intruder.key, "DELETE", `/v1/projects/${p.id}`),
        api(intruder.key, "POST", `/v1/projects/${p.id}/merge`, { into: mine.id }),
        api(intruder.key, "POST", `/v1/projects/${mine.id}/merge`, { into: p.id }),
        api(intruder.key, "POST", `/v1/projects/memories/${fact}/move`, { project_id: mine.id }),
        api(intruder.key, "POST", `/v1/projects/memories/${fact}/move`, { project_id: null }),
        api(intruder.key, "POST", `/v1/projects/activity/${entry?.id}/undo`),
        api(intruder.key, "POST", "/v1/chat", { message: "hi", project_id: p.id }),
      ];
      for (const res of await Promise.all(attempts)) expect(await errorOf(res)).toMatchObject({ status: 404, code: "not_found" });
      expect(await projectsOf(owner.key)).toMatchObject([{ id: p.id, name: "Secret plans" }]);
      expect(await factProject(fact)).toBe(p.id);
      expect((await activityOf(intruder.key)).map((a) => a.action)).toEqual(["create"]);
    },
    T,
  );

  it(
    "merges: facts, MEMORY entries, observations, conversations and lessons all move, the source is gone, and undo puts each back",
    async () => {
      const u = await createUser();
      const show = await newProject(u.key, "Show");
      const podcast = await newProject(u.key, "Podcast");
      const fact = await importFact(u.key, "Episode one is about the Zodiac case", show.id);
      const entry = await memoryEntry(u.key, "Record on Tuesdays", show.id);
      await lesson(u.id, "les_1", "show");
      await lesson(u.id, "les_2", "other-repo");
      await script(u.id, textReply("Noted."));
      const convo = await chat(u.key, { message: "planning the show", project_id: show.id });
      await (await userD1(u.id))
        .prepare(
          "INSERT INTO context_events (id, user_id, event_type, content, source_metadata) VALUES ('evt_p1', ?, 'fact', 'the host is Sam', json_object('project_id', ?))",
        )
        .bind(u.id, show.id)
        .run();

      const res = await api(u.key, "POST", `/v1/projects/${show.id}/merge`, { into: podcast.id });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({
        project: { id: podcast.id },
        moved: { facts: 1, memory_entries: 1, observations: 1, sessions: 1, lessons: 1 },
      });
      expect(await factProject(fact)).toBe(podcast.id);
      expect(await projectOfRow("brain_entries", entry)).toBe(podcast.id);
      expect(await projectOfRow("sessions", convo.sessionId)).toBe(podcast.id);
      const lessons = await (await userD1(u.id)).prepare("SELECT id, project FROM lessons WHERE user_id = ? ORDER BY id").bind(u.id).all();
      expect(lessons.results).toEqual([
        { id: "les_1", project: "Podcast" },
        { id: "les_2", project: "other-repo" },
      ]);
      const event = await (await userD1(u.id))
        .prepare("SELECT source_metadata->>'project_id' AS p FROM context_events WHERE id = 'evt_p1'")
        .first<{ p: string }>();
      expect(event?.p).toBe(podcast.id);
      expect((await projectsOf(u.key)).map((p) => p.name)).toEqual(["Podcast"]);
      // The fact is found from the target project's conversations now (and no longer names the source).
      const search = await api(u.key, "GET", "/v1/memory/facts/search?q=Zodiac");
      expect(((await search.json()) as { results: { metadata: { project_id?: string } }[] }).results[0]?.metadata.project_id).toBe(podcast.id);

      const [merge] = await activityOf(u.key);
      expect(merge).toMatchObject({ action: "merge", actor: "user", undoable: true });
      const undo = await api(u.key, "POST", `/v1/projects/activity/${merge?.id}/undo`);
      expect(undo.status, await undo.clone().text()).toBe(200);
      expect((await projectsOf(u.key)).map((p) => p.name).sort()).toEqual(["Podcast", "Show"]);
      expect(await factProject(fact)).toBe(show.id);
      expect(await projectOfRow("brain_entries", entry)).toBe(show.id);
      expect(await projectOfRow("sessions", convo.sessionId)).toBe(show.id);
      const back = await (await userD1(u.id)).prepare("SELECT project FROM lessons WHERE id = 'les_1'").first<{ project: string }>();
      expect(back?.project).toBe("Show");
      const again = await api(u.key, "POST", `/v1/projects/activity/${merge?.id}/undo`);
      expect(await errorOf(again)).toMatchObject({ status: 409, code: "conflict", message: expect.stringContaining("already undone") });
    },
    T,
  );

  it(
    "deletes a project with its memory moved to user level, never lost; a memory moves one at a time",
    async () => {
      const u = await createUser();
      const p = await newProject(u.key, "Move house");
      const q = await newProject(u.key, "Work");
      const fact = await importFact(u.key, "The movers come on the 3rd", p.id);
      const entry = await memoryEntry(u.key, "Boxes are in the garage", p.id);

      const moved = await api(u.key, "POST", `/v1/projects/memories/${entry}/move`, { project_id: q.id });
      expect(await moved.json()).toMatchObject({ kind: "memory_entry", from: p.id, to: q.id });
      expect(await projectOfRow("brain_entries", entry)).toBe(q.id);
      const missing = await api(u.key, "POST", "/v1/projects/memories/nope/move", { project_id: null });
      expect(await errorOf(missing)).toMatchObject({ status: 404 });

      const del = await api(u.key, "DELETE", `/v1/projects/${p.id}`);
      expect(await del.json()).toMatchObject({ deleted: p.id, moved: { facts: 1, memory_entries: 0 } });
      expect(await factProject(fact)).toBeNull();
      expect((await api(u.key, "GET", `/v1/projects/${p.id}`)).status).toBe(404);

      const [deleted] = await activityOf(u.key);
      await api(u.key, "POST", `/v1/projects/activity/${deleted?.id}/undo`);
      expect(await factProject(fact)).toBe(p.id);
      expect((await api(u.key, "GET", `/v1/projects/${p.id}`)).status).toBe(200);
    },
    T,
  );

  it(
    "undoing the deletion of a project with 150 facts puts every one of them back in it",
    async () => {
      const u = await createUser("pro");
      const p = await newProject(u.key, "Big");
      const facts = Array.from({ length: 150 }, (_, i) => ({ text: `Fact number ${i} about the big project`, metadata: { project_id: p.id } }));
      const imported = await api(u.key, "POST", "/v1/memory/facts", { facts });
      expect(imported.status, await imported.clone().text()).toBe(201);
      const inProject = async () =>
        (await (await userD1(u.id)).prepare("SELECT count(*) AS n FROM facts WHERE user_id = ? AND project_id = ?").bind(u.id, p.id).first<{ n: number }>())?.n;
      expect(await inProject()).toBe(150);

      expect(await (await api(u.key, "DELETE", `/v1/projects/${p.id}`)).json()).toMatchObject({ moved: { facts: 150 } });
      expect(await inProject()).toBe(0);
      const [deleted] = await activityOf(u.key);
      const undo = await api(u.key, "POST", `/v1/projects/activity/${deleted?.id}/undo`);
      expect(undo.status, await undo.clone().text()).toBe(200);
      expect(await inProject()).toBe(150);
    },
    2 * T,
  );
});
