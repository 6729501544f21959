/**
 * What the model is told about projects: standing guidance on when to create one and when not (the same
 * text every turn, so it sits in the cached system prompt), and per turn the user's projects and which
 * one this conversation belongs to.
 */
import { type ContextProvider, type ContextSection, contextRead } from "../core/context";
import { inlinePromptText } from "../lib/prompt-text";
import { projectsQuery } from "./store";
import { SUGGESTION_THRESHOLD } from "./suggest";

/** The list is for orientation; past this the model calls list_projects. */
export const LISTED_PROJECTS = 30;
const DESCRIPTION_CHARS = 160;

export const PROJECT_GUIDANCE = [
  "You can organise the user's work into projects. Each project keeps its own memory; memory at user level is seen everywhere.",
  "Create a project (create_project) when:",
  "- the user starts a distinct goal, initiative or domain (a podcast, a house move, a new product);",
  "- the conversation shows a clear boundary between topics;",
  "- the user asks you to organise something.",
  "Do not create one for:",
  "- single questions or quick tasks;",
  "- topics that fit an existing project (look at the list below, or call list_projects);",
  "- users who said they prefer a flat organisation.",
  "Always:",
  "- say why you created a project, in one sentence;",
  "- ask before significant reorganisation (merging, archiving, moving many memories);",
  "- respect the projects the user created: renaming, merging or archiving one, or moving memory in or out of it, waits for their approval.",
  `When you save a memory with suggest_project_for_memory, give a project only when you are confident (${SUGGESTION_THRESHOLD} ` +
    `or more); "user" for what cuts across projects.`,
].join("\n");

const guidance: ContextSection = { name: "projects.guidance", title: "Projects", body: PROJECT_GUIDANCE, stable: true };

export const projectsContextProvider: ContextProvider = {
  name: "projects",
  async build(ctx) {
    // Archived ones too: a conversation may continue in a project archived since.
    const [all] = await contextRead(ctx, [projectsQuery(ctx.db, ctx.userId, { includeArchived: true })]);
    const current = ctx.projectId ? all.find((p) => p.id === ctx.projectId) : undefined;
    const rows = all.filter((p) => p.archivedAt === null);
    const listed = rows.slice(0, LISTED_PROJECTS);
    // Names and descriptions are the user's (or an earlier turn's) text: one line each, escaped, so a description
    // cannot open a code fence or start a line of its own over the projects listed after it.
    const lines = listed.map((p) => {
      const who = p.createdBy === "user" ? "created by the user" : "created by you";
      const about = p.description ? `: ${inlinePromptText(p.description.slice(0, DESCRIPTION_CHARS))}` : "";
      return `- ${p.id} "${inlinePromptText(p.name)}" (${who})${about}`;
    });
    const more = rows.length > listed.length ? `\n(${rows.length - listed.length} more: call list_projects)` : "";
    const scope = current
      ? `This conversation belongs to the project "${inlinePromptText(current.name)}" (${current.id})${current.archivedAt ? ", archived" : ""}: ` +
        `you see its memory and user-level memory.`
      : "This conversation belongs to no project: you see user-level memory.";
    const body = `${scope}\n${lines.length ? `The user's projects:\n${lines.join("\n")}${more}` : "The user has no projects yet."}`;
    return [guidance, { name: "projects.list", title: "Your projects", body, ids: listed.map((p) => p.id) }];
  },
};
