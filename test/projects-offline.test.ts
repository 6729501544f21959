import { describe, expect, it } from "vitest";
import { projectCall } from "../src/projects/offline-chat-rules";
import { planCalls } from "./offline-helpers";

const tools = [{ name: "create_project" }, { name: "record_observation" }];

describe("the offline model's project rule", () => {
  it("creates a project for a message that clearly starts a distinct goal, named after it, with a reason", () => {
    expect(projectCall("I'm starting a podcast about true crime.", tools)?.calls[0]?.input).toEqual({
      name: "Podcast about true crime",
      description: "A podcast about true crime",
      reason: "You're starting a podcast: a distinct goal that deserves its own project, so what you tell me about it stays together.",
    });
    expect(projectCall("Hi! We're launching a new cooking blog. Ideas?", tools)?.calls[0]?.input).toMatchObject({ name: "Cooking blog" });
    expect(projectCall("I've started a company called Acme Robotics", tools)?.calls[0]?.input).toMatchObject({
      name: "Acme Robotics",
      description: "A company",
    });
    const plan = planCalls("I'm starting a podcast about true crime", tools);
    expect(plan?.lead).toMatch(/^That sounds like a new project\. You're starting a podcast/);
    expect(plan?.calls.map((c) => c.name)).toEqual(["create_project", "record_observation"]);
  });

  it("creates nothing for questions, ordinary statements, or when the tool is not offered", () => {
    for (const said of [
      "Am I starting a podcast?",
      "What if I'm starting a podcast about cats?",
      "I'm starting to feel tired",
      "My name is Ana",
      "I like podcasts",
    ]) {
      expect(planCalls(said, tools)?.calls.map((c) => c.name) ?? []).not.toContain("create_project");
    }
    expect(projectCall("I'm starting a podcast about true crime", [{ name: "record_observation" }])).toBeNull();
  });

  it("never calls a project tool with nothing in it because the message shares a word with its name", () => {
    const offered = [...tools, { name: "suggest_project_for_memory" }, { name: "rename_project" }];
    for (const said of ["I work for Acme", "My project is called Toolstream", "Please rename it"]) {
      for (const call of planCalls(said, offered)?.calls ?? []) {
        if (call.name !== "record_observation") expect(call.input).not.toEqual({});
      }
    }
  });

  it("uses a project of that name the user already has instead of creating it again", () => {
    const offered = [...tools, { name: "suggest_project_for_memory" }];
    const context = [
      "This conversation belongs to no project: you see user-level memory.",
      "The user's projects:",
      '- prj_pod1 "Podcast about true crime" (created by you): A podcast about true crime',
      '- prj_gym2 "Marathon" (created by the user)',
    ].join("\n");
    const plan = planCalls("I'm starting a podcast about TRUE CRIME.", offered, context);
    expect(plan?.lead).toBe("You already have the project \"Podcast about true crime\", so I'm not creating another one: I'll file this under it.");
    // Filed under it, once: no observation of the same statement beside it.
    expect(plan?.calls).toEqual([
      {
        name: "suggest_project_for_memory",
        input: {
          memory_content: "User is starting a podcast about TRUE CRIME",
          suggested_project_id: "prj_pod1",
          confidence: 0.9,
          reason: 'It belongs to your project "Podcast about true crime".',
        },
      },
    ]);
    // In a conversation already filed under it: nothing to create or file, the statement is observed as usual.
    const inside = context.replace(
      "This conversation belongs to no project: you see user-level memory.",
      'This conversation belongs to the project "Podcast about true crime" (prj_pod1): you see its memory and user-level memory.',
    );
    const again = planCalls("I'm starting a podcast about true crime", offered, inside);
    expect(again?.lead).toBe('This conversation is already filed under your project "Podcast about true crime".');
    expect(again?.calls.map((c) => c.name)).toEqual(["record_observation"]);
    // Another name still creates its project.
    expect(planCalls("I'm starting a podcast about cooking", offered, context)?.calls.map((c) => c.name)).toEqual(["create_project", "record_observation"]);
  });
});
