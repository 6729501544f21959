/**
 * Chat: sessions (list, rename, delete), streamed turns with tool actions inline, approvals, the
 * page's own client tools, stop, and for every answer what the model was shown.
 */

import { AnswerView, SAVED } from "./answer-view";
import { type Api, explain, ok, type Schemas, type StreamEvent, stream, streamError } from "./api";
import { clientTool, declarations } from "./client-tools";
import { contextFor } from "./context-log";
import { button, fill, h } from "./dom";
import { sessionsList } from "./sessions-list";
import { citedFacts, storedCitedFacts } from "./used-memory";

/** The memory tool that always asks first: its prompt says what would be forgotten. */
const FORGET = "forget_memory";
type PendingCall = { call_id: string; tool_name: string; tool_input?: unknown; runs: "client" | "server"; needs_approval: boolean };
type Envelope = { session_id: string; call_id: string; pending_calls: PendingCall[] };
type Block = { type: string; text?: string; name?: string; citations?: unknown };
type Stored = { role: "user" | "assistant"; content: string | Block[]; created_at: number };
/**
 * `failed`: the turn started and the model failed in it (an `error` event other than a conflict), not a request
 * the server refused, nor a retry of an answer the conversation has moved on from.
 */
type Outcome = { kind: "done" } | { kind: "pending"; envelope: Envelope } | { kind: "error"; failed: boolean } | { kind: "cut" };

