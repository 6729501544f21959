// The assistant's project tools in real chat turns: the fake model scripts the calls, the real loop,
// bridge, storage and retrieval run them.
import { describe, expect, it } from "vitest";
import type { ChatEvent } from "../src/core/events";
import { chatTurn, resume } from "./bridge-helpers";
import { api, chat, createUser, history, promptOf, recalledIn, script, seen, textReply, toolCall, turnWithEnv } from "./helpers";
import { activityOf, factProject, newProject, projectOfRow, projectsOf } from "./projects-helpers";
import { userD1 } from "./shard-helpers";

const T = 60_000;

const toolUses = (events: ChatEvent[]) => events.flatMap((e) => (e.type === "tool_use" ? [e] : []));
const toolResults = (events: ChatEvent[]) => events.flatMap((e) => (e.type === "tool_result" ? [e] : []));

/** The tool_result the model was sent for one call, from the fake's log. */
async function resultSent(userId: string, callId: string) {
  for (const r of await seen(userId))
    for (const m of r.messages) if (Array.isArray(m.content)) for (const b of m.content) if (b.type === "tool_result" && b.tool_use_id === callId) return b;
  return undefined;
}

describe("the assistant organises projects", () => {
  it(
    "creates a project from the conversation: the stream shows it with the reason, the conversation is filed under it, and the log says who and why",
    async () => {
      const u = await createUser();
      const reason = "You are starting a podcast, a distinct goal worth its own context.";
      await script(
        u.id,
        toolCall("create_project", { name: "True crime podcast", description: "Weekly show about cold cases", reason }, "toolu_cp1", "Let me set that up."),
        textReply('I created the project "True crime podcast" for this.'),
      );
      const turn = await chat(u.key, { message: "I'm starting a podcast about cold cases" });
      expect(toolUses(turn.events)).toEqual([
        {
          type: "tool_use",
          id: "toolu_cp1",
          name: "create_project",
          input: expect.objectContaining({ reason }),
          reason: `Creating project "True crime podcast": ${reason}`,
        },
      ]);
      expect(toolResults(turn.events)).toEqual([{ type: "tool_result", id: "toolu_cp1", name: "create_project", ok: true }]);

      const [project] = await projectsOf(u.key);
      expect(project).toMatchObject({ name: "True crime podcast", description: "Weekly show about cold cases", created_by: "assistant", reason });
      expect(await projectOfRow("sessions", turn.sessionId)).toBe(project?.id);
      expect(await activityOf(u.key)).toMatchObject([{ action: "create", actor: "assistant", reason, project_id: project?.id, undoable: true }]);
      // The session history keeps the call with its reason.
      const h = await history(u.key, turn.sessionId);
      expect(h.messages.flatMap((m) => m.content).find((b) => b.type === "tool_use")).toMatchObject({ name: "create_project", input: { reason } });

      // The next turn of the conversation runs inside the project and the model is told so.
      await script(u.id, textReply("Sure."));
      await chat(u.key, { message: "what should episode one cover?", session_id: turn.sessionId });
      const prompt = promptOf((await seen(u.id)).at(-1));
      expect(prompt).toContain(`This conversation belongs to the project "True crime podcast" (${project?.id})`);
      expect(prompt).toContain("Create a project (create_project) when:");
    },
    T,
  );

  it(
    "refuses a duplicate name with a tool error the model reads, and creates nothing",
    async () => {
      const u = await createUser();
      await newProject(u.key, "Garden");
      await script(u.id, toolCall("create_project", { name: "garden", reason: "gardening" }, "toolu_dup"), textReply("You already have that project."));
      const turn = await chat(u.key, { message: "I'm planting tomatoes" });
      expect(toolResults(turn.events)).toEqual([{ type: "tool_result", id: "toolu_dup", name: "create_project", ok: false }]);
      expect(await resultSent(u.id, "toolu_dup")).toMatchObject({ is_error: true, content: expect.stringContaining('"garden" already exists') });
      expect(await projectsOf(u.key)).toHaveLength(1);
      expect(await projectOfRow("sessions", turn.sessionId)).toBeNull();
    },
    T,
  );

  it(
    "cleans the model's reason as the stream shows it and the project and its log keep it: secrets redacted, invisible characters gone",
    async () => {
      const u = await createUser();
      await script(
        u.id,
        toolCall("create_project", { name: "Billing", reason: "User said token=abcd1234efgh5678ijkl\u202e\u200b for billing" }, "toolu_r1"),
        toolCall("create_project", { name: "Blank", reason: "\u200b\u202e" }, "toolu_r2"),
        textReply("done"),
      );
      const turn = await chat(u.key, { message: "let's start the billing work" });
      const reason = "User said token=[REDACTED] for billing";
      expect(toolUses(turn.events)[0]?.reason).toBe(`Creating project "Billing": ${reason}`);
      // A reason with nothing visible in it is no reason: the call is refused and nothing is created.
      expect(toolResults(turn.events).map((r) => r.ok)).toEqual([true, false]);
      const projects = await projectsOf(u.key);
      expect(projects).toMatchObject([{ name: "Billing", reason }]);
      expect(await activityOf(u.key)).toMatchObject([{ action: "create", reason }]);

      await script(
        u.id,
        toolCall("suggest_project_for_memory", {
          memory_content: "Invoices go out on the 1st",
          suggested_project_id: projects[0]?.id,
          confidence: 0.9,
          reason: "billing\u200b work; password: hunter2butlonger",
        }),
        textReply("noted"),
      );
      await chat(u.key, { message: "invoices go out on the 1st", session_id: turn.sessionId });
      expect((await activityOf(u.key))[0]).toMatchObject({ action: "scope_memory", reason: "billing work; password: [REDACTED]" });
    },
    T,
  );

  it(
    "scopes a memory on a confident suggestion, keeps a weak one at user level for review, and retrieval never crosses projects",
    async () => {
      const u = await createUser();
      const podcast = await newProject(u.key, "Podcast");
      const garden = await newProject(u.key, "Garden");
      await script(
        u.id,
        toolCall(
          "suggest_project_for_memory",
          { memory_content: "The podcast co-host is Sam Okafor", suggested_project_id: podcast.id, confidence: 0.9, reason: "about the show" },
          "toolu_s1",
        ),
        toolCall(
          "suggest_project_for_memory",
          { memory_content: "The user records audio late at night", suggested_project_id: podcast.id, confidence: 0.4, reason: "might be the show" },
          "toolu_s2",
        ),
        textReply("Noted both."),
      );
      const turn = await chat(u.key, { message: "Sam Okafor co-hosts; I record late at night" });
      expect(turn.events.filter((e) => e.type === "memory_saved")).toHaveLength(2);

      const facts = await (await userD1(u.id)).prepare("SELECT text, project_id FROM facts WHERE user_id = ? ORDER BY text").bind(u.id).all();
      expect(facts.results).toEqual([
        { text: "The podcast co-host is Sam Okafor", project_id: podcast.id },
        { text: "The user records audio late at night", project_id: null },
      ]);
      expect(await resultSent(u.id, "toolu_s2")).toMatchObject({ content: expect.stringContaining("only a suggestion") });
      const log = await activityOf(u.key);
      expect(log.slice(0, 2)).toMatchObject([
        { action: "suggest_memory", actor: "assistant", undoable: false, detail: { suggested_project_id: podcast.id, confidence: 0.4 } },
        { action: "scope_memory", actor: "assistant", undoable: true, detail: { suggested_project_id: podcast.id, confidence: 0.9 } },
      ]);

      // Retrieval: the podcast's facts reach podcast turns, never the garden's nor unscoped ones; user-level facts reach all.
      const askedIn = async (projectId: string | null) => {
        await script(u.id, textReply("ok"));
        await chat(u.key, { message: "Who is Sam Okafor, and when do I record audio?", ...(projectId ? { project_id: projectId } : {}) });
        const request = (await seen(u.id)).at(-1);
        // The prompt, and the facts recalled for the turn (search results in its message).
        return `${promptOf(request)}\n${recalledIn(request).join("\n")}`;
      };
      const inPodcast = await askedIn(podcast.id);
      expect(inPodcast).toContain("co-host is Sam Okafor");
      expect(inPodcast).toContain("records audio late at night");
      for (const prompt of [await askedIn(garden.id), await askedIn(null)]) {
        expect(prompt).not.toContain("co-host is Sam Okafor");
        expect(prompt).toContain("records audio late at night");
      }

      // MEMORY entries follow the same rule.
      const entry = await api(u.key, "POST", "/v1/brain/memory", { content: "Garden beds face south", project_id: garden.id });
      expect(entry.status).toBe(201);
      expect(await askedIn(podcast.id)).not.toContain("Garden beds face south");
      expect(await askedIn(garden.id)).toContain("Garden beds face south");

      // Undoing the confident filing moves the memory to user level.
      const scoped = log.find((a) => a.action === "scope_memory");
      expect((await api(u.key, "POST", `/v1/projects/activity/${scoped?.id}/undo`)).status).toBe(200);
      const factId = String(scoped?.detail.memory_id);
      expect(await factProject(factId)).toBeNull();
      const weak = log.find((a) => a.action === "suggest_memory");
      const refused = await api(u.key, "POST", `/v1/projects/activity/${weak?.id}/undo`);
      expect(refused.status).toBe(409);
    },
    T,
  );

  it(
    "pauses for approval before archiving a project the user created, and archives it only once allowed; its own projects it archives directly",
    async () => {
      const u = await createUser();
      const mine = await newProject(u.key, "Thesis");
      await script(u.id, toolCall("archive_project", { project_id: mine.id, reason: "No activity for months" }, "toolu_ar1"), textReply("Archived."));
      const first = await chatTurn(u.key, { message: "tidy up my projects" });
      expect(first.pending).toMatchObject({
        tool_name: "archive_project",
        pending_calls: [{ call_id: "toolu_ar1", runs: "server", needs_approval: true }],
      });
      expect(toolUses(first.events)[0]).toMatchObject({ name: "archive_project", reason: "Archiving a project: No activity for months" });
      expect((await projectsOf(u.key))[0]).toMatchObject({ id: mine.id, archived: false });
      expect((await activityOf(u.key)).map((a) => a.action)).toEqual(["create"]);

      const denied = await resume(u.key, first.sessionId, { call_id: "toolu_ar1", action: "deny" });
      expect(toolResults(denied.events)).toEqual([{ type: "tool_result", id: "toolu_ar1", name: "archive_project", ok: false }]);
      expect((await projectsOf(u.key))[0]?.archived).toBe(false);

      await script(u.id, toolCall("archive_project", { project_id: mine.id, reason: "You said it is done" }, "toolu_ar2"), textReply("Archived."));
      const second = await chatTurn(u.key, { message: "the thesis is done, archive it", session_id: first.sessionId });
      await resume(u.key, second.sessionId, { call_id: "toolu_ar2", action: "allow", tool_name: "archive_project" });
      expect(await projectsOf(u.key)).toEqual([]);
      expect((await activityOf(u.key))[0]).toMatchObject({ action: "archive", actor: "assistant", reason: "You said it is done" });

      // A project the assistant created is its own to archive: no pause.
      await script(u.id, toolCall("create_project", { name: "Side quest", reason: "a new goal" }, "toolu_c9"), textReply("Created."));
      await chat(u.key, { message: "new side quest" });
      const created = (await projectsOf(u.key)).find((p) => p.name === "Side quest");
      expect(created?.created_by).toBe("assistant");
      await script(u.id, toolCall("archive_project", { project_id: created?.id, reason: "dropped" }, "toolu_ar4"), textReply("Archived it."));
      const direct = await chatTurn(u.key, { message: "drop the side quest" });
      expect(direct.pending).toBeNull();
      expect(toolResults(direct.events)).toEqual(expect.arrayContaining([{ type: "tool_result", id: "toolu_ar4", name: "archive_project", ok: true }]));
    },
    T,
  );

  it(
    "lets the user undo what the assistant created: the project goes, the conversation returns to user level",
    async () => {
      const u = await createUser();
      await script(u.id, toolCall("create_project", { name: "Marathon", reason: "training plan" }, "toolu_m1"), textReply("Created."));
      const turn = await chat(u.key, { message: "I'm training for a marathon" });
      const [created] = await activityOf(u.key);
      const res = await api(u.key, "POST", `/v1/projects/activity/${created?.id}/undo`);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ id: created?.id, undoable: false });
      expect(await projectsOf(u.key, true)).toEqual([]);
      expect(await projectOfRow("sessions", turn.sessionId)).toBeNull();
      expect((await activityOf(u.key)).map((a) => [a.action, a.actor])).toEqual([
        ["delete", "user"],
        ["create", "assistant"],
      ]);
    },
    T,
  );
});

