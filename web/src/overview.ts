/** The first screen: counts and recent items across everything, from one call (GET /v1/overview). */
import { type Api, ok } from "./api";
import { alertLine, h, when } from "./dom";
import { asyncPanel } from "./panel";

/** Each count in words, a noun first as on the cards; any other key (and one that reads well as it is) reads as its words, capitalised. */
const LABELS: Record<string, string> = {
  sessions: "Conversations",
  memory_entries: "MEMORY notes",
  brain_documents: "SOUL and BIBLE documents",
  pending_proposals: "Changes to review",
  observations_pending: "Observations waiting",
  observations_processed: "Observations taken in",
  observations_failed: "Observations that failed",
  projects_archived: "Archived projects",
  lessons: "Coding lessons",
  transcripts_synced: "Transcripts read",
  transcripts_pending: "Transcripts waiting",
  transcripts_failed: "Transcripts that failed",
};
const label = (key: string) => LABELS[key] ?? key.charAt(0).toUpperCase() + key.slice(1).replace(/_/g, " ");

export const overviewPanel = (api: Api) =>
  asyncPanel("Overview", async () => {
    const o = await ok(api.GET("/v1/overview"));
    return [
      h("h2", null, "What engram knows about you"),
      h("p", { class: "intro" }, "Everything engram remembers for you, counted; open Memory to see, correct or forget any of it."),
      h(
        "dl",
        { class: "cards" },
        Object.entries(o.counts).map(([k, n]) => h("div", { class: "card", "data-count": k }, h("dt", null, label(k)), h("dd", null, n))),
      ),
      h("p", null, `Today: ${o.today.calls} model calls, $${o.today.cost_usd.toFixed(4)} estimated.`),
      o.unavailable.length ? alertLine(`Could not read: ${o.unavailable.join(", ")}. Reload to try again.`) : null,
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
