/**
 * The two kinds of turn segment, run inside the session's lock: a chat turn (the user's message to
 * its end or first suspension) and a resumed turn (the client's answer to the next end or suspension).
 * Each ends with exactly one of `done`, `tool_pending` (the continuation is stored before the
 * envelope is sent) or `error`.
 */

import { type Answer, applyAnswer, type Refusal, type Resolution } from "../bridge/answer";
import type { ClientToolDef } from "../bridge/client-tools";
import { type Continuation, envelopeOf, nonEmpty, type TurnState } from "../bridge/continuation";
import { answeredWith, type RetryableTurn, retryHint } from "../bridge/retry";
import { inCallOrder, resultBlock, type TurnTools, turnTools } from "../bridge/toolset";
import { contextLogInsert } from "../chat/context-log";
import { type MessageParam, type Progress, runAgentLoop } from "../chat/loop";
import { buildSystemPrompt } from "../chat/prompt";
import { readBatch } from "../chat/read-batch";
import { loadConfig } from "../config/config";
import type { Env } from "../config/env";
import type { Registry } from "../core/capability";
import type { TurnScope } from "../core/context";
import { addUsage, type Usage, zeroUsage } from "../core/events";
import type { EvidenceBlock } from "../core/evidence";
import { type ToolContext, TURN_BASE } from "../core/tool";
import { runStatements, type Statement } from "../db/batch";
import { createDb, type Db } from "../db/client";
import type { Plan } from "../db/schema";
import { describeFailure } from "../lib/errors";
import { waitAtMost } from "../lib/wait";
import { createModelClient } from "../model/anthropic";
import { isAbort, modelFailure } from "../model/errors";
import { budgetOf, overBudget } from "../usage/budget";
import { usageInsert } from "../usage/record";
import { addCall, addSpent, noTokens, type SpentTokens } from "../usage/spent";
import { type EventSink, stoppedByUser } from "./event-stream";
import { currentTurnStart, followUpQuery, modelHistory, type StoredMessage, withEvidence } from "./history";
import { aheadTrigger, foldDue, latestTurnSeq, liveRows, messageTokens, planFold, summaryRow } from "./history-budget";
import type { SessionMeta, SessionStorage } from "./storage";
import { sessionMetaRow, sessionOfUser, touchSession, touchSessionQuery } from "./store";
import { offlineSummary, SUMMARY_FORMAT, summarise } from "./summarise";

type Caller = { turnId: string; userId: string; plan: Plan; sessionId: string };
/**
 * `siteId` / `projectId`: this turn's overrides (null: the session's own). `created`: the session row the
 * route has just written, so the first turn needs no read to learn its defaults.
 */
export type TurnInput = Caller & {
  message: string;
  siteId: string | null;
  projectId: string | null;
  stream: boolean;
  clientTools: ClientToolDef[];
  created?: SessionMeta;
};
export type ResumeInput = Caller & { answer: Answer };

/** Why a turn did not start: nothing was written. `retryAfter` (seconds) goes out as Retry-After. */
export type TurnRefusal = Refusal & { retryAfter?: number };

/** Called once by a turn: with a refusal (the turn ends, nothing written) or without (its events are answered). */
export type Gate = (refusal?: TurnRefusal) => undefined;

/**
 * Work that follows a turn once its stream has closed, still under the session's lock (see `foldAhead`).
 * `signal` ends it early: the session object aborts it when the next turn has waited for it a few seconds.
 */
export type Afterwards = (signal: AbortSignal) => Promise<void>;

type Segment = {
  scope: TurnScope;
  model: string;
  system: string;
  /** The turn's evidence: sent with every request of the turn, never stored in history (sessions/history.ts). */
  evidence: readonly EvidenceBlock[];
  tools: TurnTools;
  progress?: Progress;
  counters: Map<string, number>;
  /** The prompt's sections and their ids (ToolContext.injected): kept across suspensions, like the prompt. */
  injected: ReadonlyMap<string, string[]>;
  stream: boolean;
};
/**
 * What a segment changed and the tokens it spent, and its bookkeeping: `rows` (D1 writes, the segment's and
 * those context providers hand over) go out in one batch after the model call, beside `later` (other
 * deferred work); both are awaited before the stream ends.
 */
