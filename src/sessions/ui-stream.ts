/**
 * A turn's events in the Vercel AI SDK's UI message stream protocol (v1, the `ai` package 5-7), so `useChat` with
 * `DefaultChatTransport` reads engram unmodified. Translated from engram's own events, never produced beside them:
 * the turn runs once and each reader renders the same log (docs/api.md has the mapping).
 * Every chunk is an SSE `data:` line holding one JSON object of the protocol's chunk union.
 */
import type { ChatEvent } from "../core/events";
import type { Renderer } from "./turn-log";

/** How the client answered a call it ran, or the approval it gave: replayed as the tool part's outcome. */
export type UiAnswer = { output: unknown } | { errorText: string } | { denied: true };

/** What a UI reader needs beyond the events: set when the segment starts. */
export type UiView = {
  /** The assistant message's id: every segment of a turn continues the same message. */
  messageId: string;
  /** The client's answers that started this segment, by call id. */
  answers: Record<string, UiAnswer>;
};

/** The header the AI SDK's servers send with the protocol (its clients do not require it). */
export const UI_STREAM_HEADERS = { "x-vercel-ai-ui-message-stream": "v1" };

type Chunk = { type: string } & Record<string, unknown>;

const FINISH_REASONS: Record<string, string> = {
  end_turn: "stop",
  stop_sequence: "stop",
  max_tokens: "length",
  model_context_window_exceeded: "length",
  refusal: "content-filter",
};

/** Anthropic's own tools run at Anthropic: the protocol calls that provider-executed (the client runs nothing). */
const PROVIDER_TOOLS = new Set(["web_search"]);

/** Engram's events that have no part of their own in the protocol travel as typed data parts: `data-<event type>`. */
const DATA_EVENTS = new Set<ChatEvent["type"]>(["memory_saved", "memory_pending", "citations", "notice", "refusal"]);

/**
 * A renderer for one reader. `answers`: the client's answers to calls of this turn, all segments' together, so a
 * replayed call the client already ran is shown with its outcome and never handed to `onToolCall` again.
 */
export function uiRenderer(view: UiView, answers: Record<string, UiAnswer> = view.answers): Renderer {
  let started = false;
  let step = false;
  /** A tool round ended: the model's next output is a new step. */
  let afterResults = false;
  let text: string | null = null;
  let reasoning: string | null = null;
  let parts = 0;
  let sessionId = "";

  const frame = (chunks: Chunk[]) => (chunks.length ? chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join("") : undefined);
  const closeOpen = (out: Chunk[]) => {
    if (text) out.push({ type: "text-end", id: text });
    if (reasoning) out.push({ type: "reasoning-end", id: reasoning });
    text = null;
    reasoning = null;
  };
  /** Output of the model: opens a step first (a new one after a tool round). */
  const content = (out: Chunk[]) => {
    if (step && !afterResults) return;
    closeOpen(out);
    if (step) out.push({ type: "finish-step" });
    out.push({ type: "start-step" });
    step = true;
    afterResults = false;
  };
  const end = (out: Chunk[]) => {
    closeOpen(out);
    if (step) out.push({ type: "finish-step" });
    step = false;
    afterResults = false;
  };

  return (event) => {
    const out: Chunk[] = [];
    switch (event.type) {
      case "session":
        sessionId = event.id;
        if (!started) out.push({ type: "start", messageId: view.messageId, messageMetadata: { session_id: event.id } });
        started = true;
        break;
      case "text":
        content(out);
        if (reasoning) closeOpen(out);
        if (!text) {
          text = `${view.messageId}-t${++parts}`;
          out.push({ type: "text-start", id: text });
        }
        out.push({ type: "text-delta", id: text, delta: event.delta });
        break;
      case "thinking":
        content(out);
        if (text) closeOpen(out);
        if (!reasoning) {
          reasoning = `${view.messageId}-r${++parts}`;
          out.push({ type: "reasoning-start", id: reasoning });
        }
        out.push({ type: "reasoning-delta", id: reasoning, delta: event.delta });
        break;
      case "tool_use": {
        content(out);
        closeOpen(out);
        const call = { toolCallId: event.id, toolName: event.name, title: event.reason };
        if (event.id in answers) {
          // Already run by the client: its part is rebuilt without `tool-input-available`, which would hand it to onToolCall.
          out.push(
            { type: "tool-input-start", ...call },
            { type: "tool-input-delta", toolCallId: event.id, inputTextDelta: JSON.stringify(event.input ?? {}) },
          );
        } else {
          out.push({ type: "tool-input-available", ...call, input: event.input, ...(PROVIDER_TOOLS.has(event.name) ? { providerExecuted: true } : {}) });
        }
        break;
      }
      case "tool_result": {
        closeOpen(out);
        afterResults = true;
        const answer = answers[event.id];
        const provider = PROVIDER_TOOLS.has(event.name) ? { providerExecuted: true } : {};
        if (answer && "denied" in answer) out.push({ type: "tool-output-denied", toolCallId: event.id });
        else if (answer && "errorText" in answer) out.push({ type: "tool-output-error", toolCallId: event.id, errorText: answer.errorText });
        else if (answer) out.push({ type: "tool-output-available", toolCallId: event.id, output: answer.output });
        else if (event.ok) out.push({ type: "tool-output-available", toolCallId: event.id, output: { ok: true }, ...provider });
        else out.push({ type: "tool-output-error", toolCallId: event.id, errorText: `${event.name} failed`, ...provider });
        break;
      }
      case "citation":
        content(out);
        closeOpen(out);
        out.push({ type: "source-url", sourceId: event.url, url: event.url, ...(event.title ? { title: event.title } : {}) });
        break;
      case "tool_pending": {
        end(out);
        // A builtin waiting for the user: the protocol's approval flow (addToolApprovalResponse answers it).
        for (const p of event.pending_calls)
          if (p.runs === "server" && p.needs_approval) out.push({ type: "tool-approval-request", approvalId: p.call_id, toolCallId: p.call_id });
        // Transient (onData sees it, the message does not keep it): once answered, the envelope is stale.
        const { type: _t, ...envelope } = event;
        out.push({ type: "data-tool_pending", data: envelope, transient: true });
        out.push({ type: "finish", finishReason: "tool-calls", messageMetadata: { session_id: sessionId, expires_at: event.expires_at } });
        break;
      }
      case "done":
        end(out);
        out.push({
          type: "finish",
          finishReason: FINISH_REASONS[event.stop_reason] ?? "other",
          messageMetadata: { session_id: sessionId, stop_reason: event.stop_reason, usage: event.usage, tools_used: event.tools_used },
        });
        break;
      case "error":
        end(out);
        out.push({ type: "data-error", data: { code: event.code, message: event.message } });
        out.push({ type: "error", errorText: event.message });
        break;
      default:
        if (DATA_EVENTS.has(event.type)) {
          const { type, ...data } = event;
          out.push({ type: `data-${type}`, data });
        }
    }
    return frame(out);
  };
}
