/**
 * The life of a turn, run inside the session's lock. A turn is one or more segments: a chat segment (the user's
 * message to the turn's end or first suspension), a resumed one (the client's answer to the next end or
 * suspension), and a retried one (the same answer sent again after the model failed). Every segment runs the same
 * way (`runSegment`): get ready, run the model loop, put history right if that failed; then hand the last event
 * over, settle the bookkeeping and, once the turn has ended, fold history ahead of the next turn. Each segment ends
 * its stream with exactly one of `done`, `tool_pending` (the continuation is stored before the envelope is sent) or
 * `error`, and never leaves the user's message without an answer in history (unanswered.ts).
 */

import { type Answer, applyAnswer, type Resolution } from "../bridge/answer";
import { type Continuation, envelopeOf, nonEmpty, type TurnState } from "../bridge/continuation";
import { answeredWith, type RetryableTurn, retryHint } from "../bridge/retry";
import { resultBlock, turnTools } from "../bridge/toolset";
import { contextLogInsert } from "../chat/context-log";
import { type MessageParam, runAgentLoop } from "../chat/loop";
import { TurnError } from "../chat/turn-error";
import { loadConfig } from "../config/config";
import type { Env } from "../config/env";
import type { Registry } from "../core/capability";
import type { TurnScope } from "../core/context";
import { addUsage, type Usage, zeroUsage } from "../core/events";
import { offeredTools, type ToolContext, TURN_BASE } from "../core/tool";
import { FIRST_PRIMARY, newerBookmark, openReadSession, type ReadSession } from "../db/replicas";
import { shardD1, userDb } from "../db/shards";
import { createModelClient } from "../model/anthropic";
import { isAbort } from "../model/errors";
import { addCall } from "../usage/spent";
import { admit, type TurnInput, type TurnRefusal } from "./admission";
import { newTally, settle, type Tally } from "./bookkeeping";
import { type EventSink, stoppedByUser } from "./event-stream";
import { HistoryFolding } from "./folding";
import { currentTurnStart, modelHistory, withEvidence } from "./history";
import { reserveCall } from "./reserve";
import { type Caller, completed, continuationOf, resumedSegment, type Segment } from "./segment";
import type { SessionStorage } from "./storage";
import { touchSession } from "./store";
import { endWithFailure, handedOver, notingTools } from "./turn-stream";
import { answerUnanswered, closeInterrupted } from "./unanswered";

export { pendingMessage, type TurnInput, type TurnRefusal } from "./admission";

export type ResumeInput = Caller & { answer: Answer };

/** Called once by a chat turn: with a refusal (the turn ends, nothing written) or without (its events are answered). */
export type Gate = (refusal?: TurnRefusal) => void;

/**
 * Work that follows a turn once its stream has closed, still under the session's lock (folding history ahead of
 * the next turn). `signal` ends it early: the session object aborts it when the next turn has waited for it a few seconds.
 */
export type Afterwards = (signal: AbortSignal) => Promise<void>;

export type Alarm = { set(at: number): Promise<void>; clear(): Promise<void> };

/** The answered call a resumed turn's model failure leaves in history (bridge/retry.ts). */
type Answered = Pick<RetryableTurn, "call" | "answered" | "ok">;

/** A D1 session (src/db/replicas.ts) on shard `shard`. */
type ShardSession = ReadSession & { shard: number };

/** What differs between the kinds of segment; `runSegment` does the rest. */
type SegmentPlan = {
  /** The segment's D1 session on the user's shard (`scope.db` runs in it); its bookmark is kept for the next turn. */
  session: ShardSession;
  scope: TurnScope;
  /** The model the segment's calls are billed to. */
  model: string;
  tally: Tally;
  /** The names of the tools the turn called, its earlier segments' included (a stopped turn's `done` lists them). */
  toolsUsed: string[];
  /** What the turn's earlier segments used (a stopped turn's `done` reports it with this segment's). */
  carried: Usage;
  /** Gets the segment ready to call the model: null when it ended without the model (an answer that left calls pending). */
  prepare(sink: EventSink): Promise<Segment | null>;
  /** Puts history right after a failure (`aborted`: the client left or stopped the turn); what the client can do now. */
  recover(failure: TurnError, aborted: boolean): string | undefined;
};

export class TurnRunner {
  private readonly folding: HistoryFolding;

  constructor(
    private readonly store: SessionStorage,
    private readonly env: Env,
    private readonly alarm: Alarm,
    private readonly registry: Registry,
  ) {
    this.folding = new HistoryFolding(store, registry);
  }