export function chatView(api: Api): HTMLElement {
  let sessionId: string | null = null;
  let controller: AbortController | null = null;

  const sessions = sessionsList(api, {
    open: (id) => openSession(id),
    current: () => sessionId,
    deleted: (id) => sessionId === id && newChat(),
  });
  const refreshList = sessions.refresh;
  const markCurrent = sessions.markCurrent;
  const log = h("div", { class: "log", role: "log", "aria-label": "Conversation" });
  const input = h("textarea", { id: "message", rows: 2, placeholder: "Message engram… (Enter sends, Shift+Enter for a new line)", "aria-label": "Message" });
  const send = h("button", { type: "submit" }, "Send");
  const stop = h("button", { type: "button", class: "secondary", disabled: true, onclick: () => stopTurn() }, "Stop");
  const form = h("form", { class: "composer" }, input, send, stop);

  const busy = (on: boolean) => {
    // Stop is about to be disabled: focus on it would fall to the page, so it goes back to the message box.
    if (!on && document.activeElement === stop) input.focus();
    send.disabled = on;
    stop.disabled = !on;
    log.setAttribute("aria-busy", String(on));
  };
  /**
   * Stop: the page stops reading at once, and tells the server, since a closed stream alone may not reach it
   * (the turn would run on). The next turn waits for that call, so it can never stop the next turn instead.
   */
  let stopping: Promise<unknown> = Promise.resolve();
  function stopTurn(): void {
    if (!controller) return;
    if (document.activeElement === stop) input.focus();
    if (sessionId) stopping = ok(api.POST("/v1/sessions/{id}/stop", { params: { path: { id: sessionId } } })).catch(() => undefined);
    controller.abort();
  }
  const scroll = () => log.lastElementChild?.scrollIntoView({ block: "end" });

  async function consume(events: AsyncGenerator<StreamEvent>, view: AnswerView): Promise<Outcome> {
    for await (const { event, data } of events) {
      if (event === "session" && typeof data.id === "string" && sessionId !== data.id) {
        sessionId = data.id;
        void refreshList();
      } else if (event === "text") view.text(String(data.delta ?? ""));
      else if (event === "thinking") view.thinking(String(data.delta ?? ""));
      else if (event === "notice") view.note(String(data.message ?? data.code), "progress");
      else if (event === "refusal")
        view.error(`The model declined to answer${data.explanation ? `: ${String(data.explanation)}` : "."} Rephrase, or start a new chat.`);
      else if (event === "tool_use") view.toolUse(String(data.id), String(data.name), String(data.reason ?? ""));
      else if (event === "tool_result") view.toolResult(String(data.id), data.ok === true);
      else if (event === "memory_saved")
        view.note(`${SAVED[String(data.target)] ?? `Saved (${String(data.target)})`}${data.truncated ? " — much shorter than before" : ""}`, "saved");
      else if (event === "memory_pending")
        view.note(`Proposed a change to ${String(data.target).toUpperCase()}: waiting for your review in Memory → Proposals`, "saved");
      else if (event === "citation")
        view.el.append(h("div", { class: "note" }, "Source: ", h("a", { href: String(data.url), rel: "noreferrer" }, String(data.title ?? data.url))));
      else if (event === "citations") view.cite(citedFacts(data.cited));
      else if (event === "done") return { kind: "done" };
      else if (event === "tool_pending") return { kind: "pending", envelope: data as unknown as Envelope };
      else if (event === "error") {
        view.error(explain(streamError(String(data.code), String(data.message))));
        return { kind: "error", failed: data.code !== "conflict" };
      }
      scroll();
    }
    return { kind: "cut" };
  }

  /** A new message, or the answer that resumes a session's pending call. */
  type Turn = { chat: Schemas["ChatRequest"] } | { resume: string; answer: Schemas["ToolResultRequest"] };
  const start = (turn: Turn, signal: AbortSignal) =>
    "chat" in turn
      ? api.POST("/v1/chat", { body: turn.chat, parseAs: "stream", signal })
      : api.POST("/v1/sessions/{id}/tool_result", { params: { path: { id: turn.resume } }, body: turn.answer, parseAs: "stream", signal });

  /** Runs one streamed request into an answer view, then whatever the outcome asks for. */
  async function run(turn: Turn, view: AnswerView): Promise<void> {
    await stopping;
    controller = new AbortController();
    busy(true);
    let outcome: Outcome;
    try {
      outcome = await consume(stream(start(turn, controller.signal)), view);
    } catch (err) {
      if (controller.signal.aborted) outcome = { kind: "cut" };
      else {
        view.error(explain(err));
        outcome = { kind: "error", failed: false };
      }
    } finally {
      busy(false);
    }
    const stopped = controller.signal.aborted;
    controller = null;
    if (outcome.kind === "done") addContextButton(view, Date.now());
    else if (outcome.kind === "pending") await answerPending(outcome.envelope, view);
    else if (outcome.kind === "error" && outcome.failed && "resume" in turn) {
      // The model failed after the answer: the server kept it, and the same answer continues the turn
      // (a tool is not run again).
      const again = button("Send the answer again", () => {
        again.remove();
        void run(turn, view);
      });
      view.el.append(again);
    } else if (outcome.kind === "cut") {
      view.note(
        stopped ? "Stopped. What was written so far is kept." : "The connection dropped before the answer ended. Reloading the conversation…",
        "progress",
      );
      // Reconnect-safe: the server kept the turn's state; read it back (a pending tool prompt included).
      if (!stopped && sessionId) await openSession(sessionId);
    }
    void refreshList();
    scroll();
  }

  function addContextButton(view: AnswerView, at: number): void {
    const sid = sessionId;
    if (!sid) return;
    const box = h("div", { class: "context-box" });
    const toggle = button(
      "What it was shown",
      async () => {
        const open = toggle.getAttribute("aria-expanded") === "true";
        toggle.setAttribute("aria-expanded", String(!open));
        if (open) return fill(box);
        fill(box, h("p", { class: "muted" }, "Loading…"));
        fill(box, await contextFor(api, sid, at));
      },
      { class: "link", "aria-expanded": "false" },
    );
    view.el.append(toggle, box);
  }

  /**
   * What a `forget_memory` call would remove, in words: the model names facts by id, so each is read from the
   * user's own memory (an id that is not theirs reads as not found, and nothing would be removed for it).
   */
  async function whatGoes(input: unknown): Promise<HTMLElement> {
    const { fact_ids, profile_keys } = (input ?? {}) as { fact_ids?: unknown; profile_keys?: unknown };
    const strings = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []);
    const facts = await Promise.all(
      strings(fact_ids).map((id) =>
        ok(api.GET("/v1/memory/facts/{id}", { params: { path: { id } } })).then(
          (r) => `${r.fact.text}${r.replaced.length ? ` (and ${r.replaced.length} earlier statement${r.replaced.length === 1 ? "" : "s"} it replaced)` : ""}`,
          () => `${id}: not found, nothing to forget`,
        ),
      ),
    );
    return h(
      "ul",
      { class: "forget-list", "aria-label": "What would be forgotten" },
      ...facts.map((text) => h("li", null, text)),
      ...strings(profile_keys).map((key) => h("li", null, `Profile key: ${key}`)),
    );
  }

  /** The turn waits on the client: approvals and the page's own tools, answered one call at a time. */
  async function answerPending(envelope: Envelope, view: AnswerView): Promise<void> {
    const call = envelope.pending_calls.find((c) => c.call_id === envelope.call_id) ?? envelope.pending_calls[0];
    if (!call) return;
    const sid = envelope.session_id;
    const resume = (body: Record<string, unknown>) => run({ resume: sid, answer: { call_id: call.call_id, ...body } as Schemas["ToolResultRequest"] }, view);
    const tool = call.runs === "client" ? clientTool(call.tool_name) : undefined;
    const runClient = async (): Promise<{ content: string; is_error?: boolean }> => {
      if (!tool) return { content: `this page has no tool named ${call.tool_name}`, is_error: true };
      view.note(`Running ${call.tool_name} in your browser…`, "progress");
      try {
        return { content: await tool.run() };
      } catch (err) {
        return { content: err instanceof Error ? err.message : String(err), is_error: true };
      }
    };
    if (call.runs === "client" && !call.needs_approval) return resume(await runClient());

    const reason = view.reasons.get(call.call_id);
    const prompt = h("div", { class: "approval", role: "group", "aria-label": `Approve ${call.tool_name}` });
    const decide = async (action: "allow" | "always" | "deny") => {
      for (const b of prompt.querySelectorAll("button")) b.disabled = true;
      prompt.append(h("span", { class: "muted" }, action === "deny" ? " Denied." : " Allowed."));
      if (action === "deny") return resume({ action });
      if (call.runs === "server") return resume({ action, tool_name: call.tool_name });
      return resume({ action, tool_name: call.tool_name, ...(await runClient()) });
    };
    const forgetting = call.runs === "server" && call.tool_name === FORGET;
    fill(
      prompt,
      h(
        "p",
        null,
        h("strong", null, call.tool_name),
        ` wants to run${reason ? `: ${reason}` : ""}`,
        !forgetting && call.tool_input && Object.keys(call.tool_input).length ? h("code", null, ` ${JSON.stringify(call.tool_input)}`) : null,
      ),
      forgetting ? await whatGoes(call.tool_input) : null,
      button("Allow", () => decide("allow")),
      button("Deny", () => decide("deny"), { class: "secondary" }),
      // Forgetting is for good: each time is the user's own decision.
      forgetting ? null : button("Always allow", () => decide("always"), { class: "secondary" }),
    );
    view.el.append(prompt);
    prompt.querySelector("button")?.focus();
  }

  async function sendMessage(text: string): Promise<void> {
    log.append(h("article", { class: "msg user", "aria-label": "You" }, h("p", null, text)));
    const view = new AnswerView();
    log.append(view.el);
    scroll();
    const body = { message: text, stream: true, client_tools: declarations(), ...(sessionId ? { session_id: sessionId } : {}) };
    await run({ chat: body }, view);
  }

  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const text = input.value.trim();
    if (!text || send.disabled) return;
    input.value = "";
    void sendMessage(text);
  });
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey) {
      e.preventDefault();
      form.requestSubmit();
    }
  });

  function renderStored(m: Stored): HTMLElement | null {
    const blocks: Block[] = typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;
    if (m.role === "user") {
      // A turn's first block is the context it was shown (memory, time, projects): "What it was shown" has it, not the bubble.
      const text = blocks.filter((b) => b.type === "text" && !(b.text ?? "").startsWith("<turn_context>")).map((b) => b.text ?? "");
      return text.length
        ? h(
            "article",
            { class: "msg user", "aria-label": "You" },
            text.map((t) => h("p", null, t)),
          )
        : null;
    }
    const view = new AnswerView();
    // Text blocks in a row are one reply (the API splits a reply where a citation starts or ends): one paragraph.
    blocks.forEach((b, i) => {
      if (b.type === "text" && b.text) {
        view.text(b.text);
        view.cite(storedCitedFacts(b.citations));
        if (blocks[i + 1]?.type !== "text") view.note("", "sep");
      } else if (b.type === "tool_use") view.note(`Used ${b.name}`, "tool");
    });
    addContextButton(view, m.created_at);
    return view.el;
  }

  async function openSession(id: string): Promise<void> {
    sessionId = id;
    fill(log, h("p", { class: "muted" }, "Loading…"));
    try {
      const s = await ok(api.GET("/v1/sessions/{id}", { params: { path: { id } } }));
      fill(
        log,
        s.messages.map((m) => renderStored(m as Stored)),
      );
      if (s.pending) {
        const view = new AnswerView();
        log.append(view.el);
        await answerPending(s.pending, view);
      }
    } catch (err) {
      fill(log, h("p", { class: "error", role: "alert" }, explain(err)));
    }
    markCurrent();
    scroll();
  }

  function newChat(): void {
    sessionId = null;
    fill(log, h("p", { class: "muted" }, "Say hello. Tell it something about you and it will remember; ask “where am I?” to try a browser tool."));
    markCurrent();
    input.focus();
  }

  newChat();
  void refreshList();
  return h(
    "div",
    { class: "chat" },
    h("aside", { "aria-label": "Conversations" }, h("h2", null, "Conversations"), button("New chat", newChat), sessions.el),
    h("section", { class: "thread", "aria-label": "Chat" }, log, form),
  );
}
