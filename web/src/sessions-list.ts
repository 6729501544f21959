/** The conversations list: open, rename (inline, Escape cancels), delete (after asking). */
import { type Api, ok } from "./api";
import { button, fill, h } from "./dom";
import { errorLine } from "./panel";

type Session = { id: string; title: string | null; pending: boolean; updated_at: number; message_count: number };
type Hooks = { open: (id: string) => void; current: () => string | null; deleted: (id: string) => void };

export function sessionsList(api: Api, hooks: Hooks) {
  const el = h("ul", { class: "sessions" });

  const markCurrent = (): void => {
    for (const li of el.querySelectorAll("li")) li.classList.toggle("current", li.dataset.id === hooks.current());
  };

  function item(s: Session): HTMLElement {
    const li = h("li", { "data-id": s.id });
    const title = s.title || "(untitled)";
    const show = () =>
      fill(
        li,
        h(
          "button",
          { type: "button", class: "session-open", onclick: () => hooks.open(s.id), "aria-label": `Open conversation ${title}`, title },
          h("span", { class: "session-title" }, title),
          s.pending ? h("span", { class: "badge" }, "waiting") : null,
        ),
        button("Rename", rename, { class: "icon", "aria-label": `Rename ${title}` }),
        button("Delete", confirmDelete, { class: "icon", "aria-label": `Delete ${title}` }),
      );
    function rename() {
      const field = h("input", { value: title, "aria-label": "New title", maxlength: 80 });
      const f = h("form", { class: "inline" }, field, h("button", { type: "submit" }, "Save"), button("Cancel", show, { class: "secondary" }));
      f.addEventListener("submit", async (e) => {
        e.preventDefault();
        try {
          await ok(api.PATCH("/v1/sessions/{id}", { params: { path: { id: s.id } }, body: { title: field.value } }));
          await refresh();
        } catch (err) {
          f.append(errorLine(err));
        }
      });
      field.addEventListener("keydown", (e) => e.key === "Escape" && show());
      fill(li, f);
      field.select();
    }
    function confirmDelete() {
      fill(
        li,
        h("span", null, `Delete “${title}”? `),
        button("Yes, delete", async () => {
          try {
            await ok(api.DELETE("/v1/sessions/{id}", { params: { path: { id: s.id } } }));
            hooks.deleted(s.id);
            await refresh();
          } catch (err) {
            li.append(errorLine(err));
          }
        }),
        button("No", show, { class: "secondary" }),
      );
    }
    show();
    return li;
  }

  async function refresh(): Promise<void> {
    try {
      const { sessions } = await ok(api.GET("/v1/sessions", { params: { query: { limit: 50 } } }));
      fill(el, sessions.length ? sessions.map(item) : h("li", { class: "muted" }, "No conversations yet."));
      markCurrent();
    } catch (err) {
      fill(el, errorLine(err, "li"));
    }
  }

  return { el, refresh, markCurrent };
}
