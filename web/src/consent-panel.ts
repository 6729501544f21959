/**
 * What the assistant may remember: a mode per kind of memory (remember on its own, ask me first, never) and the
 * topics and phrases never to remember, saved with PATCH /v1/settings.
 */
import { type Api, ok, type operations } from "./api";
import { fill, h } from "./dom";
import { asyncPanel, errorLine } from "./panel";

type Mode = "auto" | "ask" | "off";
type Rule = { kind: "pattern" | "topic"; text: string };
type Settings = { consent: Record<string, Mode>; sensitive: Rule[] };

const KINDS: { id: string; label: string; modes: Mode[] }[] = [
  { id: "brain", label: "Brain documents (SOUL, BIBLE)", modes: ["auto", "ask", "off"] },
  { id: "memory", label: "MEMORY entries", modes: ["auto", "ask", "off"] },
  { id: "facts", label: "Facts and observations", modes: ["auto", "ask", "off"] },
  // Lessons come from MCP clients and background extraction, where no one can be asked.
  { id: "lessons", label: "Coding lessons", modes: ["auto", "off"] },
];
const MODE_LABEL: Record<Mode, string> = { auto: "Remember on its own", ask: "Ask me first", off: "Never" };

/** "topic: health" or "pattern: Acme Corp", one a line, back to rules; a line without a prefix is a pattern. */
export function parseRules(text: string): Rule[] {
  return text
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const m = /^(topic|pattern)\s*:\s*(.+)$/i.exec(line);
      return m ? { kind: (m[1] ?? "pattern").toLowerCase() as Rule["kind"], text: (m[2] ?? "").trim() } : { kind: "pattern", text: line };
    });
}

const rulesText = (rules: Rule[]) => rules.map((r) => `${r.kind}: ${r.text}`).join("\n");

export const consentPanel = (api: Api) =>
  asyncPanel("What the assistant may remember", async () => {
    const current = (await ok(api.GET("/v1/settings"))) as Settings;
    const status = h("p", { role: "status" });
    const selects = KINDS.map((k) => {
      const select = h(
        "select",
        { id: `consent-${k.id}`, name: k.id },
        k.modes.map((m) => h("option", { value: m, selected: current.consent[k.id] === m }, MODE_LABEL[m])),
      );
      return { id: k.id, select, row: h("div", { class: "stack" }, h("label", { for: `consent-${k.id}` }, k.label), select) };
    });
    const rules = h("textarea", { id: "consent-sensitive", rows: 5, "aria-describedby": "consent-sensitive-help" }, rulesText(current.sensitive));
    const form = h(
      "form",
      { class: "stack" },
      h(
        "p",
        null,
        "“Ask me first” shows each save in the chat with its text, for you to allow or deny. “Never”: the assistant is not given the tool, and nothing of that kind is recorded.",
      ),
      selects.map((s) => s.row),
      h("label", { for: "consent-sensitive" }, "Never remember"),
      rules,
      h(
        "p",
        { id: "consent-sensitive-help", class: "muted" },
        "One rule per line. “pattern: Acme Corp” keeps out anything containing that phrase, in any case and any language. “topic: health” keeps out anything about it, as the assistant judges. What was kept out shows in the context logs, without its text.",
      ),
      h("button", { type: "submit" }, "Save"),
      status,
    );
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      try {
        const consent = Object.fromEntries(selects.map((s) => [s.id, s.select.value]));
        const body = { consent, sensitive: parseRules(rules.value) } as operations["updateMemorySettings"]["requestBody"]["content"]["application/json"];
        const saved = (await ok(api.PATCH("/v1/settings", { body }))) as Settings;
        rules.value = rulesText(saved.sensitive);
        fill(status, "Saved. It applies from the next thing the assistant would remember.");
      } catch (err) {
        fill(status, errorLine(err, "span"));
      }
    });
    return [h("h3", null, "What the assistant may remember"), form];
  });
