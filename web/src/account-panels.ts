/** Usage and cost per day (an inline SVG chart), all context logs, exporting and erasing everything. */
import { type Api, ok } from "./api";
import { renderContextLog } from "./context-log";
import { fill, h, svg, titledList, when } from "./dom";
import { erasedName } from "./memory-words";
import { asyncPanel, errorLine } from "./panel";

type Day = { day: string; cost_usd: number; input_tokens: number; output_tokens: number; calls: number };

const usd = (n: number) => `$${n.toFixed(n < 1 ? 4 : 2)}`;

/** Bars of cost per day for the last `days` days, zero days included; each bar has a <title> for hover and screen readers. */
export function costChart(byDay: Day[], days: number, today = new Date()): SVGSVGElement {
  const known = new Map(byDay.map((d) => [d.day, d]));
  const series = Array.from({ length: days }, (_, i) => {
    const d = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() - (days - 1 - i)));
    const key = d.toISOString().slice(0, 10);
    return { day: key, cost: known.get(key)?.cost_usd ?? 0, calls: known.get(key)?.calls ?? 0 };
  });
  const max = Math.max(...series.map((s) => s.cost), 0.0001);
  const W = 600;
  const H = 160;
  const bw = W / days;
  return svg(
    "svg",
    { viewBox: `0 0 ${W} ${H + 20}`, role: "img", "aria-label": `Estimated cost per day, last ${days} days; highest ${usd(max)}`, class: "chart" },
    series.map((s, i) => {
      const bh = s.cost ? Math.max(2, (s.cost / max) * H) : 0;
      return svg(
        "rect",
        { x: i * bw + 1, y: H - bh, width: Math.max(1, bw - 2), height: bh, class: "bar" },
        svg("title", null, `${s.day}: ${usd(s.cost)}, ${s.calls} calls`),
      );
    }),
    svg("line", { x1: 0, y1: H, x2: W, y2: H, class: "axis" }),
    svg("text", { x: 0, y: H + 16, class: "tick" }, series[0]?.day ?? ""),
    svg("text", { x: W, y: H + 16, class: "tick", "text-anchor": "end" }, series[series.length - 1]?.day ?? ""),
  );
}

export const usagePanel = (api: Api) =>
  asyncPanel("Usage", async () => {
    const u = await ok(api.GET("/v1/usage", { params: { query: { days: 30 } } }));
    // The server records the offline model's calls (no ANTHROPIC_API_KEY) under this name, at no cost.
    const offline = u.by_model?.find((m) => m.model === "offline");
    return [
      h("h3", null, "Usage and cost, last 30 days"),
      h("p", { class: "intro" }, "What the model calls made for you cost, estimated from list prices."),
      h(
        "p",
        null,
        `${usd(u.totals.cost_usd)} estimated · ${u.totals.calls} model calls · ${u.totals.input_tokens} input and ${u.totals.output_tokens} output tokens`,
      ),
      offline
        ? h("p", { class: "offline-usage" }, `${offline.calls} of these calls were answered by the offline model (no Anthropic key is set): no cost.`)
        : null,
      costChart(u.by_day, 30),
      h(
        "table",
        null,
        h("thead", null, h("tr", null, h("th", null, "Day"), h("th", null, "Calls"), h("th", null, "Tokens in / out"), h("th", null, "Cost"))),
        h(
          "tbody",
          null,
          [...u.by_day]
            .reverse()
            .map((d) =>
              h(
                "tr",
                null,
                h("td", null, d.day),
                h("td", null, d.calls),
                h("td", null, `${d.input_tokens} / ${d.output_tokens}`),
                h("td", null, usd(d.cost_usd)),
              ),
            ),
        ),
      ),
    ];
  });

