/** SOUL and BIBLE: read, edit (version-checked), history, diff against the current text, rollback. HEARTBEAT: read. */
import { type Api, ok as answer, explain, type Schemas } from "./api";
import { button, fill, h, when } from "./dom";
import { errorLine } from "./panel";

type Doc = { kind: string; site: string | null; content: string; version: number; stale: boolean; updated_at: number | null };

/** The typed calls of one document: SOUL (`site` null) or a site's BIBLE. */
function documentCalls(api: Api, site: string | null) {
  type Write = Schemas["BrainWrite"];
  type Rollback = Schemas["BrainRollback"];
  if (site === null)
    return {
      read: () => answer(api.GET("/v1/brain/soul")),
      versions: () => answer(api.GET("/v1/brain/soul/versions", { params: { query: { limit: 20 } } })),
      diff: (from: number) => answer(api.GET("/v1/brain/soul/diff", { params: { query: { from } } })),
      rollback: (body: Rollback) => answer(api.POST("/v1/brain/soul/rollback", { body })),
      write: (body: Write) => answer(api.PUT("/v1/brain/soul", { body })),
    };
  const path = { site };
  return {
    read: () => answer(api.GET("/v1/sites/{site}/bible", { params: { path } })),
    versions: () => answer(api.GET("/v1/sites/{site}/bible/versions", { params: { path, query: { limit: 20 } } })),
    diff: (from: number) => answer(api.GET("/v1/sites/{site}/bible/diff", { params: { path, query: { from } } })),
    rollback: (body: Rollback) => answer(api.POST("/v1/sites/{site}/bible/rollback", { params: { path }, body })),
    write: (body: Write) => answer(api.PUT("/v1/sites/{site}/bible", { params: { path }, body })),
  };
}

/** `site`: null for SOUL, else the site whose BIBLE this edits. */
export function documentEditor(api: Api, site: string | null, label: string): HTMLElement {
  const calls = documentCalls(api, site);
  const root = h("section", { class: "doc", "aria-label": label });
  const status = h("p", { class: "status", role: "status" });
  // Disabled until the current text has loaded, so an edit typed early is never overwritten by it.
  const text = h("textarea", { rows: 10, "aria-label": `${label} text`, disabled: true });
  const versionsBox = h("div", { class: "versions" });
  const diffBox = h("div", { class: "diff-box" });
  let doc: Doc | null = null;

  const fail = (err: unknown) => {
    status.textContent = explain(err);
    status.className = "status error";
  };
  const ok = (msg: string) => {
    status.textContent = msg;
    status.className = "status";
  };

  /** Shows a document the server returned (read or just written) and its history. */
  async function show(current: Doc): Promise<void> {
    doc = current;
    text.value = current.content;
    text.disabled = false;
    await versions(current);
  }

  async function load(): Promise<void> {
    try {
      await show(await calls.read());
    } catch (err) {
      fail(err);
    }
  }

  async function versions(current: Doc): Promise<void> {
    try {
      // Version 0: never written, so there is no history to ask for.
      const page = current.version ? await calls.versions() : { current: 0, versions: [] };
      fill(
        versionsBox,
        h("h4", null, "Versions"),
        page.versions.length
          ? h(
              "ol",
              { class: "version-list", reversed: true },
              page.versions.map((v) =>
                h(
                  "li",
                  null,
                  h(
                    "span",
                    null,
                    `v${v.version} · ${v.author} · ${when(v.created_at)} · ${v.chars} chars${v.note ? ` · ${v.note}` : ""}${v.version === page.current ? " (current)" : ""}`,
                  ),
                  v.version === page.current ? null : button("Diff", () => showDiff(v.version), { "aria-label": `Diff version ${v.version} with current` }),
                  v.version === page.current
                    ? null
                    : button("Roll back", () => rollback(v.version), { "aria-label": `Roll back to version ${v.version}`, class: "secondary" }),
                ),
              ),
            )
          : h("p", { class: "muted" }, "Never written."),
      );
    } catch (err) {
      fail(err);
    }
  }

  async function showDiff(from: number): Promise<void> {
    try {
      const d = await calls.diff(from);
      fill(
        diffBox,
        h("h4", null, `Changes from v${d.from} to v${d.to} (+${d.added} −${d.removed})`),
        h(
          "pre",
          { class: "diff", tabindex: 0 },
          d.diff
            ? d.diff.split("\n").map((line) => h("span", { class: line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : "" }, `${line}\n`))
            : "No difference.",
        ),
      );
    } catch (err) {
      fail(err);
    }
  }

  async function rollback(version: number): Promise<void> {
    try {
      const r = await calls.rollback({ version, expected_version: doc?.version ?? 0 });
      fill(diffBox);
      await show(r.document);
      ok(`Rolled back to v${version} (now v${r.document.version}).`);
    } catch (err) {
      fail(err);
    }
  }

  const form = h("form", { class: "stack" }, h("label", null, `${label}`, text), h("div", { class: "row" }, h("button", { type: "submit" }, `Save ${label}`)));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      const r = await calls.write({ content: text.value, expected_version: doc?.version ?? 0 });
      await show(r.document);
      ok(r.changed ? `Saved ${label} v${r.document.version}.${r.truncated ? " It is much shorter than before: check the diff." : ""}` : "No change.");
    } catch (err) {
      fail(err);
    }
  });
  fill(root, form, status, versionsBox, diffBox);
  void load();
  return root;
}

/** BIBLE and HEARTBEAT live per site: pick a site, then edit its BIBLE and read its HEARTBEAT. */
export function sitesPanel(api: Api): HTMLElement {
  const root = h("div");
  const body = h("div");
  (async () => {
    try {
      const { sites } = await answer(api.GET("/v1/sites"));
      if (!sites.length) return fill(root, h("p", { class: "muted" }, "No sites yet: BIBLE and HEARTBEAT are per site (POST /v1/sites)."));
      const select = h(
        "select",
        { "aria-label": "Site" },
        sites.map((s) => h("option", { value: s.id }, s.name ?? s.id)),
      );
      const show = async () => {
        const site = select.value;
        const hb = await answer(api.GET("/v1/sites/{site}/heartbeat", { params: { path: { site } } })).catch(() => null);
        fill(
          body,
          documentEditor(api, site, "BIBLE"),
          h("h3", null, "HEARTBEAT"),
          hb ? h("pre", { class: "system-text" }, hb.content || "(empty)") : h("p", { class: "muted" }, "No HEARTBEAT."),
          hb?.stale ? h("p", { class: "muted" }, "Stale: not synced recently.") : null,
        );
      };
      select.addEventListener("change", show);
      fill(root, h("label", null, "Site ", select), body);
      await show();
    } catch (err) {
      fill(root, errorLine(err));
    }
  })();
  return root;
}