describe("the assistant's limits", () => {
  it(
    "cannot reach another user's project: the tool says not found, asks no approval, and nothing changes",
    async () => {
      const owner = await createUser();
      const other = await createUser();
      const theirs = await newProject(owner.key, "Their thesis");
      const mine = await newProject(other.key, "Mine");
      await script(
        other.id,
        toolCall("merge_projects", { source_project_id: theirs.id, target_project_id: mine.id, reason: "same thing" }, "toolu_x1"),
        toolCall("archive_project", { project_id: theirs.id, reason: "old" }, "toolu_x2"),
        textReply("I could not find that project."),
      );
      const turn = await chatTurn(other.key, { message: "clean up" });
      // The merge names the user's own project as target, so it waits for approval; allowed, it finds no source.
      expect(turn.pending).toMatchObject({ tool_name: "merge_projects" });
      const resumed = await resume(other.key, turn.sessionId, { call_id: "toolu_x1", action: "allow", tool_name: "merge_projects" });
      // Archiving a project it cannot see asks nothing: it just fails.
      expect(resumed.pending).toBeNull();
      for (const id of ["toolu_x1", "toolu_x2"]) expect(await resultSent(other.id, id)).toMatchObject({ is_error: true, content: "project not found" });
      expect(await projectsOf(owner.key)).toMatchObject([{ id: theirs.id, name: "Their thesis", archived: false }]);
      expect((await activityOf(owner.key)).map((a) => a.action)).toEqual(["create"]);
    },
    T,
  );

  it(
    "creates at most two projects in one turn; a third call is refused with a tool error",
    async () => {
      const u = await createUser();
      await script(
        u.id,
        toolCall("create_project", { name: "One", reason: "a" }, "toolu_n1"),
        toolCall("create_project", { name: "Two", reason: "b" }, "toolu_n2"),
        toolCall("create_project", { name: "Three", reason: "c" }, "toolu_n3"),
        textReply("Done."),
      );
      const turn = await chat(u.key, { message: "organise everything" });
      expect(toolResults(turn.events).map((r) => r.ok)).toEqual([true, true, false]);
      expect(await resultSent(u.id, "toolu_n3")).toMatchObject({ is_error: true, content: expect.stringContaining("At most 2") });
      expect((await projectsOf(u.key)).map((p) => p.name)).toEqual(["One", "Two"]);
    },
    T,
  );
});