type Tally = { pending: boolean; rows: Statement[]; later: (() => Promise<unknown>)[]; spent: SpentTokens; calls: number };
const newTally = (): Tally => ({ pending: false, rows: [], later: [], spent: noTokens(), calls: 0 });
/** The answered call a resumed turn's model failure leaves in history (bridge/retry.ts). */
type Answered = Pick<RetryableTurn, "call" | "answered" | "ok">;
export type Alarm = { set(at: number): Promise<void>; clear(): Promise<void> };

export const pendingMessage = (sessionId: string) =>
  `a tool call is pending in this session: answer it with POST /v1/sessions/${sessionId}/tool_result or cancel it with DELETE /v1/sessions/${sessionId}/pending`;

/** How the offline model fills in a summary: one object, so the model client made for it is reused. */
const SUMMARY_SKILLS = { [SUMMARY_FORMAT]: offlineSummary };

export class TurnRunner {
  /** Built once per object: a drizzle handle walks the whole schema when it is made. */
  private readonly db: Db;

  constructor(
    private readonly store: SessionStorage,
    private readonly env: Env,
    private readonly alarm: Alarm,
    private readonly registry: Registry,
  ) {
    this.db = createDb(env.DB);
  }

  /** Runs one turn; what it returns is run after the turn's stream has closed. */
  async chat(input: TurnInput, events: EventSink, open: Gate): Promise<Afterwards | undefined> {
    const toolsUsed: string[] = [];
    const sink = notingTools(events, toolsUsed);
    // A turn that waited for the lock behind one that suspended.
    if (this.store.continuation()) return open({ code: "tool_pending", message: pendingMessage(input.sessionId) });
    let meta: SessionMeta | null;
    try {
      // Stored by the session's first turn; a session from before that is read once.
      meta = this.store.sessionMeta() ?? input.created ?? (await sessionMetaRow(this.db, input.userId, input.sessionId));
    } catch (err) {
      console.error(JSON.stringify({ session: input.sessionId, context: describeFailure(err) }));
      return open({ code: "internal", message: "internal error" });
    }
    if (!meta) return open({ code: "not_found", message: "session not found" });
    let scope = this.scope(input, input.siteId ?? meta.site_id, input.projectId ?? meta.project_id);
    // What model calls can still see (the folded part of a long history is neither read nor parsed).
    const rows = this.store.liveMessages();
    const lastReply = rows.findLast((m) => m.role === "assistant") ?? this.store.lastMessage("assistant");
    const tally = newTally();
    const now = Date.now();
    // What providers hand over (deferred work, writes) goes out with the turn's bookkeeping.
    const handover = { defer: (work: () => Promise<unknown>) => tally.later.push(work), write: (rows: readonly Statement[]) => tally.rows.push(...rows) };
    // One D1 round trip before the model call: the session and budget checks and every provider's reads.
    const reads = readBatch(scope.db);
    const checks = reads.read([sessionOfUser(scope.db, input.userId, input.sessionId, now)]);
    let building = buildSystemPrompt(
      { ...scope, query: followUpQuery(input.message, lastReply), now, read: reads.read, ...handover },
      this.registry.contextProviders,
    );
    await reads.flush();
    let found: Awaited<typeof checks>;
    try {
      found = await checks;
    } catch (err) {
      console.error(JSON.stringify({ session: input.sessionId, context: describeFailure(err) }));
      return open({ code: "internal", message: "internal error" });
    }
    const [[session]] = found;
    if (!session) return open({ code: "not_found", message: "session not found" });
    if (session.site_id !== meta.site_id || session.project_id !== meta.project_id) {
      // The row moved since this object stored it (a project merged or deleted, a tool filed the conversation):
      // the row wins, and a prompt built for the old scope is built again (one more round trip, once per change).
      meta = { site_id: session.site_id, project_id: session.project_id };
      this.store.saveSessionMeta(meta);
      const fresh = this.scope(input, input.siteId ?? meta.site_id, input.projectId ?? meta.project_id);
      if (fresh.siteId !== scope.siteId || fresh.projectId !== scope.projectId) {
        building.catch(() => undefined);
        scope = fresh;
        building = buildSystemPrompt({ ...scope, query: followUpQuery(input.message, lastReply), now, ...handover }, this.registry.contextProviders);
      }
    }
    const refused = scope.config.dailyChatTokens ? overBudget(budgetOf(session.used, scope.config, now), now) : null;
    if (refused) return open({ code: refused.code, message: refused.message, retryAfter: refused.retryAfterSeconds });
    if (!this.store.sessionMeta()) this.store.saveSessionMeta(meta);
    open();
    // A failed resume's turn is not continued once the user moves on; its answered round stays in history.
    this.store.saveRetryableTurn(null);
    sink.emit({ type: "session", id: input.sessionId });
    let userSeq: number | undefined;
    let ended = false;
    try {
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
      await this.foldHistory(scope, tally, rows, "before", sink.signal);
      // The audit row goes in the bookkeeping batch after the model call: it must not delay the first byte.
      tally.rows.push(contextLogInsert(scope.db, input.userId, input.sessionId, prompt));
      const injected = new Map(prompt.injected.map((s) => [s.name, s.ids]));
      const seg: Segment = {
        scope,
        model: scope.config.chatModel,
        system: prompt.system,
        evidence: prompt.evidence,
        tools: turnTools(this.registry.tools, input.clientTools),
        counters: new Map([[TURN_BASE, base]]),
        injected,
        stream: input.stream,
      };
      tally.pending = await this.run(seg, sink, tally, rows);
      ended = !tally.pending;
    } catch (err) {
      if (!isAbort(err) && !sink.signal.aborted) {
        if (userSeq === undefined) return this.fail(err, sink, input.sessionId);
        // The API rejected the turn: history goes back to exactly what it was, and the client can retry.
        this.rollbackTurn();
      } else if ((err as { answered?: boolean }).answered !== true && userSeq !== undefined) {
        // The client left before the model answered: the turn did not happen.
        this.store.deleteMessage(userSeq);
      }
      this.fail(err, sink, input.sessionId, { usage: addUsage(zeroUsage(), tally.spent), toolsUsed });
    } finally {
      await handedOver(sink);
      await this.settle(scope, scope.config.chatModel, tally);
    }
    return ended ? (signal) => this.foldAhead(scope, signal) : undefined;
  }

