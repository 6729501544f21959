/**
 * One Durable Object per chat session. It owns the session's history (raw JSON, stored once), its
 * suspended turn (the continuation) and its always-allow approvals, and serialises everything that
 * touches the session: a turn holds the session's lock from its first event to its last.
 * Refusals (a pending tool, a busy resume, a bridge guard) are decided synchronously on entry,
 * before anything is written, so two racing requests can never both proceed.
 */
import { DurableObject } from "cloudflare:workers";
import { isRefusal, type Refusal, resolveAnswer } from "../bridge/answer";
import { type Continuation, envelopeOf } from "../bridge/continuation";
import { retryRefusal } from "../bridge/retry";
import type { MessageParam } from "../chat/loop";
import type { Env } from "../config/env";
import type { Registry } from "../core/capability";
import type { ToolPendingEnvelope } from "../core/events";
import { describeFailure } from "../lib/errors";
import { waitAtMost } from "../lib/wait";
import { prepended } from "./coalesce";
import { type EventFormat, type EventSink, renderer, STOPPED, turnSink } from "./event-stream";
import type { StoredMessage } from "./history";
import type { SessionSummary } from "./history-budget";
import { type Afterwards, type Gate, pendingMessage, type ResumeInput, type TurnInput, type TurnRefusal, TurnRunner } from "./runner";
import { SessionStorage } from "./storage";
import { MAX_LOG_BYTES, TurnLog } from "./turn-log";
import type { UiAnswer, UiView } from "./ui-stream";

export type { Gate, ResumeInput, TurnInput, TurnRefusal } from "./runner";

/** A started turn's events (in `format`) and whether the client reads them as a stream; or why it did not start. */
export type Started = { error: TurnRefusal } | { events: ReadableStream<Uint8Array>; stream: boolean };

/**
 * How a request reads its segment: engram's events (SSE, or NDJSON when `stream` is false) unless `ui` says the
 * AI SDK's protocol, with the assistant message it continues and the client's answers that started it.
 */
export type Reading = { ui?: UiView };

/** What a reconnecting client asks for: engram's stream after an event id (or the latest segment whole), or the turn in the UI protocol. */
export type Reattach = { format: "sse"; turnId?: string; after?: number } | { format: "ui" };

export type Reattached = { events: ReadableStream<Uint8Array> } | { none: true } | { error: Refusal };

/** The segments of the turn in progress (or the last one), kept for readers that attach again (turn-log.ts). */
type Held = { log: TurnLog; view?: UiView; opensTurn: boolean };

/**
 * The ended segments of a turn are kept while their events total at most this (a turn suspended for tools many times
 * keeps its latest): with the running segment's own bound (MAX_LOG_BYTES), an object holds at most twice that.
 */
const MAX_HELD_BYTES = MAX_LOG_BYTES;

/** What GET /v1/sessions/{id} shows of a suspended turn: the envelope, and the messages held back from history until it resumes. */
export type PendingView = ToolPendingEnvelope & { messages: MessageParam[]; answered: { tool_use_id: string; is_error: boolean }[] };

const EXPIRED = "The client did not answer this tool call in time.";
const GONE: Refusal = { code: "not_found", message: "session not found (it was deleted)" };
const CANCELLED = "The user cancelled this tool call.";
const LOST: Refusal = { code: "conflict", message: "that stream is no longer held: read the session (GET /v1/sessions/{id}) for the turn as it ended" };
/**
 * How long a request waits for the summary being made after the latest turn (it usually lands within seconds):
 * a read then answers without it, a turn or a deletion stops it.
 */
const FOLLOW_WAIT_MS = 5_000;

/**
 * The session object's behaviour; the composition root binds it to the registry it runs with
 * (`class SessionDO extends SessionObject`), since the runtime constructs it with (ctx, env) only.
 */