/** No ANTHROPIC_API_KEY: the offline model answers. */
const OFFLINE = { ANTHROPIC_API_KEY: "" };

const textOf = (events: ChatEvent[]) => events.flatMap((e) => (e.type === "text" ? [e.delta] : [])).join("");

describe("the offline model", () => {
  it(
    "creates a project when a message clearly starts a distinct goal, and says why",
    async () => {
      const u = await createUser();
      await script(u.id, textReply("hello"));
      const opened = await chat(u.key, { message: "hello" });
      const events = await turnWithEnv(OFFLINE, { userId: u.id, sessionId: opened.sessionId, message: "I'm starting a podcast about true crime." });
      const create = toolUses(events).find((e) => e.name === "create_project");
      expect(create?.reason).toContain('Creating project "Podcast about true crime": You\'re starting a podcast');
      const text = textOf(events);
      expect(text).toContain("You're starting a podcast: a distinct goal");
      expect(text).toContain('I\'ve created the project "Podcast about true crime". This conversation is filed under it.');
      const [project] = await projectsOf(u.key);
      expect(project).toMatchObject({ name: "Podcast about true crime", created_by: "assistant" });
      expect(await projectOfRow("sessions", opened.sessionId)).toBe(project?.id);
      // What the same turn observed about the new goal belongs to the project as well.
      const observed = await (await userD1(u.id)).prepare("SELECT source_metadata->>'project_id' AS p FROM context_events WHERE user_id = ?").bind(u.id).all();
      expect(observed.results).toEqual([{ p: project?.id }]);
    },
    T,
  );

  it(
    "uses the project the user already has when the same goal comes up again, instead of failing to create it twice",
    async () => {
      const u = await createUser();
      await script(u.id, textReply("hello"));
      const first = await chat(u.key, { message: "hello" });
      await turnWithEnv(OFFLINE, { userId: u.id, sessionId: first.sessionId, message: "I'm starting a podcast about true crime." });
      const [project] = await projectsOf(u.key);
      const observedBefore = await (await userD1(u.id)).prepare("SELECT count(*) n FROM context_events WHERE user_id = ?").bind(u.id).first<{ n: number }>();

      // Another conversation, not filed under any project: the same goal again.
      await script(u.id, textReply("hello"));
      const second = await chat(u.key, { message: "hello" });
      const events = await turnWithEnv(OFFLINE, { userId: u.id, sessionId: second.sessionId, message: "I'm starting a podcast about true crime." });
      expect(toolUses(events).map((e) => e.name)).toEqual(["suggest_project_for_memory"]);
      expect(toolResults(events).map((e) => e.ok)).toEqual([true]);
      const text = textOf(events);
      expect(text).toContain('You already have the project "Podcast about true crime", so I\'m not creating another one');
      expect(text).toContain('I\'ve filed that under your project "Podcast about true crime".');
      expect(text).not.toContain("failed");
      expect((await projectsOf(u.key)).map((p) => p.id)).toEqual([project?.id]);
      // The statement is one memory, filed under the project (no observation of it beside).
      const facts = await (await userD1(u.id)).prepare("SELECT text, project_id FROM facts WHERE user_id = ?").bind(u.id).all();
      expect(facts.results).toEqual([{ text: "User is starting a podcast about true crime", project_id: project?.id }]);
      const observedAfter = await (await userD1(u.id)).prepare("SELECT count(*) n FROM context_events WHERE user_id = ?").bind(u.id).first<{ n: number }>();
      expect(observedAfter?.n).toBe(observedBefore?.n);

      // In the conversation filed under it, the same words create nothing either.
      const inside = await turnWithEnv(OFFLINE, { userId: u.id, sessionId: first.sessionId, message: "I'm starting a podcast about true crime." });
      expect(toolUses(inside).map((e) => e.name)).toEqual(["record_observation"]);
      expect(textOf(inside)).toContain('This conversation is already filed under your project "Podcast about true crime".');
      expect(await projectsOf(u.key)).toHaveLength(1);
    },
    T,
  );
});