  /** Resumes a suspended turn; what it returns is run after the turn's stream has closed. */
  async resume(input: ResumeInput, resolution: Resolution, events: EventSink): Promise<Afterwards | undefined> {
    events.emit({ type: "session", id: input.sessionId });
    const cont = this.store.continuation();
    if (!cont?.pending.some((p) => p.call_id === resolution.call.call_id)) {
      events.emit({ type: "error", code: "continuation_expired", message: "the pending tool call is gone: it expired or was cancelled" });
      return undefined;
    }
    const toolsUsed = [...cont.tools_used];
    const sink = notingTools(events, toolsUsed);
    const seg = this.segment(input, cont);
    const tally = newTally();
    // Set once the answered round is in history.
    let answered: Answered | undefined;
    let ended = false;
    try {
      if (resolution.remember) this.store.allowAlways(resolution.call.tool_name);
      const { results, pending } = await applyAnswer(cont, resolution, seg.tools, this.toolCtx(seg, sink), sink.emit);
      if (nonEmpty(pending)) {
        tally.pending = await this.suspend({ ...cont, results, pending, counters: Object.fromEntries(seg.counters), expires_at: this.expiry() }, sink);
        return;
      }
      this.store.closeContinuation(completed(cont.messages, results));
      const result = results.find((r) => r.tool_use_id === resolution.call.call_id);
      answered = { call: resolution.call, answered: answeredWith(input.answer), ok: result?.is_error !== true };
      await this.alarm.clear();
      tally.pending = await this.run(seg, sink, tally);
      ended = !tally.pending;
    } catch (err) {
      this.failAnswered(err, sink, input.sessionId, { seg, base: cont, answered, tally, toolsUsed });
    } finally {
      await handedOver(sink);
      await this.settle(seg.scope, cont.model, tally);
    }
    return ended ? (signal) => this.foldAhead(seg.scope, signal) : undefined;
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
    const toolsUsed = [...kept.tools_used];
    const sink = notingTools(events, toolsUsed);
    const seg = this.segment(input, kept);
    const tally = newTally();
    let ended = false;
    sink.emit({ type: "tool_result", id: kept.call.call_id, name: kept.call.tool_name, ok: kept.ok });
    try {
      tally.pending = await this.run(seg, sink, tally);
      ended = !tally.pending;
    } catch (err) {
      this.failAnswered(err, sink, input.sessionId, { seg, base: kept, answered: kept, tally, toolsUsed });
    } finally {
      await handedOver(sink);
      await this.settle(seg.scope, kept.model, tally);
    }
    return ended ? (signal) => this.foldAhead(seg.scope, signal) : undefined;
  }