export class SessionObject extends DurableObject<Env> {
  private lock: Promise<void> = Promise.resolve();
  /** The work following the latest turn (folding history ahead of the next turn): a read of the session waits for it. */
  private following: Promise<void> = Promise.resolve();
  /** Ends that work early: a turn or a deletion does not wait long behind the background model. */
  private stopFollowing: () => void = () => undefined;
  /** Turns and resumes waiting for the lock: the work following a turn gives way to them. */
  private queued = 0;
  private readonly running = new Map<string, (reason?: unknown) => void>();
  private resuming = false;
  /**
   * Set once `destroy` has run: the runtime keeps this instance serving requests already queued for it,
   * but its tables are gone, so every entry point answers not_found. A tombstone table keeps it set
   * for a later instance of the same object.
   */
  private destroyed: boolean;
  /**
   * Set when `destroy` is called, before it waits for the turn holding the lock: that turn finishes, but the work
   * that would follow it (summarising the conversation being deleted, and what the summary hands to memory) does not start.
   */
  private destroying = false;
  private readonly store: SessionStorage;
  private readonly runner: TurnRunner;
  /** Held in memory only: an object evicted between segments starts a new chain (a UI reader then gets nothing). */
  private held: Held[] = [];

  constructor(ctx: DurableObjectState, env: Env, registry: Registry) {
    super(ctx, env);
    this.destroyed = ctx.storage.sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'tombstone'").toArray().length > 0;
    this.store = new SessionStorage(ctx.storage);
    this.runner = new TurnRunner(this.store, env, { set: (at) => ctx.storage.setAlarm(at), clear: () => ctx.storage.deleteAlarm() }, registry);
  }

  /**
   * Starts one chat turn; refused while a tool call is pending. Answers once the turn holds the
   * session's lock and has read its context: an unknown session or a spent budget is refused then.
   */
  async turn(input: TurnInput, reading: Reading = {}): Promise<Started> {
    if (this.destroyed) return { error: GONE };
    if (this.resuming || this.live()) return { error: { code: "tool_pending", message: pendingMessage(input.sessionId) } };
    return this.start(input.turnId, input.stream, reading, true, (sink, open) => this.runner.chat(input, sink, open));
  }

  /**
   * Resumes the suspended turn with the client's answer to one pending call; or, when the model failed after the
   * last answer, continues that turn if the same answer is sent again (bridge/retry.ts).
   */
  async resume(input: ResumeInput, reading: Reading = {}): Promise<Started> {
    if (this.destroyed) return { error: GONE };
    if (this.resuming) return { error: { code: "session_busy", message: "an answer to this session's pending tool call is already being processed" } };
    const cont = this.live();
    if (!cont) {
      // The model failed after this session's last answer: the same answer sent again continues the turn.
      const kept = this.store.retryableTurn();
      if (kept) {
        const refused = retryRefusal(kept, input.answer, Date.now());
        if (refused) return { error: refused };
        return this.answering(input.turnId, input.answer.stream ?? kept.stream, reading, (sink) => this.runner.retry(input, sink));
      }
      return this.store.wasExpired(input.answer.call_id)
        ? { error: { code: "continuation_expired", message: `tool call ${input.answer.call_id} expired before it was answered` } }
        : { error: { code: "conflict", message: "no tool call is pending in this session" } };
    }
    const resolution = resolveAnswer(cont, input.answer);
    if (isRefusal(resolution)) return { error: resolution };
    return this.answering(input.turnId, input.answer.stream ?? cont.stream, reading, (sink) => this.runner.resume(input, resolution, sink));
  }

  /** Runs an answer that passed its checks; until it ends, the session refuses other answers and new messages. */
  private answering(turnId: string, stream: boolean, reading: Reading, work: (sink: EventSink) => Promise<Afterwards | undefined>): Promise<Started> {
    this.resuming = true;
    return this.start(turnId, stream, reading, false, (sink, open) => {
      open();
      return work(sink).finally(() => {
        this.resuming = false;
      });
    });
  }

  /** Ends the suspended turn without an answer (each open call becomes an is_error result). */
  async cancelPending(): Promise<{ error: Refusal } | { cancelled: string[] }> {
    if (this.destroyed) return { error: GONE };
    if (this.resuming) return { error: { code: "session_busy", message: "the pending tool call is being answered" } };
    const cont = this.live();
    if (!cont) return { error: { code: "conflict", message: "no tool call is pending in this session" } };
    return { cancelled: await this.runner.abandon(cont, CANCELLED, false) };
  }

