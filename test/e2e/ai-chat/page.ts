/**
 * A small chat page built on the `ai` package alone (its Chat state machine and DefaultChatTransport, what useChat
 * wraps), pointed at engram's /v1/chat/ui: the browser test drives it like a user. Bundled by esbuild in the test.
 */
import {
  AbstractChat,
  type ChatState,
  type ChatStatus,
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  lastAssistantMessageIsCompleteWithToolCalls,
  type UIMessage,
} from "ai";

const getLocation = { name: "get_location", description: "The user's location", input_schema: { type: "object" } };

/** What useChat keeps in React state; every change repaints the page. */
class PageState implements ChatState<UIMessage> {
  status: ChatStatus = "ready";
  error: Error | undefined = undefined;
  messages: UIMessage[] = [];
  pushMessage = (m: UIMessage) => this.set([...this.messages, m]);
  popMessage = () => this.set(this.messages.slice(0, -1));
  replaceMessage = (i: number, m: UIMessage) => this.set(this.messages.map((old, j) => (j === i ? m : old)));
  snapshot = <T>(thing: T): T => structuredClone(thing);
  private set(messages: UIMessage[]) {
    this.messages = messages;
    queueMicrotask(paint);
  }
}

class PageChat extends AbstractChat<UIMessage> {
  protected override setStatus(next: { status: ChatStatus; error?: Error }): void {
    super.setStatus(next);
    queueMicrotask(paint);
  }
}

const el = <K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, ...children: (Node | string)[]) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  node.append(...children);
  return node;
};

let chat: PageChat | undefined;
const errors: string[] = [];

function paint(): void {
  const log = document.getElementById("log");
  if (!log || !chat) return;
  log.replaceChildren(
    ...chat.messages.map((m) =>
      el(
        "article",
        { class: `msg ${m.role}` },
        ...m.parts.flatMap((p): Node[] => {
          if (p.type === "text") return [el("p", {}, p.text)];
          if (p.type === "data-memory_saved") return [el("div", { class: "memory" }, `Saved to memory: ${(p.data as { target: string }).target}`)];
          if (!p.type.startsWith("tool-") || !("state" in p)) return [];
          const part = p as { type: string; state: string; title?: string; approval?: { id: string } };
          const box = el("div", { class: "tool", "data-state": part.state }, `${part.title ?? part.type.slice(5)} (${part.type.slice(5)}): ${part.state}`);
          if (part.state === "approval-requested" && part.approval) {
            const id = part.approval.id;
            box.append(el("button", { type: "button", "data-approve": id }, "Allow"), el("button", { type: "button", "data-deny": id }, "Deny"));
          }
          return [box];
        }),
      ),
    ),
  );
  document.getElementById("status")?.replaceChildren(chat.status);
  document.getElementById("errors")?.replaceChildren(errors.join("; "));
}

function start(key: string): void {
  chat = new PageChat({
    state: new PageState(),
    transport: new DefaultChatTransport<UIMessage>({
      api: "/v1/chat/ui",
      headers: { authorization: `Bearer ${key}` },
      prepareSendMessagesRequest: ({ id, messages }) => ({ body: { id, message: messages.at(-1), client_tools: [getLocation] } }),
    }),
    onError: (e) => {
      errors.push(e.message);
      paint();
    },
    onToolCall: ({ toolCall }) => {
      if (toolCall.toolName !== "get_location" || !chat) return;
      void chat.addToolOutput({ tool: "get_location", toolCallId: toolCall.toolCallId, output: { latitude: 48.8584, longitude: 2.2945 } });
    },
    sendAutomaticallyWhen: (o) => lastAssistantMessageIsCompleteWithToolCalls(o) || lastAssistantMessageIsCompleteWithApprovalResponses(o),
  });
  paint();
}

document.getElementById("key-form")?.addEventListener("submit", (e) => {
  e.preventDefault();
  start((document.getElementById("key") as HTMLInputElement).value);
});
document.getElementById("send-form")?.addEventListener("submit", (e) => {
  e.preventDefault();
  const input = document.getElementById("message") as HTMLInputElement;
  const text = input.value.trim();
  input.value = "";
  if (text && chat) void chat.sendMessage({ text }).then(paint);
});
document.addEventListener("click", (e) => {
  const button = (e.target as HTMLElement).closest("button");
  const id = button?.dataset.approve ?? button?.dataset.deny;
  if (button && id && chat) void Promise.resolve(chat.addToolApprovalResponse({ id, approved: button.dataset.approve !== undefined })).then(paint);
});