  /** A new message: admitted or refused before anything is written, then run to the turn's end or first suspension. */
  async chat(input: TurnInput, events: EventSink, open: Gate): Promise<Afterwards | undefined> {
    const session = this.readSession(input);
    const admitted = await admit(this.store, session.db, this.env, this.registry, input);
    if ("refusal" in admitted) {
      open(admitted.refusal);
      return undefined;
    }
    open();
    const { scope, rows, building, tally, consent } = admitted;
    // A failed resume's turn is not continued once the user moves on; its answered round stays in history.
    this.store.saveRetryableTurn(null);
    events.emit({ type: "session", id: input.sessionId });
    closeInterrupted(this.store, rows, events);
    let userSeq: number | undefined;
    return this.runSegment(events, {
      session,
      scope,
      model: scope.config.chatModel,
      tally,
      toolsUsed: [],
      carried: zeroUsage(),
      prepare: async (sink) => {
        const prompt = await building;
        // The per-turn context heads the user message and is stored with it: the turn is replayed exactly. Its
        // evidence is not stored: the segment (and a continuation) carries it into each of the turn's requests.
        const content: MessageParam["content"] = [
          { type: "text", text: prompt.turnContext },
          { type: "text", text: input.message },
        ];
        const base = this.store.messageCount();
        [userSeq] = this.store.append([{ role: "user", content }]);
        if (userSeq !== undefined) rows.push({ seq: userSeq, role: "user", content, created_at: Date.now() });
        // Folding is done after turns; before the model call only when this message takes the history past the budget.
        await this.folding.fit(scope, tally, rows, sink.signal);
        // The audit row goes in the bookkeeping batch after the model call: it must not delay the first byte.
        tally.rows.push(contextLogInsert(scope.db, input.userId, input.sessionId, prompt));
        return {
          scope,
          model: scope.config.chatModel,
          system: prompt.system,
          evidence: prompt.evidence,
          // A tool writing only kinds of memory the user turned off is not offered (its calls are refused anyway).
          tools: turnTools(offeredTools(this.registry.tools, await consent), input.clientTools),
          counters: new Map([[TURN_BASE, base]]),
          injected: new Map(prompt.injected.map((s) => [s.name, s.ids])),
          stream: input.stream,
          rows,
        };
      },
      recover: (failure, aborted) => {
        if (userSeq === undefined) return undefined;
        // The API rejected the turn: history goes back to exactly what it was, and the client can retry.
        if (!aborted) this.rollbackTurn();
        // The client left before the model answered: the turn did not happen.
        else if (!failure.answered) this.store.deleteMessage(userSeq);
        return undefined;
      },
    });
  }

  /** The client's answer to a pending call: applied, then the turn goes on to its end or next suspension. */
  async resume(input: ResumeInput, resolution: Resolution, events: EventSink): Promise<Afterwards | undefined> {
    events.emit({ type: "session", id: input.sessionId });
    const cont = this.store.continuation();
    if (!cont?.pending.some((p) => p.call_id === resolution.call.call_id)) {
      events.emit({ type: "error", code: "continuation_expired", message: "the pending tool call is gone: it expired or was cancelled" });
      return undefined;
    }
    const { seg, plan } = this.resumedPlan(input, cont);
    const { tally, toolsUsed } = plan;
    // Set once the answered round is in history.
    let answered: Answered | undefined;
    return this.runSegment(events, {
      ...plan,
      prepare: async (sink) => {
        if (resolution.remember) this.store.allowAlways(resolution.call.tool_name);
        const { results, pending } = await applyAnswer(cont, resolution, seg.tools, this.toolCtx(seg, sink), sink.emit);
        if (nonEmpty(pending)) {
          tally.pending = await this.suspend({ ...cont, results, pending, counters: Object.fromEntries(seg.counters), expires_at: this.expiry() }, sink);
          return null;
        }
        this.store.closeContinuation(completed(cont.messages, results));
        const result = results.find((r) => r.tool_use_id === resolution.call.call_id);
        answered = { call: resolution.call, answered: answeredWith(input.answer), ok: result?.is_error !== true };
        await this.alarm.clear();
        return seg;
      },
      // Before the answered round reached history nothing changed: the call is still pending and can be answered again.
      recover: (_failure, aborted) => (answered && !aborted ? this.keepForRetry(cont, answered, seg, tally, toolsUsed) : undefined),
    });
  }

