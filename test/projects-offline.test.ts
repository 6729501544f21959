import { describe, expect, it } from "vitest";
import { projectCall } from "../src/model/offline-projects";
import { planCalls } from "../src/model/offline-rules";

const tools = [{ name: "create_project" }, { name: "record_observation" }];

describe("the offline model's project rule", () => {
  it("creates a project for a message that clearly starts a distinct goal, named after it, with a reason", () => {
    expect(projectCall("I'm starting a podcast about true crime.", tools)?.call.input).toEqual({
      name: "Podcast about true crime",
      description: "A podcast about true crime",
      reason: "You're starting a podcast: a distinct goal that deserves its own project, so what you tell me about it stays together.",
    });
    expect(projectCall("Hi! We're launching a new cooking blog. Ideas?", tools)?.call.input).toMatchObject({ name: "Cooking blog" });
    expect(projectCall("I've started a company called Acme Robotics", tools)?.call.input).toMatchObject({ name: "Acme Robotics", description: "A company" });
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
});