  /**
   * The client went away (`gone`): stop the running turn (its partial reply is kept). `stopped`: the user
   * stopped it and may still be reading, so its stream ends with `done` (stop_reason "stopped").
   */
  cancelTurn(turnId: string, why: "gone" | "stopped" = "gone"): void {
    this.running.get(turnId)?.(why === "stopped" ? STOPPED : undefined);
  }

  /** The user pressed Stop: every turn this session is running stops (`cancelTurn`, stopped). Returns how many. */
  stopTurns(): number {
    const ids = [...this.running.keys()];
    for (const id of ids) this.cancelTurn(id, "stopped");
    return ids.length;
  }

  /**
   * null once the session was deleted. Waits for the summary a just-ended turn is making (not for a running
   * turn), at most `FOLLOW_WAIT_MS`: a background model that stalls does not hold the read.
   */
  async read(): Promise<{ messages: StoredMessage[]; pending: PendingView | null; summary: SessionSummary | null } | null> {
    await waitAtMost(this.following, FOLLOW_WAIT_MS);
    if (this.destroyed) return null;
    const cont = this.live();
    const pending = cont
      ? { ...envelopeOf(cont), messages: cont.messages, answered: cont.results.map((r) => ({ tool_use_id: r.tool_use_id, is_error: r.is_error === true })) }
      : null;
    return { messages: this.store.messages(), pending, summary: this.store.summary() };
  }

  /** The call ids of the suspended turn, for a client that answers several at once (the UI protocol does). */
  pendingCallIds(): string[] {
    return this.destroyed ? [] : (this.live()?.pending.map((p) => p.call_id) ?? []);
  }

  /**
   * A reader for a client that lost its stream. Engram's SSE: the events after `after` of segment `turnId` (the
   * `Last-Event-ID`), or the latest segment from its start; live until the segment ends. UI: the whole turn so far,
   * every segment replayed, as the AI SDK's resume expects. `none` when nothing is held.
   */
  async reattach(at: Reattach): Promise<Reattached> {
    if (this.destroyed) return { error: GONE };
    if (at.format === "ui") return this.reattachUi();
    const held = at.turnId ? this.held.find((h) => h.log.id === at.turnId) : this.held.at(-1);
    if (!held) return at.turnId ? { error: LOST } : { none: true };
    const events = held.log.attach(at.after ?? 0, renderer("sse", held.log.id));
    return events ? { events } : { error: LOST };
  }

  private reattachUi(): Reattached {
    const last = this.held.at(-1);
    // A turn whose first segments are gone (the object was evicted while the client ran a tool) cannot be replayed whole.
    if (!last?.view || !this.held[0]?.opensTurn || !this.held.every((h) => h.view && h.log.whole)) return { none: true };
    const answers: Record<string, UiAnswer> = Object.assign({}, ...this.held.map((h) => h.view?.answers));
    const render = renderer("ui", last.log.id, { ...last.view, messageId: this.held[0].view?.messageId ?? last.view.messageId }, answers);
    const head = this.held
      .slice(0, -1)
      .flatMap((h) => h.log.replay().map((e, i) => render(e, i + 1) ?? ""))
      .join("");
    const tail = last.log.attach(0, render);
    return tail ? { events: prepended(head ? [new TextEncoder().encode(head)] : [], tail) } : { none: true };
  }

  /** A page of the stored conversation for an export (docs/account.md); empty once the session was deleted. */
  async historyPage(afterSeq: number, limit: number): Promise<StoredMessage[]> {
    if (this.destroyed) return [];
    return this.store.messagesAfter(afterSeq, limit);
  }

  /**
   * Writes an imported conversation, under the lock, into an object no turn has used (the import gives the session a
   * new id). False when it cannot: the object was deleted, or a turn stored something of its own in it.
   */
  async importHistory(messages: Pick<StoredMessage, "role" | "content" | "created_at">[], reset: boolean): Promise<boolean> {
    return this.serialised(async () => {
      if (this.destroyed || this.store.continuation() || this.store.sessionMeta()) return false;
      this.store.importMessages(messages, reset);
      return true;
    });
  }

  async destroy(): Promise<void> {
    this.destroying = true;
    this.stopFollowing();
    await this.serialised(() => this.wipe());
  }