  /**
   * Continues a resumed turn the model failed, the client having sent the same answer again (bridge/retry.ts):
   * the answered round is in history, so the model is called again from there and no tool runs again.
   */
  async retry(input: ResumeInput, events: EventSink): Promise<Afterwards | undefined> {
    events.emit({ type: "session", id: input.sessionId });
    const kept = this.store.retryableTurn();
    // A new message went first while this answer waited for the lock: the turn went on without it.
    if (kept?.call.call_id !== input.answer.call_id) {
      events.emit({ type: "error", code: "conflict", message: "no tool call is pending in this session: the conversation went on" });
      return undefined;
    }
    this.store.saveRetryableTurn(null);
    const { seg, plan } = this.resumedPlan(input, kept);
    const { tally, toolsUsed } = plan;
    return this.runSegment(events, {
      ...plan,
      prepare: async (sink) => {
        sink.emit({ type: "tool_result", id: kept.call.call_id, name: kept.call.tool_name, ok: kept.ok });
        return seg;
      },
      recover: (_failure, aborted) => (aborted ? undefined : this.keepForRetry(kept, kept, seg, tally, toolsUsed)),
    });
  }

  /**
   * A segment that goes on from a turn's kept state (a suspension, or a round kept for a retry): the same tools,
   * model and caps, with what the turn's earlier segments used and called carried over.
   */
  private resumedPlan(input: ResumeInput, from: TurnState): { seg: Segment; plan: Omit<SegmentPlan, "prepare" | "recover"> } {
    const session = this.readSession(input);
    const seg = resumedSegment(session.db, this.env, this.registry, input, from);
    const plan = {
      session,
      scope: seg.scope,
      model: from.model,
      tally: newTally(),
      toolsUsed: [...from.tools_used],
      carried: addUsage(zeroUsage(), from.usage),
    };
    return { seg, plan };
  }

  /** Ends a suspended turn without the client: every open call gets an is_error result, so history stays whole. */
  async abandon(cont: Continuation, reason: string, expired: boolean): Promise<string[]> {
    const open = cont.pending.map((p) => p.call_id);
    const results = [...cont.results, ...open.map((id) => resultBlock(id, { content: reason, isError: true }))];
    this.store.closeContinuation(completed(cont.messages, results), expired ? open : []);
    await this.alarm.clear();
    // Without a caller (the expiry alarm), the user's shard comes from the directory.
    const db = await userDb(this.env, cont.user_id);
    if (db) await touchSession(db, cont.user_id, cont.session_id, this.store.messageCount(), false);
    return open;
  }

  /**
   * The segment's D1 session on the caller's shard (the request found the shard with the key, so a turn reads no
   * directory), started from where this session's last turn left off: reads may go to a replica, never an older one.
   */
  private readSession(caller: Caller): ShardSession {
    const kept = this.store.d1Bookmark();
    // A bookmark of another shard means the user was moved since the last turn: this shard's replicas may not hold
    // the copied rows yet, so the session's first read goes to the primary.
    const from = !kept ? null : kept.shard === caller.shard ? kept.bookmark : FIRST_PRIMARY;
    return { ...openReadSession(shardD1(this.env, caller.shard), from), shard: caller.shard };
  }

  /** The newest bookmark the session saw, kept for the next turn (a late, older one never replaces a newer one). */
  private keepBookmark(session: ShardSession): void {
    const kept = this.store.d1Bookmark();
    const bookmark = newerBookmark(kept?.shard === session.shard ? kept.bookmark : null, session.bookmark());
    if (bookmark) this.store.saveD1Bookmark({ shard: session.shard, bookmark });
  }

  /**
   * One segment, whatever its kind: get ready, run the model loop to the turn's end or next suspension, and on a
   * failure put history right and end the stream with it. Whatever happened, the last event is handed over and the
   * bookkeeping settled before the stream closes; once the turn has ended, history is folded after it.
   */
  private async runSegment(events: EventSink, plan: SegmentPlan): Promise<Afterwards | undefined> {
    const { scope, tally, toolsUsed } = plan;
    const sink = notingTools(events, toolsUsed);
    let ended = false;
    this.store.markTurnRunning(true);
    try {
      const seg = await plan.prepare(sink);
      if (seg) {
        tally.pending = await this.runModel(seg, sink, tally);
        ended = !tally.pending;
      }
    } catch (err) {
      const failure = TurnError.of(err);
      const aborted = isAbort(failure.cause) || sink.signal.aborted;
      const then = plan.recover(failure, aborted);
      endWithFailure(failure.cause, sink, scope.sessionId, { usage: addUsage(plan.carried, tally.spent), toolsUsed }, then);
    } finally {
      this.store.markTurnRunning(false);
      await handedOver(sink);
      await settle(this.store, scope, plan.model, tally);
      this.keepBookmark(plan.session);
    }
    return ended ? (signal) => this.folding.ahead(scope, signal) : undefined;
  }