  /**
   * Ends a resumed turn that threw. Before the answered round reached history nothing changed: the call is still
   * pending and can be answered again. After, the round stays (it holds what the client gave, and what an approved
   * tool did); unless the turn was aborted, it is kept for the same answer sent again, and the error says so.
   */
  private failAnswered(
    err: unknown,
    sink: EventSink,
    sessionId: string,
    turn: { seg: Segment; base: TurnState; answered: Answered | undefined; tally: Tally; toolsUsed: string[] },
  ): undefined {
    const { seg, base, answered, tally, toolsUsed } = turn;
    const soFar = { usage: addUsage(seg.progress?.usage ?? zeroUsage(), tally.spent), toolsUsed };
    if (!answered || isAbort(err) || sink.signal.aborted) return this.fail(err, sink, sessionId, soFar);
    this.store.saveRetryableTurn({
      ...base,
      ...answered,
      tools_used: toolsUsed,
      // The failed call is not counted: it did not happen.
      iterations: base.iterations + tally.calls,
      usage: soFar.usage,
      counters: Object.fromEntries(seg.counters),
      expires_at: this.expiry(),
    });
    return this.fail(err, sink, sessionId, soFar, retryHint(answered.call.call_id, sessionId));
  }

  /** The segment that carries a turn on from its stored state (a continuation, or a turn kept for its retry). */
  private segment(caller: Caller, s: TurnState): Segment {
    return {
      scope: this.scope(caller, s.site_id, s.project_id),
      model: s.model,
      system: s.system,
      evidence: s.evidence ?? [],
      tools: turnTools(this.registry.tools, s.client_tools, s.server_tools),
      progress: { iterations: s.iterations, usage: addUsage(zeroUsage(), s.usage), toolsUsed: s.tools_used },
      counters: new Map(Object.entries(s.counters)),
      injected: new Map(Object.entries(s.injected)),
      stream: s.stream,
    };
  }

  /** Ends a suspended turn without the client: every open call gets an is_error result, so history stays whole. */
  async abandon(cont: Continuation, reason: string, expired: boolean): Promise<string[]> {
    const open = cont.pending.map((p) => p.call_id);
    const results = [...cont.results, ...open.map((id) => resultBlock(id, { content: reason, isError: true }))];
    this.store.closeContinuation(completed(cont.messages, results), expired ? open : []);
    await this.alarm.clear();
    await touchSession(this.db, cont.user_id, cont.session_id, this.store.messageCount(), false);
    return open;
  }

