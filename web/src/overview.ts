/** The first screen: counts and recent items across everything, from one call (GET /v1/overview). */
import { type Api, ok } from "./api";
import { h, when } from "./dom";
import { asyncPanel } from "./panel";

const LABELS: Record<string, string> = {
  sessions: "Conversations",
  facts: "Facts",
  memory_entries: "MEMORY entries",
  brain_documents: "Brain documents",
  pending_proposals: "Proposals to review",
  observations_pending: "Observations waiting",
  observations_processed: "Observations processed",
  observations_failed: "Observations failed",
};
const label = (key: string) => LABELS[key] ?? key.replace(/_/g, " ");

export const overviewPanel = (api: Api) =>
  asyncPanel("Overview", async () => {
    const o = await ok(api.GET("/v1/overview"));
    return [
      h("h2", null, "What engram knows about you"),
      h(
        "dl",
        { class: "cards" },
        Object.entries(o.counts).map(([k, n]) => h("div", { class: "card", "data-count": k }, h("dt", null, label(k)), h("dd", null, n))),
      ),
      h("p", null, `Today: ${o.today.calls} model calls, $${o.today.cost_usd.toFixed(4)} estimated.`),
      o.unavailable.length ? h("p", { class: "error", role: "alert" }, `Could not read: ${o.unavailable.join(", ")}. Reload to try again.`) : null,
      h("h3", null, "Recent"),
      o.recent.length
        ? h(
            "ul",
            { class: "items" },
            o.recent.map((r) =>
              h("li", null, h("span", { class: "kind" }, r.kind.replace(/_/g, " ")), ` ${r.title} `, h("small", { class: "muted" }, when(r.at))),
            ),
          )
        : h("p", { class: "muted" }, "Nothing yet: start a chat."),
    ];
  });
