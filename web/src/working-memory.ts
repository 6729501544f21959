/**
 * Working memory and the scaffold, the two tiers injected into every turn: read them, correct them
 * (PUT /v1/memory/working, PATCH /v1/memory/scaffold), and their history of revisions: Restore an earlier one,
 * or Forget earlier versions (DELETE /v1/memory/runs/copies) so that no copy of corrected text is left.
 */
import { broughtBack, forgottenIn } from "../../src/lib/forgotten";
import { type Api, ApiError, explain, ok, type operations } from "./api";

type ScaffoldPatch = operations["patchScaffold"]["requestBody"]["content"]["application/json"]["scaffold"];

import { alertLine, button, type Child, fill, h, newestOnly, when } from "./dom";

type Working = { working_memory: string; words: number; updated_at: number; pending_events: number };
type Confidence = Record<string, { confidence?: number; by?: string }>;
type Scaffold = { scaffold: Record<string, unknown>; confidence: Confidence };
type Run = { rev: number; kind: string; created_at: number; summary: Record<string, unknown> | null; restorable?: boolean };

/** What the server caps the narrative at (the PUT answers 413 over it). */
const NARRATIVE_WORDS = 500;
/** How many of the latest revisions the server keeps a copy of the tiers for (older ones are listed, not restorable). */
const KEPT_COPIES = 100;
/** Revisions shown at a time; Show older asks for the next ones (the API pages by `before=<rev>`). */
const HISTORY_PAGE = 20;

/** The server's message as a sentence. */
const said = (err: ApiError) => `${err.message.replace(/[.\s]+$/, "")}.`;

/** Why a change was not saved, in words; what was typed stays where it was. */
function notSaved(err: unknown): string {
  if (err instanceof ApiError && err.code === "limit_exceeded") return `Not saved: ${said(err)} Shorten it and save again.`;
  if (err instanceof ApiError && err.code === "conflict") return `Not saved: ${said(err)} What you typed is still here; save it again.`;
  return `Not saved. ${explain(err)}`;
}

/** Why a restore did not happen: the server's own words for an unknown revision or one without a snapshot. */
function notRestored(err: unknown): string {
  if (err instanceof ApiError && (err.status === 404 || err.status === 409)) return `Not restored: ${said(err)}`;
  return `Not restored. ${explain(err)}`;
}

/** Runs `send` with `control` disabled, so a second click cannot send the same change twice. */
async function once(control: HTMLButtonElement | null | undefined, send: () => Promise<void>): Promise<void> {
  if (control) control.disabled = true;
  try {
    await send();
  } finally {
    if (control) control.disabled = false;
  }
}

const submitter = (e: Event) => (e as SubmitEvent).submitter as HTMLButtonElement | null;

/** A JSON value as nested lists: objects open as <details>, so the tree is keyboard-navigable. */
function tree(value: unknown): Child {
  if (value === null || typeof value !== "object") return h("span", { class: "leaf" }, String(value));
  const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
  if (!entries.length) return h("span", { class: "muted" }, "(empty)");
  return h(
    "ul",
    { class: "tree" },
    entries.map(([k, v]) =>
      v !== null && typeof v === "object"
        ? h("li", null, h("details", { open: true }, h("summary", null, k), tree(v)))
        : h("li", null, h("strong", null, `${k}: `), tree(v)),
    ),
  );
}

/** Whether `text` reads as JSON: such a string value is shown quoted, so saving it unchanged keeps it a string. */
const isJson = (text: string): boolean => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

/** A scaffold value as the user edits it: plain text for a string, indented JSON for anything else. */
const asText = (v: unknown): string => (typeof v === "string" && !isJson(v) ? v : JSON.stringify(v, null, 2));