  /** Runs the loop for one segment and ends it; true when it suspended. `rows`: the live history, when the caller has it. */
  private async run(seg: Segment, sink: EventSink, tally: Tally, rows = this.store.liveMessages()): Promise<boolean> {
    const { scope } = seg;
    const history = modelHistory(withEvidence(this.requestRows(rows), seg.evidence));
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
      ...(seg.progress ? { progress: seg.progress } : {}),
    });
    if (outcome.kind === "refused") {
      // A refused turn must leave the conversation, or every later turn is refused too (docs/models.md).
      this.rollbackTurn();
      sink.emit({ type: "done", stop_reason: "refusal", usage: outcome.usage, tools_used: outcome.toolsUsed });
      return false;
    }
    if (outcome.kind === "done") {
      // The loop stops after a tool round once aborted; Stop ends it the same way as it does mid-reply.
      const stopReason = outcome.stopReason === "client_disconnected" && stoppedByUser(sink.signal) ? "stopped" : outcome.stopReason;
      sink.emit({ type: "done", stop_reason: stopReason, usage: outcome.usage, tools_used: outcome.toolsUsed });
      return false;
    }
    const now = Date.now();
    return this.suspend(
      {
        v: 2,
        user_id: scope.userId,
        session_id: scope.sessionId,
        site_id: scope.siteId,
        project_id: scope.projectId,
        model: seg.model,
        system: seg.system,
        ...(seg.evidence.length ? { evidence: [...seg.evidence] } : {}),
        messages: outcome.messages,
        results: outcome.results,
        pending: outcome.pending,
        client_tools: [...seg.tools.client],
        server_tools: seg.tools.server.map((t) => t.name),
        tools_used: outcome.toolsUsed,
        iterations: outcome.iterations,
        usage: outcome.usage,
        counters: Object.fromEntries(seg.counters),
        injected: Object.fromEntries(seg.injected),
        stream: seg.stream,
        created_at: now,
        expires_at: this.expiry(now),
      },
      sink,
    );
  }

  /** Removes the latest turn (its opening user message and everything after it); returns how many rows. */
  private rollbackTurn(): void {
    const rows = this.store.messages();
    for (const row of rows.slice(currentTurnStart(rows))) this.store.deleteMessage(row.seq);
  }

  /** What a model call sees: the running summary, then the messages not folded into it. */
  private requestRows(rows: readonly StoredMessage[]): StoredMessage[] {
    const summary = this.store.summary();
    const live = liveRows(rows, summary);
    return summary ? [summaryRow(summary), ...live] : live;
  }

  /**
   * Keeps the history a model call sees within the budget: the oldest whole turns are folded into the
   * session summary by the background model (stored history is untouched), and the facts it found go
   * to memory. Done `after` a turn, ahead of the next one, and `before` a model call only when the new
   * message takes the history past the budget. If the summary cannot be made, the next turn sends the
   * longer history and a later one retries (`foldDue`: the wait doubles with each consecutive failure).
   */
  private async foldHistory(scope: TurnScope, tally: Tally, rows: readonly StoredMessage[], when: "before" | "after", signal: AbortSignal): Promise<void> {
    const { config } = scope;
    const budget = config.historyBudgetTokens;
    const summary = this.store.summary();
    const live = liveRows(rows, summary);
    const { fold } = planFold(live, budget, when === "after" ? aheadTrigger(live, budget) : budget);
    const last = fold.at(-1);
    if (!last) return;
    const failures = this.store.foldFailures();
    const turnSeq = latestTurnSeq(live);
    const liveTokens = live.reduce((n, r) => n + messageTokens(r), 0);
    if (!foldDue(failures, turnSeq, liveTokens, budget, when)) return;
    const model = { client: createModelClient(config, SUMMARY_SKILLS).client, model: config.backgroundModel };
    try {
      const out = await summarise(model, scope.userId, summary?.text ?? "", fold, signal);
      const used = usageInsert(scope.db, {
        userId: scope.userId,
        kind: "summary",
        model: model.model,
        usage: out.usage,
        sessionId: scope.sessionId,
        prices: config.modelPrices,
      });
      if (used) tally.rows.push(used);
      if (!out.output) throw out.error ?? new Error("no summary");
      this.store.saveSummary({ text: out.output.summary, through: last.seq, messages: (summary?.messages ?? 0) + fold.length, updated_at: Date.now() });
      if (failures) this.store.saveFoldFailures(null);
      const observations = out.output.observations;
      for (const observe of this.registry.observers) tally.later.push(() => observe(scope, observations));
    } catch (err) {
      if (isAbort(err)) throw err;
      this.store.saveFoldFailures({ count: (failures?.count ?? 0) + 1, at_seq: turnSeq });
      console.error(JSON.stringify({ session: scope.sessionId, summary: describeFailure(err) }));
    }
  }

  /**
   * After a turn that ended (not suspended, not failed), once its stream has closed and still under the
   * session's lock: folds the history ahead of the next turn, so that turn's first byte does not wait for
   * a summary call, and records the call (its usage row; the facts it found go to memory). A turn sent
   * meanwhile waits for it a few seconds at most, then aborts it (`signal`) rather than wait for a stalled
   * background model: that turn sends the longer history (or folds first, if its message takes the history
   * past the budget), and the fold is tried again after it. An aborted call is not a failure, and its tokens
   * are not known.
   */
  private async foldAhead(scope: TurnScope, signal: AbortSignal): Promise<void> {
    const tally = newTally();
    try {
      await this.foldHistory(scope, tally, this.store.liveMessages(), "after", signal);
    } catch (err) {
      if (isAbort(err)) return;
      throw err;
    }
    const logged = (what: string) => (err: unknown) => console.error(JSON.stringify({ session: scope.sessionId, [what]: describeFailure(err) }));
    await Promise.all([landWrites(scope.db, tally.rows, logged), ...tally.later.map((work) => work().catch(logged("deferred")))]);
  }

  /**
   * The segment's bookkeeping, after its model calls: one D1 batch (its usage row with the tokens of every
   * completed call, also before a failure; the audit row; the session row's counters; the writes context
   * providers handed over, e.g. counting a recall), beside the deferred work. If the batch fails, each write
   * is tried on its own, so one bad row does not lose the others.
   */
  private async settle(scope: TurnScope, model: string, tally: Tally): Promise<void> {
    // Tokens an earlier segment could not record go out with this one's (carried once, then cleared).
    const owed = this.store.owedTokens();
    if (owed) addSpent(tally.spent, owed, model, scope.config.modelPrices);
    const spent = usageInsert(scope.db, {
      userId: scope.userId,
      kind: "chat",
      model,
      usage: tally.spent,
      sessionId: scope.sessionId,
      prices: scope.config.modelPrices,
    });
    const touch = touchSessionQuery(scope.db, scope.userId, scope.sessionId, this.store.messageCount(), tally.pending);
    // Raw statements, not drizzle's batch: providers' writes may be raw SQL with parameters (db/batch.ts).
    const writes: Statement[] = [touch, ...tally.rows, ...(spent ? [spent] : [])];
    const logged = (what: string) => (err: unknown) => console.error(JSON.stringify({ session: scope.sessionId, [what]: describeFailure(err) }));
    // The usage row is the last write: if it did not land, the session keeps the tokens for its next turn.
    const batch = landWrites(scope.db, writes, logged).then((landed) => !spent || landed.at(-1) === true);
    const billed = batch.then((ok) => {
      if (!ok) this.store.saveOwedTokens(tally.spent);
      else if (owed) this.store.saveOwedTokens(null);
    });
    await Promise.all([billed, ...tally.later.map((work) => work().catch(logged("deferred")))]);
  }

  private async suspend(c: Continuation, sink: EventSink): Promise<true> {
    this.store.saveContinuation(c);
    await this.alarm.set(c.expires_at);
    sink.emit({ type: "tool_pending", ...envelopeOf(c) });
    return true;
  }

  private expiry(now = Date.now()): number {
    return now + loadConfig(this.env).continuationTtlMs;
  }

  private scope(caller: Caller, siteId: string | null, projectId: string | null): TurnScope {
    const config = loadConfig(this.env);
    return { db: this.db, env: this.env, config, userId: caller.userId, plan: caller.plan, sessionId: caller.sessionId, siteId, projectId };
  }

  private toolCtx(seg: Segment, sink: EventSink): ToolContext {
    return { ...seg.scope, emit: sink.emit, turn: seg.counters, injected: seg.injected };
  }

  /**
   * Ends a turn that threw. An abort sends nothing (the client is gone), unless the user stopped the turn:
   * then the client is still reading and the stream ends with `done`, stop_reason "stopped", with what the
   * turn had spent and called so far. `then`: what the client can do now, added to the error's message.
   */
  private fail(err: unknown, sink: EventSink, sessionId: string, soFar?: { usage: Usage; toolsUsed: string[] }, then?: string): undefined {
    if (isAbort(err) || sink.signal.aborted) {
      if (soFar && stoppedByUser(sink.signal)) sink.emit({ type: "done", stop_reason: "stopped", usage: soFar.usage, tools_used: soFar.toolsUsed });
      return;
    }
    const failure = modelFailure(err);
    if (!failure) console.error(JSON.stringify({ session: sessionId, error: describeFailure(err) }));
    const { code, message } = failure ?? { code: "internal", message: "internal error" };
    sink.emit({ type: "error", code, message: then ? `${message}; ${then}` : message });
  }
}

