/** Account: the apps connected to the user's memory through OAuth (one grant each), and disconnecting them. */
import { type Api, explain } from "./api";
import { button, h, when } from "./dom";
import { asyncPanel } from "./panel";

type Grant = { id: string; client_id: string; client_name: string; scope: string[]; created_at: number; expires_at: number | null };

const SCOPE_WORDS: Record<string, string> = {
  "memory:read": "read-only memory",
  "memory:write": "read and write memory",
  lessons: "coding lessons only",
};

export const connectedAppsPanel = (api: Api) =>
  asyncPanel("Connected apps", async (reload) => {
    const { grants } = await api.get<{ grants: Grant[] }>("/v1/oauth/grants");
    const row = (g: Grant) => {
      const error = h("p", { class: "error", role: "alert" });
      return h(
        "li",
        { "data-id": g.id },
        h(
          "span",
          null,
          h("strong", null, g.client_name),
          h("br"),
          h("small", { class: "muted" }, `${g.scope.map((s) => SCOPE_WORDS[s] ?? s).join(", ")} · connected ${when(g.created_at)}`),
        ),
        button(
          "Disconnect",
          async () => {
            try {
              await api.json("DELETE", `/v1/oauth/grants/${encodeURIComponent(g.id)}`);
              reload();
            } catch (err) {
              error.textContent = explain(err);
            }
          },
          { class: "secondary", "aria-label": `Disconnect ${g.client_name}` },
        ),
        error,
      );
    };
    return [
      h("h3", null, "Connected apps"),
      h("p", { class: "muted" }, "Apps you allowed to use your memory through MCP (OAuth). Disconnecting one stops its access at once."),
      grants.length ? h("ul", { class: "items", "aria-label": "Connected apps" }, grants.map(row)) : h("p", { class: "muted" }, "No apps connected."),
    ];
  });
