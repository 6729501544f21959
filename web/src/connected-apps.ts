/** Account: the apps connected to the user's memory through OAuth (one grant each), and disconnecting them. */
import { type Api, explain, ok } from "./api";
import { SCOPE_LABELS } from "./consent";
import { button, h, when } from "./dom";
import { asyncPanel } from "./panel";

export const connectedAppsPanel = (api: Api) =>
  asyncPanel("Connected apps", async (reload) => {
    const { grants } = await ok(api.GET("/v1/oauth/grants"));
    const row = (g: (typeof grants)[number]) => {
      const error = h("p", { class: "error", role: "alert" });
      return h(
        "li",
        { "data-id": g.id },
        h(
          "span",
          null,
          h("strong", null, g.client_name),
          h("br"),
          h(
            "small",
            { class: "muted" },
            `${g.scope.map((s) => SCOPE_LABELS[s as keyof typeof SCOPE_LABELS]?.toLowerCase() ?? s).join(", ")} · connected ${when(g.created_at)}`,
          ),
        ),
        button(
          "Disconnect",
          async () => {
            try {
              await ok(api.DELETE("/v1/oauth/grants/{id}", { params: { path: { id: g.id } } }));
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