/**
 * Writes `writes` in one D1 batch; if the batch fails, each write is tried on its own, so one bad row does not
 * lose the others. Says which landed; failures are logged, never thrown.
 */
async function landWrites(db: Db, writes: readonly Statement[], logged: (what: string) => (err: unknown) => void): Promise<boolean[]> {
  if (!writes.length) return [];
  try {
    await runStatements(db, writes);
    return writes.map(() => true);
  } catch (err) {
    logged("bookkeeping_batch")(err);
    return Promise.all(
      writes.map((row) =>
        runStatements(db, [row]).then(
          () => true,
          (e: unknown) => {
            logged("bookkeeping")(e);
            return false;
          },
        ),
      ),
    );
  }
}

/** How long a turn's bookkeeping waits for the reader to take its last event (it is never held longer). */
const HANDOVER_MS = 2_000;

/**
 * Waits until the reader has taken every event emitted so far, so `done` (or `tool_pending`, or `error`)
 * leaves before the bookkeeping batch rather than behind it; the stream itself still ends after the
 * bookkeeping, so a read made once it has ended sees the turn's usage. Bounded: a reader that stops
 * reading never holds the session's lock.
 */
/** The sink, noting the name of every tool call it announces (a stopped turn's `done` lists them). */
function notingTools(sink: EventSink, used: string[]): EventSink {
  return {
    ...sink,
    emit(event) {
      if (event.type === "tool_use") used.push(event.name);
      sink.emit(event);
    },
  };
}

async function handedOver(sink: EventSink): Promise<void> {
  if (sink.drained) await waitAtMost(sink.drained(), HANDOVER_MS);
}

/** The suspended assistant message(s), then one user message with every tool_result, in call order. */
function completed(messages: MessageParam[], results: Parameters<typeof inCallOrder>[1]): MessageParam[] {
  const assistant = messages.at(-1);
  return [...messages, { role: "user", content: assistant ? inCallOrder(assistant, results) : [...results] }];
}