  /** Runs the model loop for one segment and ends it; true when it suspended. */
  private async runModel(seg: Segment, sink: EventSink, tally: Tally): Promise<boolean> {
    const { scope } = seg;
    const history = modelHistory(withEvidence(this.folding.requestRows(seg.rows ?? this.store.liveMessages()), seg.evidence));
    const outcome = await runAgentLoop({
      client: createModelClient(scope.config, undefined, this.registry.offline).client,
      model: seg.model,
      maxTokens: scope.config.maxTokens,
      maxIterations: scope.config.maxIterations,
      system: seg.system,
      messages: history.messages,
      evidence: seg.evidence,
      turnEnds: history.turnEnds,
      thinking: { effort: scope.config.chatEffort, display: scope.config.thinkingDisplay },
      tools: seg.tools,
      alwaysAllow: this.store.alwaysAllowed(),
      toolCtx: this.toolCtx(seg, sink),
      signal: sink.signal,
      emit: sink.emit,
      persist: async (msgs) => {
        this.store.append(msgs);
      },
      onUsage: (u) => {
        tally.calls += 1;
        addCall(tally.spent, seg.model, u, scope.config.modelPrices);
      },
      ...(scope.config.dailyChatTokens ? { reserve: (input: number) => reserveCall(scope, tally, input) } : {}),
      ...(seg.progress ? { progress: seg.progress } : {}),
    });
    if (outcome.kind === "refused") {
      // A refused turn must leave the conversation, or every later turn is refused too (docs/models.md).
      this.rollbackTurn();
      sink.emit({ type: "done", stop_reason: "refusal", usage: outcome.usage, tools_used: outcome.toolsUsed });
      return false;
    }
    if (outcome.kind === "done") {
      answerUnanswered(this.store, outcome.stopReason);
      // The loop stops after a tool round once aborted; Stop ends it the same way as it does mid-reply.
      const stopReason = outcome.stopReason === "client_disconnected" && stoppedByUser(sink.signal) ? "stopped" : outcome.stopReason;
      sink.emit({ type: "done", stop_reason: stopReason, usage: outcome.usage, tools_used: outcome.toolsUsed });
      return false;
    }
    return this.suspend(continuationOf(seg, outcome, Date.now(), this.expiry()), sink);
  }

  private async suspend(c: Continuation, sink: EventSink): Promise<true> {
    // One synchronous step, so one write: a suspended turn is not a running one.
    this.store.saveContinuation(c);
    this.store.markTurnRunning(false);
    await this.alarm.set(c.expires_at);
    sink.emit({ type: "tool_pending", ...envelopeOf(c) });
    return true;
  }

  /**
   * After the model failed following an answer: the answered round stays in history (it holds what the client gave,
   * and what an approved tool did), and the turn is kept for the same answer sent again. What the error adds says so.
   */
  private keepForRetry(base: TurnState, answered: Answered, seg: Segment, tally: Tally, toolsUsed: string[]): string {
    const { call_id } = answered.call;
    this.store.saveRetryableTurn({
      ...base,
      ...answered,
      tools_used: toolsUsed,
      // The failed call is not counted: it did not happen.
      iterations: base.iterations + tally.calls,
      usage: addUsage(addUsage(zeroUsage(), base.usage), tally.spent),
      counters: Object.fromEntries(seg.counters),
      expires_at: this.expiry(),
    });
    return retryHint(call_id, seg.scope.sessionId);
  }

  /** Removes the latest turn: its opening user message and everything after it. */
  private rollbackTurn(): void {
    const rows = this.store.messages();
    for (const row of rows.slice(currentTurnStart(rows))) this.store.deleteMessage(row.seq);
  }

  private expiry(now = Date.now()): number {
    return now + loadConfig(this.env).continuationTtlMs;
  }

  private toolCtx(seg: Segment, sink: EventSink): ToolContext {
    return { ...seg.scope, emit: sink.emit, turn: seg.counters, injected: seg.injected };
  }
}
