/** The engram web app: sign in with an API key, then chat and the memory inspector. Hash routes, no framework. */
import { contextLogsPanel, erasePanel, exportPanel, usagePanel } from "./account-panels";
import { type Api, ApiError, connect, explain, ok } from "./api";
import { clearKey, storedKey, storeKey } from "./auth";
import { chatView } from "./chat";
import { connectedAppsPanel } from "./connected-apps";
import { consentHandle, consentView } from "./consent";
import { documentEditor, sitesPanel } from "./documents";
import { button, fill, h } from "./dom";
import { extensionPanels } from "./extensions";
import { factsPanel, memoryEntries, observationsPanel } from "./memory-panels";
import { INTRO } from "./memory-words";
import { overviewPanel } from "./overview";
import { workingAndScaffold } from "./working-memory";

const app = document.getElementById("app") as HTMLElement;

/** Light / dark: follows the system unless the user picked one (a preference, not a secret). */
function applyTheme(): void {
  const t = localStorage.getItem("engram.theme");
  if (t === "light" || t === "dark") document.documentElement.dataset.theme = t;
  else delete document.documentElement.dataset.theme;
}
function toggleTheme(): void {
  const dark = document.documentElement.dataset.theme ? document.documentElement.dataset.theme === "dark" : matchMedia("(prefers-color-scheme: dark)").matches;
  localStorage.setItem("engram.theme", dark ? "light" : "dark");
  applyTheme();
}

function signIn(message = ""): void {
  const key = h("input", { id: "api-key", type: "password", autocomplete: "off", required: true, "aria-describedby": "key-help" });
  const remember = h("input", { id: "remember", type: "checkbox" });
  const error = h("p", { class: "error", role: "alert" }, message);
  const form = h(
    "form",
    { class: "signin stack" },
    h("h1", null, "engram"),
    h("label", { for: "api-key" }, "API key"),
    key,
    h(
      "p",
      { id: "key-help", class: "muted" },
      "Your engram API key. It stays in this tab (sessionStorage) unless you tick “remember me”; signing out removes it.",
    ),
    h("label", null, remember, " Remember me on this device"),
    h("button", { type: "submit" }, "Sign in"),
    error,
  );
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const api = connect(key.value.trim());
    try {
      await ok(api.GET("/v1/overview"));
      storeKey(key.value.trim(), remember.checked);
      start(session(key.value.trim()));
    } catch (err) {
      // Here a 401 is the key just typed, not one that stopped working: say what to check, not to sign out.
      error.textContent =
        err instanceof ApiError && err.status === 401 ? "That API key was not accepted. Check that you pasted all of it, or ask for a new one." : explain(err);
      key.focus();
    }
  });
  fill(app, h("main", { id: "main" }, form));
  key.focus();
}

/** The API client of a signed-in user: a key that stops working signs them out, saying why. */
const session = (key: string) =>
  connect(key, () => {
    clearKey();
    location.hash = "";
    signIn("Your API key is no longer accepted (revoked or rotated). Sign in with a current key.");
  });

type Route = { id: string; label: string; render: () => HTMLElement; keep?: boolean };

/** The fact id of `#memory/facts/<id>`; none for a hash without one, or with one that does not decode. */
function factInHash(): string | undefined {
  try {
    return decodeURIComponent(location.hash.split("/")[2] ?? "") || undefined;
  } catch {
    return undefined;
  }
}

function start(api: Api): void {
  const memoryTabs: Route[] = [
    { id: "soul", label: "SOUL", render: () => documentEditor(api, null, "SOUL") },
    { id: "sites", label: "BIBLE & HEARTBEAT", render: () => sitesPanel(api) },
    { id: "entries", label: "MEMORY & review", render: () => memoryEntries(api) },
    { id: "working", label: "Working memory & scaffold", render: () => workingAndScaffold(api) },
    // #memory/facts/<id>: that fact first (where an answer's "Used memory" links).
    { id: "facts", label: "Facts", render: () => factsPanel(api, factInHash()) },
    { id: "observations", label: "Observations", render: () => observationsPanel(api) },
    { id: "context", label: "Context logs", render: () => contextLogsPanel(api) },
    ...extensionPanels.map((p) => ({ id: p.id, label: p.label, render: () => p.render(api) })),
  ];
  const signOut = () => {
    clearKey();
    location.hash = "";
    signIn("Signed out.");
  };
  const routes: Route[] = [
    { id: "overview", label: "Overview", render: () => overviewPanel(api) },
    { id: "chat", label: "Chat", render: () => chatView(api), keep: true },
    { id: "memory", label: "Memory", render: () => memoryView() },
    { id: "usage", label: "Usage", render: () => usagePanel(api) },
    {
      id: "account",
      label: "Account",
      render: () =>
        h(
          "div",
          { class: "stack" },
          connectedAppsPanel(api),
          exportPanel(api),
          erasePanel(api, () => kept.delete("chat")),
        ),
    },
  ];
  const kept = new Map<string, HTMLElement>();
  const main = h("main", { id: "main", tabindex: -1 });
  const nav = h(
    "nav",
    { "aria-label": "Sections" },
    h(
      "ul",
      null,
      routes.map((r) => h("li", null, h("a", { href: `#${r.id}`, "data-route": r.id }, r.label))),
    ),
  );

  function memoryView(): HTMLElement {
    const sub = (location.hash.split("/")[1] ?? "soul").replace(/[^a-z]/g, "");
    const current = memoryTabs.find((t) => t.id === sub) ?? (memoryTabs[0] as Route);
    return h(
      "div",
      { class: "memory" },
      h("h2", { class: "visually-hidden" }, `Memory: ${current.label}`),
      h(
        "nav",
        { "aria-label": "Memory", class: "subnav" },
        h(
          "ul",
          null,
          memoryTabs.map((t) => h("li", null, h("a", { href: `#memory/${t.id}`, "aria-current": t === current ? "page" : false }, t.label))),
        ),
      ),
      INTRO[current.id] ? h("p", { class: "intro" }, INTRO[current.id]) : null,
      current.render(),
    );
  }

  function route(): void {
    // An app asking to connect (OAuth consent): the page of its own, outside the sections.
    const handle = consentHandle(location.hash);
    if (handle) {
      fill(main, consentView(api, handle));
      document.title = "Connect an app · engram";
      return;
    }
    const id = location.hash.slice(1).split("/")[0] || "overview";
    const r = routes.find((x) => x.id === id) ?? (routes[0] as Route);
    for (const a of nav.querySelectorAll("a")) {
      if (a.dataset.route === r.id) a.setAttribute("aria-current", "page");
      else a.removeAttribute("aria-current");
    }
    let view = r.keep ? kept.get(r.id) : undefined;
    if (!view) {
      view = r.render();
      if (r.keep) kept.set(r.id, view);
    }
    fill(main, view);
    document.title = `${r.label} · engram`;
  }

  fill(
    app,
    h("a", { href: "#main", class: "skip" }, "Skip to content"),
    h(
      "header",
      null,
      h("strong", { class: "brand" }, "engram"),
      nav,
      h(
        "div",
        { class: "row header-actions" },
        button("Theme", toggleTheme, { class: "secondary", "aria-label": "Switch light or dark theme" }),
        button("Sign out", signOut, { class: "secondary" }),
      ),
    ),
    main,
  );
  window.onhashchange = route;
  route();
}

applyTheme();
const key = storedKey();
if (key) start(session(key));
else signIn(consentHandle(location.hash) ? "An app asks to connect to your engram: sign in to review it." : "");
