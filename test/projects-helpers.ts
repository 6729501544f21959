import { expect } from "vitest";
import { api } from "./helpers";
import { rowOnShards } from "./shard-helpers";

export type ProjectBody = { id: string; name: string; description: string | null; created_by: string; reason: string | null; archived: boolean };
export type ActivityBody = {
  id: string;
  project_id: string | null;
  action: string;
  actor: string;
  reason: string | null;
  summary: string;
  detail: Record<string, unknown>;
  undoable: boolean;
};

export async function newProject(key: string, name: string, description?: string): Promise<ProjectBody> {
  const res = await api(key, "POST", "/v1/projects", { name, ...(description ? { description } : {}) });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as ProjectBody;
}

export async function projectsOf(key: string, includeArchived = false): Promise<ProjectBody[]> {
  const res = await api(key, "GET", `/v1/projects${includeArchived ? "?include_archived=true" : ""}`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { projects: ProjectBody[] }).projects;
}

export async function activityOf(key: string): Promise<ActivityBody[]> {
  const res = await api(key, "GET", "/v1/projects/activity");
  expect(res.status).toBe(200);
  return ((await res.json()) as { activity: ActivityBody[] }).activity;
}

export async function importFact(key: string, text: string, projectId?: string): Promise<string> {
  const res = await api(key, "POST", "/v1/memory/facts", { facts: [{ text, ...(projectId ? { metadata: { project_id: projectId } } : {}) }] });
  expect(res.status, await res.clone().text()).toBe(201);
  const id = ((await res.json()) as { facts: { id: string }[] }).facts[0]?.id;
  if (!id) throw new Error("no fact id");
  return id;
}

/** Where a fact is filed, read from D1 (null: user level). */
export async function factProject(id: string): Promise<string | null | undefined> {
  const row = await rowOnShards<{ project_id: string | null }>("SELECT project_id FROM facts WHERE id = ?", id);
  return row ? row.project_id : undefined;
}

export async function projectOfRow(table: "brain_entries" | "sessions" | "brain_proposals", id: string): Promise<string | null | undefined> {
  const row = await rowOnShards<{ project_id: string | null }>(`SELECT project_id FROM ${table} WHERE id = ?`, id);
  return row ? row.project_id : undefined;
}