  /**
   * Deletes the session only if nothing was ever stored in it (what a failed first turn leaves), checked and done
   * under the lock, so a turn another request queued meanwhile is never wiped. Says whether it deleted it.
   */
  async destroyIfEmpty(): Promise<boolean> {
    let wiped = false;
    await this.serialised(async () => {
      if (this.destroyed || this.store.messageCount() > 0 || this.store.continuation()) return;
      await this.wipe();
      wiped = true;
    });
    return wiped;
  }

  private async wipe(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    this.store.forget();
    this.held = [];
    this.ctx.storage.sql.exec("CREATE TABLE tombstone (deleted_at INTEGER NOT NULL)");
    this.ctx.storage.sql.exec("INSERT INTO tombstone VALUES (?)", Date.now());
  }

  /** The continuation's deadline. */
  override async alarm(): Promise<void> {
    await this.serialised(async () => {
      if (this.destroyed) return;
      const cont = this.store.continuation();
      if (!cont) return;
      if (cont.expires_at > Date.now()) return this.ctx.storage.setAlarm(cont.expires_at);
      await this.runner.abandon(cont, EXPIRED, true);
    });
  }

  /**
   * The continuation, unless it is past its deadline: then it is closed here (its synchronous part
   * runs before this returns) and the alarm's work is not waited for.
   */
  private live(): Continuation | null {
    const cont = this.store.continuation();
    if (!cont || cont.expires_at > Date.now()) return cont;
    this.ctx.waitUntil(this.runner.abandon(cont, EXPIRED, true));
    return null;
  }

  /**
   * Runs `work` under the lock; answers when it opens the gate (or ends without opening it: its events then say how).
   * What the work hands back runs once the stream has closed, still under the lock.
   */
  private start(
    turnId: string,
    stream: boolean,
    reading: Reading,
    opensTurn: boolean,
    work: (sink: EventSink, open: Gate) => Promise<Afterwards | undefined>,
  ): Promise<Started> {
    const log = new TurnLog(turnId);
    const format: EventFormat = reading.ui ? "ui" : stream ? "sse" : "ndjson";
    const readable = log.attach(0, renderer(format, turnId, reading.ui)) ?? new ReadableStream();
    const sink = turnSink(log);
    this.running.set(turnId, sink.abort);
    let answer: (started: Started) => void = () => undefined;
    const started = new Promise<Started>((resolve) => {
      answer = resolve;
    });
    let opened = false;
    const open: Gate = (refusal) => {
      if (opened) return;
      opened = true;
      if (refusal) readable.cancel().catch(() => undefined);
      else this.hold({ log, opensTurn, ...(reading.ui ? { view: reading.ui } : {}) });
      answer(refusal ? { error: refusal } : { events: readable, stream: stream || format === "ui" });
    };
    this.queued++;
    this.hurryFollowing();
    const done = this.serialised(async () => {
      this.queued--;
      let after: Afterwards | undefined;
      try {
        // A turn queued behind `destroy` finds the session gone when its turn comes.
        if (this.destroyed) open(GONE);
        else after = await work(sink, open);
      } finally {
        this.running.delete(turnId);
        log.end();
        open();
      }
      if (!after || this.destroying) return;
      const stop = new AbortController();
      this.stopFollowing = () => stop.abort();
      const following = after(stop.signal).catch((err: unknown) => console.error(JSON.stringify({ after_turn: describeFailure(err) })));
      this.following = following;
      if (this.queued) this.hurryFollowing();
      await following;
    });
    this.ctx.waitUntil(done);
    return started;
  }

  /** A new turn's first segment replaces what was held; a resumed one joins its turn's. */
  private hold(h: Held): void {
    const earlier = h.opensTurn ? [] : [...this.held];
    while (earlier.reduce((n, e) => n + e.log.held, 0) > MAX_HELD_BYTES) earlier.shift();
    this.held = [...earlier, h];
  }

  /** A turn waits for the work following the previous one at most `FOLLOW_WAIT_MS`, then stops it. */
  private hurryFollowing(): void {
    void waitAtMost(this.following, FOLLOW_WAIT_MS).then(this.stopFollowing);
  }

  private serialised<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.lock.then(fn);
    this.lock = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }
}
