/**
 * The offline model's project rule (docs/offline-model.md, rule 4): a statement that clearly starts a distinct
 * goal ("I'm starting a podcast about true crime") creates a project for it, saying why, unless the user already
 * has a project of that name: then it uses that one. The stand-in's English, registered through the capability
 * value; nothing on the production path imports it.
 */
import { thirdPerson } from "../lib/third-person";
import type { OfferedTool, OfflineRules, PlannedCall, ToolOutcome } from "../model/offline-rule";
import { createProjectTool, projectTools, suggestProjectTool } from "./tools";

const CREATE_PROJECT = createProjectTool.name;
const FILE_MEMORY = suggestProjectTool.name;

const STARTS =
  /\b(?:i'm|i am|we're|we are|i've|we've)\s+(?:just\s+)?(?:starting|launching|kicking off|beginning|setting up|started|launched)\s+(?:a|an|my|our)\s+(?:new\s+)?((?:[\p{L}\d'-]+\s*){1,3}?)(?:\s+(about|on|for|called|named)\s+(.+?))?\s*$/iu;

const MAX_NAME = 60;

const shorten = (s: string, max: number) => (s.length <= max ? s : `${s.slice(0, max).replace(/\s+\S*$/, "")}`);
const capitalise = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

type Project = { id: string; name: string };

/**
 * The user's projects as the turn's context lists them (`- <id> "<name>" (created by ...)`) and the one this
 * conversation belongs to: what the model is told, read the way a model would read it.
 */
function projectsInContext(context: string): { listed: Project[]; current: Project | null } {
  const listed = [...context.matchAll(/^- (\S+) "(.+)" \(created by (?:the user|you)\)/gm)].map((m) => ({ id: m[1] ?? "", name: m[2] ?? "" }));
  const current = /This conversation belongs to the project "(.+)" \((\S+?)\)(?:, archived)?:/.exec(context);
  return { listed, current: current ? { id: current[2] ?? "", name: current[1] ?? "" } : null };
}

const sameName = (a: string, b: string) => a.trim().toLowerCase() === b.trim().toLowerCase();

/**
 * What to do for a message that starts a distinct goal, if it does and project creation is offered: create the
 * project, or, when one of that name exists, use it (`fileStatement`: the statement is saved under it, so the
 * caller records no separate observation of it).
 */
export function projectCall(said: string, tools: readonly OfferedTool[], context = ""): { lead: string; calls: PlannedCall[]; fileStatement: boolean } | null {
  if (!tools.some((t) => t.name === CREATE_PROJECT)) return null;
  for (const raw of said.split(/[.!?\n]+/)) {
    const sentence = raw.trim();
    const m = STARTS.exec(sentence);
    const noun = m?.[1]?.trim().toLowerCase();
    if (!m || !noun) continue;
    const [link, topic] = [m[2]?.toLowerCase(), m[3]?.trim()];
    const named = (link === "called" || link === "named") && topic;
    const name = shorten(named ? topic : capitalise(topic ? `${noun} ${link} ${topic}` : noun), MAX_NAME);
    const known = projectsInContext(context);
    if (known.current && sameName(known.current.name, name))
      return { lead: `This conversation is already filed under your project "${known.current.name}".`, calls: [], fileStatement: false };
    const existing = known.listed.find((p) => sameName(p.name, name));
    if (existing) {
      const lead = `You already have the project "${existing.name}", so I'm not creating another one`;
      if (!tools.some((t) => t.name === FILE_MEMORY)) return { lead: `${lead}.`, calls: [], fileStatement: false };
      const input = {
        memory_content: thirdPerson(sentence),
        suggested_project_id: existing.id,
        confidence: 0.9,
        reason: `It belongs to your project "${existing.name}".`,
      };
      return { lead: `${lead}: I'll file this under it.`, calls: [{ name: FILE_MEMORY, input }], fileStatement: true };
    }
    const description = topic && !named ? `A ${noun} ${link} ${topic}` : `A ${noun}`;
    const reason = `You're starting a ${noun}: a distinct goal that deserves its own project, so what you tell me about it stays together.`;
    return {
      lead: `That sounds like a new project. ${reason}`,
      calls: [{ name: CREATE_PROJECT, input: { name, description: shorten(description, 1000), reason } }],
      fileStatement: false,
    };
  }
  return null;
}

/** What the offline model says after a project is created (or a statement filed under one); null for other tools. */
function describeProjectOutcome(o: ToolOutcome): string | null {
  if (o.isError) return null;
  if (o.name === FILE_MEMORY) {
    const under = /under project "(.+)"\./.exec(o.content)?.[1];
    return under ? `I've filed that under your project "${under}".` : null;
  }
  if (o.name !== CREATE_PROJECT) return null;
  const name = /"([^"]+)"/.exec(o.content)?.[1] ?? "it";
  const filed = /filed under it/.test(o.content) ? " This conversation is filed under it." : "";
  return `I've created the project "${name}".${filed} You can rename it, merge it or undo this from your project activity.`;
}

export const projectsOfflineRules: OfflineRules = {
  // Its rules speak for the project tools: the model's own "a tool named in the message" rule leaves them alone, so
  // "I work for Acme" no longer calls suggest_project_for_memory with nothing in it.
  tools: projectTools.map((t) => t.name),
  rules: [
    {
      stage: "statement",
      priority: 10,
      part: ({ said, tools, context }) => {
        const project = projectCall(said, tools, context);
        return project && { lead: project.lead, calls: project.calls, files: project.fileStatement };
      },
    },
    { stage: "outcome", priority: 10, say: describeProjectOutcome },
  ],
};
