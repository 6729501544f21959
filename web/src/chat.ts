/**
 * Chat: sessions (list, rename, delete), streamed turns with tool actions inline, approvals, the
 * page's own client tools, stop, and for every answer what the model was shown.
 */

import { AnswerView, savedWords } from "./answer-view";
import { type Api, explain, ok, type Schemas, type StreamEvent, stream, streamError } from "./api";
import { clientTool, declarations } from "./client-tools";
import { contextFor } from "./context-log";
import { button, fill, h } from "./dom";
import { follower } from "./follow";
import { forgetPreview } from "./forget-preview";
import { errorLine } from "./panel";
import { sessionsList } from "./sessions-list";
import { drawHistory, drawInto, type Stored } from "./turn-view";
import { citedFacts } from "./used-memory";

/** The memory tool that always asks first: its prompt says what would be forgotten. */
const FORGET = "forget_memory";
type PendingCall = { call_id: string; tool_name: string; tool_input?: unknown; runs: "client" | "server"; needs_approval: boolean };
type Envelope = { session_id: string; call_id: string; pending_calls: PendingCall[] };
/**
 * `failed`: the turn started and the model failed in it (an `error` event other than a conflict), not a request
 * the server refused, nor a retry of an answer the conversation has moved on from.
 */
type Outcome = { kind: "done" } | { kind: "pending"; envelope: Envelope } | { kind: "error"; failed: boolean; refused?: boolean } | { kind: "cut" };

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
  const input = h("textarea", { id: "message", rows: 2, placeholder: "Message engram…", "aria-label": "Message", "aria-describedby": "message-help" });
  const send = h("button", { type: "submit" }, "Send");
  const stop = h("button", { type: "button", class: "secondary", disabled: true, onclick: () => stopTurn() }, "Stop");
  const follow = follower(log);
  /** Says out loud what waits for the reader (an approval); the log itself announces the reply as it streams. */
  const announce = h("p", { class: "visually-hidden", role: "status" });
  const form = h(
    "form",
    { class: "composer" },
    follow.el,
    input,
    send,
    stop,
    h("span", { id: "message-help", class: "visually-hidden" }, "Enter sends, Shift+Enter starts a new line."),
  );

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
  const scroll = () => follow.added();

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
      else if (event === "memory_saved") view.note(`${savedWords(String(data.target))}${data.truncated ? " — much shorter than before" : ""}`, "saved");
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

  /** Runs one streamed request into an answer view, then whatever the outcome asks for; the outcome of this request. */
  async function run(turn: Turn, view: AnswerView): Promise<Outcome> {
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
        // Refused before the turn started (too long, a tool waiting, offline): nothing of it reached the conversation.
        outcome = { kind: "error", failed: false, refused: true };
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
    return outcome;
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

  /** The turn waits on the client: approvals and the page's own tools, answered one call at a time. */
  async function answerPending(envelope: Envelope, view: AnswerView): Promise<void> {
    const call = envelope.pending_calls.find((c) => c.call_id === envelope.call_id) ?? envelope.pending_calls[0];
    if (!call) return;
    const sid = envelope.session_id;
    const resume = async (body: Record<string, unknown>): Promise<void> => {
      await run({ resume: sid, answer: { call_id: call.call_id, ...body } as Schemas["ToolResultRequest"] }, view);
    };
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
        // A client tool's reason is only "Using <name>": said once is enough.
        ` wants to run${reason && reason !== `Using ${call.tool_name}` ? `: ${reason}` : ""}`,
        !forgetting && call.tool_input && Object.keys(call.tool_input).length ? h("code", null, ` ${JSON.stringify(call.tool_input)}`) : null,
      ),
      forgetting ? await forgetPreview(api, call.tool_input) : null,
      button("Allow", () => decide("allow")),
      button("Deny", () => decide("deny"), { class: "secondary" }),
      // Forgetting is for good: each time is the user's own decision.
      forgetting ? null : button("Always allow", () => decide("always"), { class: "secondary" }),
    );
    view.el.append(prompt);
    // The turn waits for the reader: the prompt is where their answer goes, and it is said out loud.
    announce.textContent = `Waiting for your answer: ${call.tool_name}${reason ? `, ${reason}` : ""}. Allow or deny.`;
    prompt.querySelector("button")?.focus({ preventScroll: true });
    follow.toBottom();
  }

  async function sendMessage(text: string): Promise<void> {
    const bubble = h("article", { class: "msg user", "aria-label": "You" }, h("p", null, text));
    log.append(bubble);
    const view = new AnswerView();
    log.append(view.el);
    follow.toBottom();
    const body = { message: text, stream: true, client_tools: declarations(), ...(sessionId ? { session_id: sessionId } : {}) };
    const outcome = await run({ chat: body }, view);
    if (outcome.kind === "error" && outcome.refused) {
      // Not sent: the words go back into the box (unless a new message is being typed there), ready to fix and send.
      bubble.classList.add("unsent");
      bubble.append(h("p", { class: "muted" }, "Not sent. Your message is back in the box."));
      if (!input.value.trim()) input.value = text;
      input.focus();
    }
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

  async function openSession(id: string): Promise<void> {
    sessionId = id;
    fill(log, h("p", { class: "muted" }, "Loading…"));
    try {
      const s = await ok(api.GET("/v1/sessions/{id}", { params: { path: { id } } }));
      const pending = s.pending as (Envelope & { messages: { role: string; content: unknown }[] }) | null;
      const reasons = s.tool_reasons ?? {};
      const drawn = drawHistory(s.messages as Stored[], reasons, (view, at) => addContextButton(view, at), pending !== null);
      fill(log, drawn.nodes);
      if (pending) {
        // The turn waits on a tool: its words and calls so far are in the held-back message, shown as they streamed.
        let view = drawn.last;
        if (!view || log.lastElementChild !== view.el) {
          view = new AnswerView();
          log.append(view.el);
        }
        for (const m of pending.messages) drawInto(view, m, reasons, drawn.calls);
        await answerPending(pending, view);
      }
    } catch (err) {
      fill(log, errorLine(err));
    }
    markCurrent();
    follow.toBottom();
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
    h("section", { class: "thread", "aria-label": "Chat" }, log, announce, form),
  );
}
