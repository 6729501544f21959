/**
 * The OAuth consent page (`#consent/<handle>`): an app (Claude, Cursor, ChatGPT...) asks to use the signed-in
 * user's memory through /mcp. The page shows who asks (its name is its own claim unless a domain vouches for
 * it), where the access goes, and the three things the user can grant; approving or denying sends the browser
 * back to the app. The server checks that the answer comes from the browser that opened the request.
 */
import { type Api, ok, type Schemas } from "./api";
import { fill, h } from "./dom";
import { errorLine } from "./panel";

type Consent = Schemas["OAuthConsent"];
type Scope = Consent["scopes"][number]["scope"];

/** Each scope in words (Account lists a connected app's scopes in the same words). */
export const SCOPE_LABELS: Record<Scope, string> = {
  "memory:read": "Read-only memory",
  "memory:write": "Read and write memory",
  lessons: "Coding lessons only",
};

/** The choice selected at first: what the app asked for when it names one, else the narrowest read. */
function preselected(requested: readonly string[]): Scope {
  if (requested.includes("memory:write")) return "memory:write";
  if (requested.includes("lessons") && !requested.includes("memory:read")) return "lessons";
  return "memory:read";
}

export function consentView(api: Api, handle: string): HTMLElement {
  const root = h("section", { class: "panel consent stack", "aria-label": "Connect an app", "aria-busy": "true" });
  const status = h("p", { role: "status" });
  ok(api.GET("/v1/oauth/consent/{handle}", { params: { path: { handle } } }))
    .then((c) => fill(root, page(api, handle, c, status)))
    .catch((err) => fill(root, h("h1", null, "Connect an app"), errorLine(err), h("p", null, h("a", { href: "#overview" }, "Go to engram"))))
    .finally(() => root.setAttribute("aria-busy", "false"));
  return root;
}

function page(api: Api, handle: string, c: Consent, status: HTMLElement) {
  const chosen = preselected(c.requested_scope);
  const choices = h(
    "fieldset",
    { class: "stack" },
    h("legend", null, "What it may do"),
    c.scopes.map((s) =>
      h(
        "label",
        { class: "choice" },
        h("input", { type: "radio", name: "scope", value: s.scope, checked: s.scope === chosen }),
        h("span", null, h("strong", null, SCOPE_LABELS[s.scope]), h("small", { class: "muted" }, s.description)),
      ),
    ),
  );
  const allow = h("button", { type: "submit", value: "approve" }, "Allow");
  const deny = h("button", { type: "submit", value: "deny", class: "secondary" }, "Deny");
  const form = h("form", { class: "stack" }, choices, h("div", { class: "row" }, allow, deny), status);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const decision = (e as SubmitEvent).submitter === deny ? "deny" : "approve";
    const scope = (form.querySelector("input[name=scope]:checked") as HTMLInputElement | null)?.value;
    allow.disabled = deny.disabled = true;
    status.textContent = decision === "approve" ? `Connecting ${c.client_name}…` : "Telling the app you declined…";
    try {
      const { redirect_to } = await ok(
        api.POST("/v1/oauth/consent/{handle}", {
          params: { path: { handle } },
          body: { decision, ...(decision === "approve" && scope ? { scope: scope as Scope } : {}) },
        }),
      );
      // replace: going back must not land on a request already answered.
      location.replace(redirect_to);
    } catch (err) {
      allow.disabled = deny.disabled = false;
      fill(status, errorLine(err, "span"));
    }
  });
  return [
    h("h1", null, `Connect ${c.client_name} to your engram?`),
    h(
      "p",
      null,
      c.client_domain
        ? ["Published by ", h("strong", null, c.client_domain), "."]
        : h("span", { class: "muted" }, "This app registered itself: engram cannot verify its name."),
      " Access will be sent to ",
      h("strong", null, c.redirect_host),
      ".",
    ),
    c.redirect_is_loopback
      ? h("p", { class: "note" }, "This sends access to an app on your computer. Continue only if you just started connecting from it.")
      : null,
    c.requested_scope.length ? h("p", { class: "muted" }, `It asked for: ${c.requested_scope.join(", ")}.`) : null,
    form,
    h("p", { class: "muted" }, "You can disconnect it at any time from Account, in Connected apps."),
  ];
}
