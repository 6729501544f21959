/**
 * The offline model's project rule: a statement that clearly starts a distinct goal ("I'm starting a
 * podcast about true crime") creates a project for it, saying why. Kept apart from the other rules
 * (offline-rules.ts calls it); docs/offline-model.md describes it.
 */
// The same shapes as offline-rules.ts's, restated structurally: that file imports this one.
type ToolDef = { name: string };
type PlannedCall = { name: string; input: unknown };
type ToolOutcome = { name: string | undefined; content: string; isError: boolean };

export const CREATE_PROJECT = "create_project";

const STARTS =
  /\b(?:i'm|i am|we're|we are|i've|we've)\s+(?:just\s+)?(?:starting|launching|kicking off|beginning|setting up|started|launched)\s+(?:a|an|my|our)\s+(?:new\s+)?((?:[\p{L}\d'-]+\s*){1,3}?)(?:\s+(about|on|for|called|named)\s+(.+?))?\s*$/iu;

const MAX_NAME = 60;

const shorten = (s: string, max: number) => (s.length <= max ? s : `${s.slice(0, max).replace(/\s+\S*$/, "")}`);
const capitalise = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** The create_project call for a message that starts a distinct goal, if it does and the tool is offered. */
export function projectCall(said: string, tools: readonly ToolDef[]): { lead: string; call: PlannedCall } | null {
  if (!tools.some((t) => t.name === CREATE_PROJECT)) return null;
  for (const sentence of said.split(/[.!?\n]+/)) {
    const m = STARTS.exec(sentence.trim());
    const noun = m?.[1]?.trim().toLowerCase();
    if (!m || !noun) continue;
    const [link, topic] = [m[2]?.toLowerCase(), m[3]?.trim()];
    const named = (link === "called" || link === "named") && topic;
    const name = shorten(named ? topic : capitalise(topic ? `${noun} ${link} ${topic}` : noun), MAX_NAME);
    const description = topic && !named ? `A ${noun} ${link} ${topic}` : `A ${noun}`;
    const reason = `You're starting a ${noun}: a distinct goal that deserves its own project, so what you tell me about it stays together.`;
    return {
      lead: `That sounds like a new project. ${reason}`,
      call: { name: CREATE_PROJECT, input: { name, description: shorten(description, 1000), reason } },
    };
  }
  return null;
}

/** What the offline model says after create_project ran; null for other tools. */
export function describeProjectOutcome(o: ToolOutcome): string | null {
  if (o.name !== CREATE_PROJECT || o.isError) return null;
  const name = /"([^"]+)"/.exec(o.content)?.[1] ?? "it";
  const filed = /filed under it/.test(o.content) ? " This conversation is filed under it." : "";
  return `I've created the project "${name}".${filed} You can rename it, merge it or undo this from your project activity.`;
}
