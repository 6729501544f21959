/** "Why did it say that": the context log of one answer, with the exact system text the model was shown. */
import type { Api } from "./api";
import { ok } from "./api";
import { h, titledList, when } from "./dom";
import { errorLine } from "./panel";

type Section = { name: string; ids: string[]; chars: number };
/** A document the turn gave the model to cite (a recalled fact), as the audit row keeps it. */
type Evidence = { source: string; title: string; text: string };
/** Something not remembered (the server never keeps its text): which kind, which rule or mode, through which path. */
type Withheld = { kind: string; why: "pattern" | "topic" | "consent"; rule: string; via: string; what: string; ref?: string };
export type ContextLog = {
  id: string;
  session_id: string | null;
  created_at: number;
  injected: {
    sections?: Section[];
    skipped?: { name: string; reason: string }[];
    system_chars?: number;
    system?: string;
    turn_context?: string;
    evidence?: Evidence[];
    withheld?: Withheld[];
  };
};

const withheldLine = (w: Withheld) =>
  w.why === "consent"
    ? `${w.what} (${w.kind}): not remembered, this kind is ${w.rule} in your settings · via ${w.via}`
    : `${w.what} (${w.kind}): not remembered, it matched your ${w.why} “${w.rule}” · via ${w.via}${w.ref ? ` · ${w.ref}` : ""}`;

const renderWithheld = (items: Withheld[]) => titledList("Kept out of memory", items.map(withheldLine));

export function renderContextLog(log: ContextLog, alsoWithheld: Withheld[] = []): HTMLElement {
  const { sections = [], skipped = [], system, turn_context, evidence = [] } = log.injected;
  const withheld = [...(log.injected.withheld ?? []), ...alsoWithheld];
  // A row that records only what was kept out of memory (a tool call, consolidation, an import).
  if (system === undefined && withheld.length && !sections.length)
    return h("div", { class: "context-log" }, h("p", { class: "muted" }, `At ${when(log.created_at)}`), renderWithheld(withheld));
  return h(
    "div",
    { class: "context-log" },
    h("p", { class: "muted" }, `Turn at ${when(log.created_at)} · ${log.injected.system_chars ?? "?"} characters of context`),
    h("h4", null, "Injected"),
    sections.length
      ? h(
          "ul",
          null,
          sections.map((s) => h("li", null, `${s.name}: ${s.chars} characters${s.ids.length ? ` (${s.ids.join(", ")})` : ""}`)),
        )
      : h("p", { class: "muted" }, "No sections."),
    skipped.length
      ? titledList(
          "Left out",
          skipped.map((s) => `${s.name}: ${s.reason}`),
        )
      : null,
    h("h4", null, "Exact text: system prompt"),
    system === undefined ? h("p", { class: "muted" }, "Not recorded for this turn.") : h("pre", { class: "system-text", tabindex: 0 }, system),
    turn_context ? [h("h4", null, "Exact text: this turn's context"), h("pre", { class: "system-text", tabindex: 0 }, turn_context)] : null,
    evidence.length
      ? titledList(
          "Exact text: memory recalled for this turn (search results it could cite)",
          evidence.map((d) => [h("code", null, d.source), ` ${d.title}: ${d.text}`]),
        )
      : null,
    withheld.length ? renderWithheld(withheld) : null,
  );
}

/** The log of the turn that produced an answer: the newest log of the session written at or before `at`. */
export async function contextFor(api: Api, sessionId: string, at: number): Promise<HTMLElement> {
  try {
    const { context_logs } = await ok(api.GET("/v1/memory/context-logs", { params: { query: { session_id: sessionId, limit: 100 } } }));
    const turns = context_logs.filter((l) => !l.injected.withheld);
    const log = turns.find((l) => l.created_at <= at) ?? turns[turns.length - 1];
    // What the turn's tool calls kept out of memory: the session's rows of withheld items since the turn began.
    const withheld = log ? context_logs.filter((l) => l.injected.withheld && l.created_at >= log.created_at && l.created_at <= at) : [];
    return log
      ? renderContextLog(
          log,
          withheld.flatMap((l) => (l.injected.withheld ?? []) as Withheld[]),
        )
      : h("p", { class: "muted" }, "No context log for this answer.");
  } catch (err) {
    return errorLine(err);
  }
}
