/** Projects: the user's own list (create, rename, archive) and the assistant's activity log with undo. */
import { type Api, ok } from "./api";
import { button, h, when } from "./dom";
import { asyncPanel, errorLine } from "./panel";

type Project = { id: string; name: string; description: string | null; created_by: string; reason: string | null; archived: boolean; created_at: number };
type Activity = {
  id: string;
  action: string;
  actor: "assistant" | "user";
  reason: string | null;
  summary: string;
  undoable: boolean;
  undone_at: number | null;
  created_at: number;
};

export const projectsPanel = (api: Api) =>
  asyncPanel("Projects", async (reload) => {
    const [{ projects }, { activity }] = await Promise.all([
      ok(api.GET("/v1/projects", { params: { query: { include_archived: "true" } } })),
      ok(api.GET("/v1/projects/activity", { params: { query: { limit: 50 } } })),
    ]);
    const status = h("div", { "aria-live": "polite" });
    // Every action reloads the panel on success and says why in place on failure.
    const act = (run: () => Promise<unknown>) => async () => {
      try {
        await run();
        reload();
      } catch (err) {
        status.replaceChildren(errorLine(err));
      }
    };

    const name = h("input", { "aria-label": "New project name", placeholder: "Project name…", maxlength: 100 });
    const create = h("form", { class: "inline" }, name, h("button", { type: "submit" }, "Create project"));
    create.addEventListener("submit", (e) => {
      e.preventDefault();
      if (name.value.trim()) void act(() => ok(api.POST("/v1/projects", { body: { name: name.value.trim() } })))();
    });

    const rename = (p: Project) => {
      const input = h("input", { value: p.name, "aria-label": `New name for ${p.name}`, maxlength: 100 });
      const form = h("form", { class: "inline" }, input, h("button", { type: "submit" }, "Save"));
      form.addEventListener("submit", (e) => {
        e.preventDefault();
        const next = input.value.trim();
        if (next && next !== p.name) void act(() => ok(api.PATCH("/v1/projects/{id}", { params: { path: { id: p.id } }, body: { name: next } })))();
      });
      return h("details", null, h("summary", { "aria-label": `Rename ${p.name}` }, "Rename"), form);
    };

    const projectRow = (p: Project) =>
      h(
        "li",
        { "data-id": p.id },
        h("strong", null, p.name),
        p.archived ? h("small", { class: "muted" }, " (archived)") : null,
        h("small", { class: "muted" }, ` ${p.created_by === "assistant" ? "made by the assistant" : "made by you"} · ${when(p.created_at)} `),
        p.reason ? h("p", { class: "reason" }, `Why: ${p.reason}`) : null,
        rename(p),
        button(
          p.archived ? "Unarchive" : "Archive",
          act(() => ok(api.PATCH("/v1/projects/{id}", { params: { path: { id: p.id } }, body: { archived: !p.archived } }))),
          { class: "secondary", "aria-label": `${p.archived ? "Unarchive" : "Archive"} project ${p.name}` },
        ),
      );

    const activityRow = (a: Activity) =>
      h(
        "li",
        { "data-id": a.id },
        h("span", null, a.summary),
        h("small", { class: "muted" }, ` ${a.actor === "assistant" ? "assistant" : "you"} · ${when(a.created_at)}${a.undone_at ? " · undone" : ""} `),
        a.reason ? h("p", { class: "reason" }, `Reason: ${a.reason}`) : null,
        a.undoable
          ? button(
              "Undo",
              act(() => ok(api.POST("/v1/projects/activity/{id}/undo", { params: { path: { id: a.id } } }))),
              {
                class: "secondary",
                "aria-label": `Undo: ${a.summary.slice(0, 60)}`,
              },
            )
          : null,
      );

    return [
      h("h3", null, "Projects"),
      create,
      status,
      projects.length ? h("ul", { class: "items", "aria-label": "Your projects" }, projects.map(projectRow)) : h("p", { class: "muted" }, "No projects yet."),
      h("h3", null, "Activity"),
      h("p", { class: "muted" }, "What the assistant and you changed, newest first. Undo reverses one change."),
      activity.length
        ? h("ul", { class: "items", "aria-label": "Project activity" }, activity.map(activityRow))
        : h("p", { class: "muted" }, "No activity yet."),
    ];
  });
