/** Coding lessons learned from transcripts: search, type and signal, unlearn and restore. */
import { type Api, ok, type Schemas } from "./api";
import { button, fill, h, newestOnly, when } from "./dom";
import { errorLine } from "./panel";

type Lesson = {
  id: string;
  type: string;
  signal: "HIGH" | "MED" | "LOW";
  title: string;
  content: string;
  project: string | null;
  unlearned: boolean;
  created_at: number;
  score?: number;
};

const TYPES = ["lesson", "antipattern", "decision", "pattern", "snippet"];

export function lessonsPanel(api: Api): HTMLElement {
  const summary = h("p", { class: "muted" });
  const results = h("div", { "aria-live": "polite" });
  const qInput = h("input", { type: "search", "aria-label": "Search lessons", placeholder: "Search lessons (e.g. “migrations”)" });
  const type = h(
    "select",
    { "aria-label": "Lesson type" },
    h("option", { value: "" }, "any type"),
    TYPES.map((t) => h("option", { value: t }, t)),
  );
  const form = h("form", { class: "inline wrap", role: "search" }, qInput, type, h("button", { type: "submit" }, "Search"));

  // A search answered after an unlearn or restore it was sent before must not show the old state:
  // every change is numbered, and a list applies the changes made after its request went out.
  const changed = new Map<string, { lesson: Lesson; n: number }>();
  let changes = 0;
  const latest = (l: Lesson, since: number) => {
    const c = changed.get(l.id);
    return c && c.n > since ? c.lesson : l;
  };

  // Unlearned lessons stay on screen until the next search, so Restore is one keypress away.
  const row = (l: Lesson) => {
    const li = h("li", { "data-id": l.id });
    const draw = (lesson: Lesson) =>
      fill(
        li,
        h("strong", null, lesson.title || lesson.content.slice(0, 60)),
        h(
          "small",
          { class: "muted" },
          ` ${lesson.type} · ${lesson.signal} signal${lesson.project ? ` · ${lesson.project}` : ""} · ${when(lesson.created_at)}${lesson.unlearned ? " · unlearned" : ""} `,
        ),
        h("p", null, lesson.content),
        button(
          lesson.unlearned ? "Restore" : "Unlearn",
          async () => {
            try {
              const params = { path: { id: lesson.id } };
              const r = await ok(lesson.unlearned ? api.POST("/v1/lessons/{id}/restore", { params }) : api.DELETE("/v1/lessons/{id}", { params }));
              changed.set(r.lesson.id, { lesson: r.lesson, n: ++changes });
              draw(r.lesson);
              li.querySelector("button")?.focus();
            } catch (err) {
              li.append(errorLine(err));
            }
          },
          { class: "secondary", "aria-label": `${lesson.unlearned ? "Restore" : "Unlearn"} lesson: ${(lesson.title || lesson.content).slice(0, 60)}` },
        ),
      );
    draw(l);
    return li;
  };

  const begin = newestOnly(results);
  async function load(): Promise<void> {
    const newest = begin();
    const since = changes;
    try {
      const { lessons } = await ok(
        api.GET("/v1/lessons", {
          params: { query: { q: qInput.value.trim() || undefined, type: (type.value || undefined) as Schemas["Lesson"]["type"] | undefined, limit: 50 } },
        }),
      );
      if (!newest()) return;
      const rows = lessons.map((l) => row(latest(l, since)));
      fill(results, rows.length ? h("ul", { class: "items", "aria-label": "Lessons" }, rows) : h("p", { class: "muted" }, "No lessons found."));
    } catch (err) {
      if (newest()) fill(results, errorLine(err));
    }
  }
  async function stats(): Promise<void> {
    try {
      const s = await ok(api.GET("/v1/lessons/stats"));
      const total = Object.values(s.by_type).reduce((a, b) => a + b, 0);
      summary.textContent = `${total} lessons · ${s.sync.transcripts} transcripts (${s.sync.pending} pending, ${s.sync.failed} failed) · last synced ${when(s.sync.last_synced_at)}`;
    } catch {
      summary.textContent = "";
    }
  }
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    void load();
  });
  void load();
  void stats();
  return h("section", { class: "panel", "aria-label": "Lessons" }, h("h3", null, "Lessons"), summary, form, results);
}