export const contextLogsPanel = (api: Api) =>
  asyncPanel("Context logs", async () => {
    const [{ context_logs }, { sessions }] = await Promise.all([
      ok(api.GET("/v1/memory/context-logs", { params: { query: { limit: 20 } } })),
      ok(api.GET("/v1/sessions", { params: { query: { limit: 100 } } })).catch(() => ({ sessions: [] as { id: string; title: string | null }[] })),
    ]);
    // Conversations by their titles, as the chat lists them: an id means nothing to a person.
    const titles = new Map(sessions.map((s) => [s.id, s.title || "untitled conversation"]));
    const where = (id: string | null) => (id ? `in “${titles.get(id) ?? "a deleted conversation"}”` : "outside a conversation");
    return [
      h("h3", null, "What each answer was shown"),
      context_logs.length
        ? context_logs.map((l) =>
            h("details", { class: "log-entry" }, h("summary", null, `${when(l.created_at)} · ${where(l.session_id)}`), renderContextLog(l)),
          )
        : h("p", { class: "muted" }, "No turns yet."),
    ];
  });

/** Export: the archive of GET /v1/export, saved as a file (docs/account.md). */
export function exportPanel(api: Api): HTMLElement {
  const out = h("p", { role: "status" });
  const button = h("button", { type: "button" }, "Download my data");
  button.addEventListener("click", async () => {
    button.disabled = true;
    fill(out, "Preparing your archive…");
    try {
      const blob = await ok(api.GET("/v1/export", { parseAs: "blob" }));
      const url = URL.createObjectURL(blob);
      h("a", { href: url, download: `engram-export-${new Date().toISOString().slice(0, 10)}.jsonl` }).click();
      // The browser reads the file after the click returns: the URL is released a while later.
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
      fill(out, `Downloaded ${(blob.size / 1024).toFixed(0)} KB.`);
    } catch (err) {
      fill(out, errorLine(err, "span"));
    } finally {
      button.disabled = false;
    }
  });
  return h(
    "section",
    { class: "panel", "aria-label": "Export your data" },
    h("h3", null, "Export your data"),
    h(
      "p",
      null,
      "One file (JSON Lines) with everything engram holds for you: documents and their versions, MEMORY, working memory, facts, observations, projects, lessons, conversations and settings. Importing it (POST /v1/import) brings it back, here or on another server.",
    ),
    button,
    out,
  );
}

const PHRASE = "erase everything";

/** Erase: the user types the phrase, the server answers with a receipt of what went and what stays. */
export function erasePanel(api: Api, onErased: () => void): HTMLElement {
  const out = h("div", { role: "status" });
  const input = h("input", { id: "erase-confirm", autocomplete: "off", "aria-describedby": "erase-help" });
  const submit = h("button", { type: "submit", class: "danger", disabled: true }, "Erase everything");
  input.addEventListener("input", () => {
    submit.disabled = input.value.trim().toLowerCase() !== PHRASE;
  });
  const form = h(
    "form",
    { class: "stack" },
    h(
      "p",
      { id: "erase-help" },
      `Deletes SOUL and BIBLE, MEMORY notes, working memory and the profile, facts, observations, conversations and context logs. It cannot be undone. Type “${PHRASE}” to confirm.`,
    ),
    h("label", { for: "erase-confirm" }, "Confirmation"),
    input,
    submit,
  );
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    if (submit.disabled) return;
    submit.disabled = true;
    try {
      const r = await ok(api.DELETE("/v1/memory"));
      input.value = "";
      fill(
        out,
        h("h4", null, `Erased at ${when(r.erased_at)}. Receipt:`),
        h(
          "table",
          { class: "receipt" },
          h(
            "tbody",
            null,
            Object.entries(r.erased).map(([k, v]) =>
              h("tr", null, h("th", { scope: "row" }, erasedName(k)), h("td", null, v === true ? "cleared" : v === false ? "nothing to clear" : String(v))),
            ),
          ),
        ),
        r.kept.length ? titledList("Kept", r.kept) : null,
        r.warnings?.length ? titledList("Still finishing", r.warnings) : null,
      );
      onErased();
    } catch (err) {
      fill(out, errorLine(err));
    }
  });
  return h("section", { class: "panel danger-zone", "aria-label": "Erase everything" }, h("h3", null, "Erase everything"), form, out);
}