/** Text that starts the way JSON lists, objects and quoted strings do: meant as JSON, so it must parse. */
const LOOKS_LIKE_JSON = /^\s*[[{"]/;

/**
 * What the user typed as a scaffold value: JSON when it parses, else the text itself as a string. Text that
 * opens like JSON but does not parse (`["cat", "dog"`) is refused with where it breaks, never kept as a string.
 */
function fromText(text: string): { value: unknown } | { error: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    if (!LOOKS_LIKE_JSON.test(text)) return { value: text };
    return {
      error: `this starts like JSON but is not valid JSON (${(err as Error).message}). Check the brackets, commas and quotes, or write it as plain text without them.`,
    };
  }
  return value === null ? { error: "null would remove the key: use Remove for that." } : { value };
}

/** A run's summary in a few words. */
function summarise(run: Run): string {
  const s = run.summary ?? {};
  const list = (v: unknown) => (Array.isArray(v) ? v.map(String) : []);
  const parts: string[] = [];
  if (typeof s.restored_rev === "number") parts.push(`restored revision ${s.restored_rev}`);
  const forgot = forgottenIn(s);
  if (forgot.keys.length + forgot.text.length) parts.push(`forgotten at your request: ${[...forgot.keys, ...forgot.text.map((t) => `“${t}”`)].join(", ")}`);
  const facts = list(s.facts).length;
  if (facts) parts.push(`${facts} ${facts === 1 ? "fact" : "facts"} learnt`);
  const changed = list(s.scaffold_changed);
  if (changed.length) parts.push(`scaffold: ${changed.join(", ")}`);
  const set = list(s.scaffold_set);
  if (set.length) parts.push(`set ${set.join(", ")}`);
  // Keys forgotten at the user's request are said so above, not again as removed.
  const removed = list(s.scaffold_removed).filter((k) => !forgot.keys.includes(k));
  if (removed.length) parts.push(`removed ${removed.join(", ")}`);
  if (typeof s.working_memory_words === "number") parts.push(`narrative ${run.kind === "edit" ? "rewritten, " : ""}${s.working_memory_words} words`);
  return parts.join("; ") || (run.kind === "erase" ? "everything erased" : "no change");
}

export function workingAndScaffold(api: Api): HTMLElement {
  /** Every revision listed so far (History may show them a page at a time). */
  const shownRuns: Run[] = [];
  const narrativeBox = h("div");
  const scaffoldBox = h("div");
  const historyBox = h("div");
  const status = h("p", { class: "status", role: "status" });
  let working: Working = { working_memory: "", words: 0, updated_at: 0, pending_events: 0 };
  let scaffold: Scaffold = { scaffold: {}, confidence: {} };

  // --- Working memory: shown, or edited in a textarea until Save succeeds or Cancel.
  function showNarrative(w: Working): void {
    working = w;
    const edit = button("Edit", editNarrative, { "aria-label": "Edit working memory" });
    fill(
      narrativeBox,
      h("h3", null, "Working memory"),
      h("p", { class: "muted" }, `${w.words} words · updated ${when(w.updated_at)} · ${w.pending_events} observations waiting`),
      h("pre", { class: "system-text" }, w.working_memory || "(empty)"),
      h("div", { class: "row" }, edit),
    );
  }

  function editNarrative(): void {
    const text = h("textarea", { rows: 10, "aria-label": "Working memory text" });
    text.value = working.working_memory;
    const problem = h("div");
    const form = h(
      "form",
      { class: "stack", "aria-label": "Edit working memory" },
      text,
      h("p", { class: "muted" }, `At most ${NARRATIVE_WORDS} words; empty clears it. Later consolidations start from your text.`),
      problem,
      h(
        "div",
        { class: "row" },
        h("button", { type: "submit" }, "Save"),
        button("Cancel", () => done(), { class: "secondary" }),
      ),
    );
    const done = () => {
      showNarrative(working);
      narrativeBox.querySelector<HTMLButtonElement>("button")?.focus();
    };
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      fill(problem);
      status.textContent = "";
      await once(submitter(e), async () => {
        try {
          working = await ok(api.PUT("/v1/memory/working", { body: { working_memory: text.value } }));
          done();
          status.textContent = "Saved working memory.";
          void loadHistory();
        } catch (err) {
          fill(problem, alertLine(notSaved(err)));
        }
      });
    });
    fill(narrativeBox, h("h3", null, "Working memory"), form);
    text.focus();
  }

  // --- Scaffold: one row per top-level key, each with Edit and Remove; a form to add a key.
  /** Sends one key's change and shows the scaffold the server answered; focus goes to that key's row, or to Add key once it is gone. */
  async function patch(key: string, value: unknown, done: string): Promise<void> {
    status.textContent = "";
    // `value` is JSON the user typed (parsed) or null to remove the key: what the scaffold's values are.
    const scaffold = { [key]: value } as ScaffoldPatch;
    showScaffold(await ok(api.PATCH("/v1/memory/scaffold", { body: { scaffold } })));
    // Said beside the keys, where the reader is, not at the top of the panel out of sight.
    keyStatus.textContent = done;
    const row = [...scaffoldBox.querySelectorAll<HTMLElement>("li[data-key]")].find((li) => li.dataset.key === key);
    (row?.querySelector("button") ?? scaffoldBox.querySelector<HTMLInputElement>("form input"))?.focus();
    void loadHistory();
  }

  /** Saves the value typed in `field` under `key` from a submitted form; a bad value or a refusal is shown in `problem`, the text kept. */
  async function saveTyped(e: SubmitEvent, key: string, field: HTMLTextAreaElement, problem: HTMLElement, done: string): Promise<void> {
    const parsed = fromText(field.value);
    if ("error" in parsed) return fill(problem, alertLine(`Not saved: ${parsed.error}`));
    await once(submitter(e), async () => {
      try {
        await patch(key, parsed.value, done);
      } catch (err) {
        fill(problem, alertLine(notSaved(err)));
      }
    });
  }

  function valueField(label: string, value: string): HTMLTextAreaElement {
    const field = h("textarea", { rows: Math.min(12, Math.max(2, value.split("\n").length)), "aria-label": label });
    field.value = value;
    return field;
  }

  function keyRow(key: string, value: unknown): HTMLLIElement {
    const li = h("li", { "data-key": key });
    const meta = scaffold.confidence[key];
    const note = [typeof meta?.confidence === "number" ? `confidence ${meta.confidence.toFixed(2)}` : "", meta?.by === "user" ? "set by you" : ""]
      .filter(Boolean)
      .join(", ");
    const suffix = note ? ` (${note})` : "";
    const show = () =>
      fill(
        li,
        value !== null && typeof value === "object"
          ? h("details", { open: true }, h("summary", null, key + suffix), tree(value))
          : [h("strong", null, `${key}: `), tree(value), suffix],
        " ",
        button("Edit", edit, { class: "secondary", "aria-label": `Edit scaffold key ${key}` }),
        button("Remove", confirmRemove, { class: "secondary", "aria-label": `Remove scaffold key ${key}` }),
      );
    function edit(): void {
      const field = valueField(`Value of ${key}`, asText(value));
      const problem = h("div");
      const form = h(
        "form",
        { class: "stack", "aria-label": `Edit scaffold key ${key}` },
        h("strong", null, key),
        field,
        problem,
        h("div", { class: "row" }, h("button", { type: "submit" }, `Save ${key}`), button("Cancel", show, { class: "secondary" })),
      );
      form.addEventListener("submit", async (e) => {
        e.preventDefault();
        await saveTyped(e, key, field, problem, `Saved ${key}.`);
      });
      fill(li, form);
      field.focus();
    }
    function confirmRemove(): void {
      fill(
        li,
        h("span", null, `Remove ${key} from the scaffold? `),
        button("Yes, remove", (e) =>
          once(e.currentTarget as HTMLButtonElement, async () => {
            try {
              await patch(key, null, `Removed ${key}.`);
            } catch (err) {
              li.append(alertLine(notSaved(err)));
            }
          }),
        ),
        button("No", show, { class: "secondary" }),
      );
    }
    show();
    return li;
  }

  function addForm(): HTMLFormElement {
    const key = h("input", { id: "scaffold-new-key", "aria-label": "New scaffold key", placeholder: "e.g. Pets", maxlength: 100 });
    const field = valueField("Value of the new key", "");
    field.id = "scaffold-new-value";
    const problem = h("div");
    const form = h(
      "form",
      { class: "stack", "aria-label": "Add a scaffold key" },
      h("h4", null, "Add a key"),
      h("label", { for: key.id }, "Key"),
      key,
      h("label", { for: field.id }, "Value"),
      field,
      h("p", { class: "muted" }, "The value is JSON (an object, a list, a number…) or plain text."),
      problem,
      h("div", { class: "row" }, h("button", { type: "submit" }, "Add key")),
    );
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      fill(problem);
      const name = key.value.trim();
      if (!name) return fill(problem, alertLine("Not saved: give the key a name."));
      if (Object.hasOwn(scaffold.scaffold, name)) return fill(problem, alertLine(`Not saved: ${name} is already in the scaffold; edit it there.`));
      await saveTyped(e, name, field, problem, `Added ${name}.`);
    });
    return form;
  }

  const keyStatus = h("p", { class: "status", role: "status" });
  function showScaffold(s: Scaffold): void {
    scaffold = s;
    keyStatus.textContent = "";
    const keys = Object.entries(s.scaffold);
    fill(
      scaffoldBox,
      h("h3", null, "Scaffold"),
      keys.length
        ? h(
            "ul",
            { class: "tree scaffold-keys", "aria-label": "Scaffold keys" },
            keys.map(([k, v]) => keyRow(k, v)),
          )
        : h("p", { class: "muted" }, "(empty)"),
      keyStatus,
      addForm(),
    );
  }

  // --- History: the memory's revisions, newest first, a page at a time; Restore on the earlier ones that kept a copy.
  const beginHistory = newestOnly(historyBox);
  async function loadHistory(): Promise<void> {
    const newest = beginHistory();
    try {
      const first = await runsPage();
      if (!newest()) return;
      fill(historyBox, h("h3", null, "History"), first.runs.length ? [revisionList(first), forgetCopies()] : h("p", { class: "muted" }, "No revisions yet."));
    } catch (err) {
      if (newest()) fill(historyBox, h("h3", null, "History"), alertLine(explain(err)));
    }
  }

  /** Revisions older than `before` (the newest when absent); one more than shown is asked for, to tell whether there are older ones. */
  async function runsPage(before?: number): Promise<{ runs: Run[]; older: boolean }> {
    const { runs } = await ok(api.GET("/v1/memory/runs", { params: { query: { limit: HISTORY_PAGE + 1, before } } }));
    return { runs: runs.slice(0, HISTORY_PAGE), older: runs.length > HISTORY_PAGE };
  }

  /** The first page, with Show older below it while there are older revisions. Its first row is the memory as it is now. */
  function revisionList(first: { runs: Run[]; older: boolean }): HTMLElement {
    const list = h(
      "ol",
      { class: "version-list", reversed: true, "aria-label": "Memory revisions" },
      first.runs.map((r, i) => runRow(r, i === 0)),
    );
    const more = h("div", { class: "row" });
    let oldest = first.runs[first.runs.length - 1]?.rev;
    const offer = (older: boolean) => fill(more, older ? button("Show older", showOlder, { class: "secondary", "aria-label": "Show older revisions" }) : null);
    async function showOlder(e: Event): Promise<void> {
      const control = e.currentTarget as HTMLButtonElement;
      await once(control, async () => {
        try {
          const next = await runsPage(oldest);
          // History was reloaded meanwhile (a save, a restore): this page belongs to a list no longer shown.
          if (!list.isConnected) return;
          const rows = next.runs.map((r) => runRow(r, false));
          list.append(...rows);
          oldest = next.runs[next.runs.length - 1]?.rev ?? oldest;
          offer(next.older);
          // Keyboard: carry on reading from the first revision just added.
          rows[0]?.focus();
        } catch (err) {
          offer(true);
          more.append(alertLine(`Older revisions not shown. ${explain(err)}`));
        }
      });
    }
    offer(first.older);
    return h("div", null, list, more);
  }

  /** Forget earlier versions: drops every revision's copy of the tiers; the current memory and the list stay. */
  function forgetCopies(): HTMLElement {
    const box = h("div", { class: "stack", "data-forget": "" });
    const show = () => fill(box, h("div", { class: "row" }, button("Forget earlier versions", confirm, { class: "secondary" })));
    function confirm(): void {
      const no = button(
        "No",
        () => {
          show();
          box.querySelector("button")?.focus();
        },
        { class: "secondary" },
      );
      fill(
        box,
        h(
          "p",
          null,
          `Forget every earlier version of working memory and the scaffold? Each revision keeps a copy of them as it left them (the latest ${KEPT_COPIES}), so text you corrected is still there. Afterwards nothing can be restored; the current memory stays as it is, and History still lists every revision.`,
        ),
        h(
          "div",
          { class: "row" },
          button("Yes, forget", (e) => once(e.currentTarget as HTMLButtonElement, forget)),
          no,
        ),
      );
      no.focus();
    }
    async function forget(): Promise<void> {
      status.textContent = "";
      try {
        const { cleared } = await ok(api.DELETE("/v1/memory/runs/copies"));
        await loadHistory();
        status.textContent = cleared ? `Forgot ${cleared} earlier ${cleared === 1 ? "version" : "versions"}.` : "There were no earlier versions to forget.";
        // Keyboard: the button pressed is gone with the old list; focus goes to its successor.
        historyBox.querySelector<HTMLButtonElement>("[data-forget] button")?.focus();
      } catch (err) {
        show();
        box.append(alertLine(`Nothing forgotten. ${explain(err)}`));
      }
    }
    show();
    return box;
  }

  /** What restoring revision `rev` would bring back of what was forgotten in the revisions listed after it. */
  async function wouldBringBack(rev: number): Promise<string[]> {
    const since = shownRuns.filter((r) => r.rev > rev).map((r) => forgottenIn(r.summary));
    if (!since.some((f) => f.keys.length + f.text.length)) return [];
    const { run } = await ok(api.GET("/v1/memory/runs/{rev}", { params: { path: { rev } } }));
    return broughtBack({ scaffold: run.scaffold, workingMemory: run.working_memory }, since);
  }

  /** A revision's row. The newest is the memory as it is now: restoring it would change nothing, so it offers no Restore. */
  function runRow(run: Run, current: boolean): HTMLLIElement {
    shownRuns.push(run);
    const li = h("li", { "data-rev": run.rev, tabindex: -1 });
    const note = current ? " (current)" : run.restorable ? "" : " (no copy kept)";
    const show = () =>
      fill(
        li,
        h("span", null, `Revision ${run.rev} · ${run.kind} · ${when(run.created_at)} · ${summarise(run)}${note}`),
        run.restorable && !current ? button("Restore", confirm, { class: "secondary", "aria-label": `Restore revision ${run.rev}` }) : null,
      );
    async function confirm(): Promise<void> {
      // Forgetting means forgotten: a restore that would bring back something forgotten since says what, first.
      const back = await wouldBringBack(run.rev);
      fill(
        li,
        h(
          "span",
          { class: back.length ? "error" : null },
          back.length
            ? `Revision ${run.rev} is from before you asked to forget ${back.join(", ")}. Restoring it brings ${back.length === 1 ? "that" : "those"} back. Restore anyway? `
            : `Put working memory and the scaffold back as revision ${run.rev} left them? Facts stay as they are. `,
        ),
        button(back.length ? "Yes, bring it back" : "Yes, restore", (e) => once(e.currentTarget as HTMLButtonElement, () => restore(back.length > 0))),
        button("No", show, { class: "secondary" }),
      );
      li.querySelector("button")?.focus();
    }
    async function restore(bringBack: boolean): Promise<void> {
      status.textContent = "";
      try {
        const r = await ok(
          api.POST("/v1/memory/runs/{rev}/restore", {
            params: { path: { rev: run.rev }, query: bringBack ? { bring_back_forgotten: "true" } : {} },
          }),
        );
        await load();
        status.textContent = `Restored revision ${r.restored} (now revision ${r.rev}).`;
      } catch (err) {
        show();
        li.append(alertLine(notRestored(err)));
      }
    }
    show();
    return li;
  }

  const root = h("section", { class: "panel", "aria-label": "Working memory and scaffold" }, status, narrativeBox, scaffoldBox, historyBox);
  /** Reads all three from the server and shows them; any editor left open is closed. */
  async function load(): Promise<void> {
    root.setAttribute("aria-busy", "true");
    try {
      const [w, s] = await Promise.all([ok(api.GET("/v1/memory/working")), ok(api.GET("/v1/memory/scaffold")), loadHistory()]);
      showNarrative(w);
      showScaffold(s);
    } catch (err) {
      fill(narrativeBox, alertLine(explain(err)));
    } finally {
      root.setAttribute("aria-busy", "false");
    }
  }
  void load();
  return root;
}
