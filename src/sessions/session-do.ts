/**
 * One Durable Object per chat session. It owns the session's history (raw JSON, stored once) and
 * serialises everything that touches the session: a turn holds the session's lock from its first
 * event to its last, and a second turn waits for it.
 */
import { DurableObject } from "cloudflare:workers";
import { loadConfig } from "../config/config";
import type { Env } from "../config/env";
import { createDb } from "../db/client";
import { runAgentLoop, type MessageParam } from "../chat/loop";
import { ndjson, type ChatEvent } from "../chat/events";
import { recordContextLog } from "../chat/context-log";
import { buildSystemPrompt } from "../chat/prompt";
import { contextProviders } from "../chat/providers";
import { createModelClient } from "../model/anthropic";
import { isAbort, modelFailure } from "../model/errors";
import { serverTools } from "../tools/registry";
import { recordUsage } from "../usage/record";
import { toModelMessages, type StoredMessage } from "./history";
import { touchSession } from "./store";

export type TurnInput = {
  /** Names the turn so that a disconnecting client cancels this turn and no other. */
  turnId: string;
  userId: string;
  plan: "free" | "pro";
  sessionId: string;
  message: string;
  siteId: string | null;
  projectId: string | null;
};

type Row = { seq: number; role: "user" | "assistant"; content: string; created_at: number };

export class SessionDO extends DurableObject<Env> {
  private lock: Promise<void> = Promise.resolve();
  private readonly running = new Map<string, AbortController>();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec(`CREATE TABLE IF NOT EXISTS messages (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
      content TEXT NOT NULL CHECK (json_valid(content)),
      created_at INTEGER NOT NULL)`);
    ctx.storage.sql.exec(`CREATE TABLE IF NOT EXISTS state (key TEXT PRIMARY KEY, value TEXT NOT NULL CHECK (json_valid(value)))`);
  }

  /** Runs one chat turn; returns its events as an NDJSON byte stream. */
  async turn(input: TurnInput): Promise<ReadableStream<Uint8Array>> {
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
    const writer = writable.getWriter();
    const abort = new AbortController();
    this.running.set(input.turnId, abort);
    let open = true;
    writer.closed.catch(() => abort.abort());
    const emit = (event: ChatEvent) => {
      if (!open) return;
      writer.write(ndjson(event)).catch(() => {
        open = false;
        abort.abort();
      });
    };
    const work = this.serialised(() => this.runTurn(input, emit, abort.signal)).finally(() => {
      this.running.delete(input.turnId);
      open = false;
      writer.close().catch(() => undefined);
    });
    this.ctx.waitUntil(work);
    return readable;
  }

  /** The client went away: stop the running turn (its partial reply is kept). */
  cancelTurn(turnId: string): void {
    this.running.get(turnId)?.abort();
  }

  messages(): StoredMessage[] {
    return this.ctx.storage.sql
      .exec<Row>("SELECT seq, role, content, created_at FROM messages ORDER BY seq")
      .toArray()
      .map((r) => ({ seq: r.seq, role: r.role, content: JSON.parse(r.content) as MessageParam["content"], created_at: r.created_at }));
  }

  async destroy(): Promise<void> {
    await this.serialised(async () => {
      await this.ctx.storage.deleteAlarm();
      await this.ctx.storage.deleteAll();
    });
  }

  private serialised<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.lock.then(fn);
    this.lock = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  private append(messages: MessageParam[]): number[] {
    const at = Date.now();
    return this.ctx.storage.transactionSync(() =>
      messages.map(
        (m) =>
          this.ctx.storage.sql
            .exec<{ seq: number }>("INSERT INTO messages (role, content, created_at) VALUES (?, ?, ?) RETURNING seq", m.role, JSON.stringify(m.content), at)
            .one().seq,
      ),
    );
  }

  private async runTurn(input: TurnInput, emit: (e: ChatEvent) => void, signal: AbortSignal): Promise<void> {
    emit({ type: "session", id: input.sessionId });
    const config = loadConfig(this.env);
    const db = createDb(this.env.DB);
    const history = this.messages();
    const lastReply = history.findLast((m) => m.role === "assistant");
    const [userSeq] = this.append([{ role: "user", content: [{ type: "text", text: input.message }] }]);
    let added = 1;
    let logged: Promise<unknown> = Promise.resolve();
    const scope = { db, env: this.env, config, userId: input.userId, plan: input.plan, sessionId: input.sessionId, siteId: input.siteId, projectId: input.projectId };
    try {
      const prompt = await buildSystemPrompt(
        { ...scope, query: followUpQuery(input.message, lastReply), now: Date.now() },
        contextProviders,
      );
      // Written alongside the model call, not before it: the audit row must not delay the first byte.
      logged = recordContextLog(db, input.userId, input.sessionId, prompt);
      const { client } = createModelClient(config);
      const outcome = await runAgentLoop({
        client,
        model: config.chatModel,
        maxTokens: config.maxTokens,
        maxIterations: config.maxIterations,
        system: prompt.system,
        messages: toModelMessages(this.messages()),
        tools: serverTools,
        toolCtx: { ...scope, emit, turn: new Map() },
        signal,
        emit,
        persist: async (msgs) => {
          this.append(msgs);
          added += msgs.length;
        },
      });
      await recordUsage(db, { userId: input.userId, kind: "chat", model: config.chatModel, inputTokens: outcome.usage.input_tokens, outputTokens: outcome.usage.output_tokens, sessionId: input.sessionId });
      emit({ type: "done", stop_reason: outcome.stopReason, usage: outcome.usage });
    } catch (err) {
      const answered = (err as { answered?: boolean }).answered === true;
      if (!answered && userSeq !== undefined) {
        // The model never answered: the turn did not happen, so the client can simply retry it.
        this.ctx.storage.sql.exec("DELETE FROM messages WHERE seq = ?", userSeq);
        added -= 1;
      }
      if (isAbort(err) || signal.aborted) return;
      const failure = modelFailure(err);
      if (!failure) console.error(JSON.stringify({ session: input.sessionId, error: err instanceof Error ? err.stack : String(err) }));
      emit({ type: "error", ...(failure ?? { code: "internal", message: "internal error" }) });
    } finally {
      await Promise.all([logged, touchSession(db, input.userId, input.sessionId, added, false)]);
    }
  }
}

/** Short follow-ups ("and the other one?") say little on their own: seed retrieval with the last reply too. */
function followUpQuery(message: string, lastReply: StoredMessage | undefined): string {
  if (message.length >= 50 || !lastReply) return message;
  const blocks = typeof lastReply.content === "string" ? [{ type: "text", text: lastReply.content }] : lastReply.content;
  const text = blocks.flatMap((b) => (b.type === "text" ? [b.text] : [])).join(" ");
  return `${message}\n${text.slice(0, 500)}`;
}
