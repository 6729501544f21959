/** "Why did it say that": the context log of one answer, with the exact system text the model was shown. */
import type { Api } from "./api";
import { explain, ok } from "./api";
import { h, when } from "./dom";

type Section = { name: string; ids: string[]; chars: number };
/** A document the turn gave the model to cite (a recalled fact), as the audit row keeps it. */
type Evidence = { source: string; title: string; text: string };
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
  };
};

export function renderContextLog(log: ContextLog): HTMLElement {
  const { sections = [], skipped = [], system, turn_context, evidence = [] } = log.injected;
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
      ? [
          h("h4", null, "Left out"),
          h(
            "ul",
            null,
            skipped.map((s) => h("li", null, `${s.name}: ${s.reason}`)),
          ),
        ]
      : null,
    h("h4", null, "Exact text: system prompt"),
    system === undefined ? h("p", { class: "muted" }, "Not recorded for this turn.") : h("pre", { class: "system-text", tabindex: 0 }, system),
    turn_context ? [h("h4", null, "Exact text: this turn's context"), h("pre", { class: "system-text", tabindex: 0 }, turn_context)] : null,
    evidence.length
      ? [
          h("h4", null, "Exact text: memory recalled for this turn (search results it could cite)"),
          h(
            "ul",
            null,
            evidence.map((d) => h("li", null, h("code", null, d.source), ` ${d.title}: ${d.text}`)),
          ),
        ]
      : null,
  );
}

/** The log of the turn that produced an answer: the newest log of the session written at or before `at`. */
export async function contextFor(api: Api, sessionId: string, at: number): Promise<HTMLElement> {
  try {
    const { context_logs } = await ok(api.GET("/v1/memory/context-logs", { params: { query: { session_id: sessionId, limit: 100 } } }));
    const log = context_logs.find((l) => l.created_at <= at) ?? context_logs[context_logs.length - 1];
    return log ? renderContextLog(log) : h("p", { class: "muted" }, "No context log for this answer.");
  } catch (err) {
    return h("p", { class: "error", role: "alert" }, explain(err));
  }
}
