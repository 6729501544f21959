/**
 * Everything after sign-in: the sections (overview, chat, memory, usage, account), the memory inspector's tabs and
 * the OAuth consent page.
 */
import { contextLogsPanel, erasePanel, exportPanel, usagePanel } from "./account-panels";
import type { Api } from "./api";
import { chatView } from "./chat";
import { connectedAppsPanel } from "./connected-apps";
import { consentView } from "./consent";
import { consentHandle } from "./consent-handle";
import { documentEditor, sitesPanel } from "./documents";
import { button, fill, h } from "./dom";
import { extensionPanels } from "./extensions";
import { factsPanel, memoryEntries, observationsPanel } from "./memory-panels";
import { INTRO } from "./memory-words";
import { overviewPanel } from "./overview";
import { workingAndScaffold } from "./working-memory";

const app = document.getElementById("app") as HTMLElement;

type Route = { id: string; label: string; render: () => HTMLElement; keep?: boolean };

/** The fact id of `#memory/facts/<id>`; none for a hash without one, or with one that does not decode. */
function factInHash(): string | undefined {
  try {
    return decodeURIComponent(location.hash.split("/")[2] ?? "") || undefined;
  } catch {
    return undefined;
  }
}

/** The signed-in app: the sections and the memory inspector. */
export function start(api: Api, page: { signOut(): void; toggleTheme(): void }): void {
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
        button("Theme", page.toggleTheme, { class: "secondary", "aria-label": "Switch light or dark theme" }),
        button("Sign out", page.signOut, { class: "secondary" }),
      ),
    ),
    main,
  );
  window.onhashchange = route;
  route();
}
