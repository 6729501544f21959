/** MEMORY entries and review proposals, facts and observations (working memory and the scaffold: working-memory.ts). */
import { type Api, ApiError, ok } from "./api";
import { button, fill, h, newestOnly, when } from "./dom";
import { asyncPanel, errorLine } from "./panel";

type Proposal = { id: string; target: string; content: string; diff: string | null; created_at: number };
type Fact = { id: string; text: string; created_at?: number; event_at?: number; superseded_by: string | null; score?: number };

export const memoryEntries = (api: Api) =>
  asyncPanel("MEMORY entries", async (reload) => {
    const [page, settings, proposals] = await Promise.all([
      ok(api.GET("/v1/brain/memory", { params: { query: { limit: 50 } } })),
      ok(api.GET("/v1/brain/settings")),
      ok(api.GET("/v1/brain/proposals", { params: { query: { status: "pending" } } })),
    ]);
    const add = h("input", { "aria-label": "New MEMORY entry", placeholder: "Something to remember…" });
    const addForm = h("form", { class: "inline" }, add, h("button", { type: "submit" }, "Add"));
    addForm.addEventListener("submit", async (e) => {
      e.preventDefault();
      if (!add.value.trim()) return;
      try {
        await ok(api.POST("/v1/brain/memory", { body: { content: add.value.trim() } }));
        reload();
      } catch (err) {
        addForm.append(errorLine(err));
      }
    });
    const review = h("input", { type: "checkbox", checked: settings.review_mode });
    review.addEventListener("change", async () => {
      await ok(api.PUT("/v1/brain/settings", { body: { review_mode: review.checked } })).catch(() => undefined);
      reload();
    });
    const decide = (p: Proposal, action: "approve" | "reject") => async () => {
      try {
        const params = { path: { id: p.id } };
        await (action === "approve"
          ? ok(api.POST("/v1/brain/proposals/{id}/approve", { params }))
          : ok(api.POST("/v1/brain/proposals/{id}/reject", { params })));
        reload();
      } catch (err) {
        document.getElementById(`proposal-${p.id}`)?.append(errorLine(err));
      }
    };
    return [
      h("h3", null, `MEMORY (${page.total} of ${page.cap})`),
      addForm,
      h(
        "ul",
        { class: "items" },
        page.entries.map((e) =>
          h(
            "li",
            null,
            h("span", null, e.content),
            h("small", { class: "muted" }, ` ${e.author} · ${when(e.created_at)} `),
            button(
              "Delete",
              async () => {
                await ok(api.DELETE("/v1/brain/memory/{id}", { params: { path: { id: e.id } } })).catch(() => undefined);
                reload();
              },
              { class: "secondary", "aria-label": `Delete MEMORY entry: ${e.content.slice(0, 40)}` },
            ),
          ),
        ),
      ),
      h("h3", null, "Review"),
      h("label", null, review, " Review mode: the assistant proposes changes; nothing is saved until you approve"),
      proposals.proposals.length
        ? h(
            "ul",
            { class: "items" },
            proposals.proposals.map((p) =>
              h(
                "li",
                { id: `proposal-${p.id}` },
                h("strong", null, p.target.toUpperCase()),
                h("pre", { class: "diff" }, p.diff ?? p.content),
                button("Approve", decide(p, "approve"), { "aria-label": `Approve proposal to ${p.target}` }),
                button("Reject", decide(p, "reject"), { class: "secondary", "aria-label": `Reject proposal to ${p.target}` }),
              ),
            ),
          )
        : h("p", { class: "muted" }, "No proposals waiting."),
    ];
  });

/** `focus`: a fact to show first (an answer's "Used memory" links here), by id. */
export function factsPanel(api: Api, focus?: string): HTMLElement {
  const results = h("div");
  const focused = h("div", { class: "fact-focus", tabindex: -1 });
  const gone = () => fill(focused, h("p", { class: "muted" }, "That fact is no longer in memory: it was forgotten."));
  const qInput = h("input", { type: "search", "aria-label": "Search facts", placeholder: "Search facts (e.g. “where do I live”)" });
  const after = h("input", { type: "date", "aria-label": "From date" });
  const before = h("input", { type: "date", "aria-label": "Until date" });
  const order = h(
    "select",
    { "aria-label": "Order" },
    ["relevance", "newest", "oldest"].map((o) => h("option", { value: o }, o)),
  );
  const form = h(
    "form",
    { class: "inline wrap", role: "search" },
    qInput,
    h("label", null, "from ", after),
    h("label", null, "until ", before),
    order,
    h("button", { type: "submit" }, "Search"),
    button("Newest", () => list(), { class: "secondary" }),
  );

  // What the last forget removed: a fact goes with the earlier statements it had replaced, which the list never shows.
  const status = h("p", { class: "status", role: "status" });
  const forgotten = (ids: readonly string[]) => {
    const earlier = ids.length - 1;
    return earlier > 0 ? `Forgotten, with ${earlier} earlier ${earlier === 1 ? "statement" : "statements"} it had replaced.` : "Forgotten.";
  };

  const row = (f: Fact) =>
    h(
      "li",
      { "data-id": f.id },
      h("span", null, f.text),
      h(
        "small",
        { class: "muted" },
        ` ${when(f.event_at ?? f.created_at)}${f.score !== undefined ? ` · score ${f.score.toFixed(2)}` : ""}${f.superseded_by ? " · superseded" : ""} `,
      ),
      button(
        "Forget",
        async () => {
          status.textContent = "";
          try {
            const out = await ok(api.DELETE("/v1/memory/facts/{id}", { params: { path: { id: f.id } } }));
            status.textContent = forgotten(out.forgotten);
            if (focus && out.forgotten.includes(focus)) gone();
            await (qInput.value.trim() ? search() : list());
          } catch (err) {
            results.append(errorLine(err));
          }
        },
        { class: "secondary", "aria-label": `Forget fact: ${f.text.slice(0, 60)}` },
      ),
    );
  const show = (facts: Fact[], note = "") =>
    fill(
      results,
      note ? h("p", { class: "muted" }, note) : null,
      facts.length ? h("ul", { class: "items" }, facts.map(row)) : h("p", { class: "muted" }, "No facts."),
    );

  const begin = newestOnly(results);
  async function list(): Promise<void> {
    const newest = begin();
    try {
      const { facts } = await ok(api.GET("/v1/memory/facts", { params: { query: { limit: 50 } } }));
      if (newest()) show(facts);
    } catch (err) {
      if (newest()) fill(results, errorLine(err));
    }
  }
  async function search(): Promise<void> {
    const newest = begin();
    try {
      const given = (v: string) => v.trim() || undefined;
      const query = {
        q: qInput.value.trim(),
        k: 20,
        after: given(after.value),
        before: given(before.value),
        order: given(order.value) as "relevance" | undefined,
      };
      const r = await ok(api.GET("/v1/memory/facts/search", { params: { query } }));
      if (!newest()) return;
      show(
        r.results,
        [r.weak ? "Weak match: probably nothing relevant is stored." : "", r.when ? `Time read from the query: ${r.when.phrase}.` : ""].join(" ").trim(),
      );
    } catch (err) {
      if (newest()) fill(results, errorLine(err));
    }
  }
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    status.textContent = "";
    void (qInput.value.trim() ? search() : list());
  });
  async function showFocus(id: string): Promise<void> {
    try {
      const { fact } = await ok(api.GET("/v1/memory/facts/{id}", { params: { path: { id } } }));
      fill(focused, h("h4", null, "The fact an answer used"), h("ul", { class: "items" }, row(fact)));
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) gone();
      else fill(focused, errorLine(err));
    }
    focused.focus();
  }
  if (focus) void showFocus(focus);
  void list();
  return h("section", { class: "panel", "aria-label": "Facts" }, h("h3", null, "Facts"), focused, form, status, results);
}

export const observationsPanel = (api: Api) =>
  asyncPanel("Observations", async (reload) => {
    const { events } = await ok(api.GET("/v1/memory/events", { params: { query: { limit: 50 } } }));
    const failed = events.some((e) => e.status === "failed");
    return [
      h("h3", null, "Observations"),
      failed
        ? button("Retry failed", async () => {
            await ok(api.POST("/v1/memory/events/retry")).catch(() => undefined);
            reload();
          })
        : null,
      events.length
        ? h(
            "table",
            null,
            h("thead", null, h("tr", null, h("th", null, "When"), h("th", null, "Type"), h("th", null, "Observation"), h("th", null, "Status"))),
            h(
              "tbody",
              null,
              events.map((e) =>
                h(
                  "tr",
                  null,
                  h("td", null, when(e.created_at)),
                  h("td", null, e.event_type),
                  h("td", null, e.content),
                  h("td", null, h("span", { class: `status-${e.status}` }, e.status), e.error ? h("small", null, ` ${e.error}`) : null),
                ),
              ),
            ),
          )
        : h("p", { class: "muted" }, "No observations yet."),
    ];
  });
