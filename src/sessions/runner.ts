/**
 * The two kinds of turn segment, run inside the session's lock: a chat turn (the user's message to
 * its end or first suspension) and a resumed turn (the client's answer to the next end or suspension).
 * Each ends with exactly one of `done`, `tool_pending` (the continuation is stored before the
 * envelope is sent) or `error`.
 */
import { type Answer, applyAnswer, type Resolution } from "../bridge/answer";
import type { ClientToolDef } from "../bridge/client-tools";
import { type Continuation, envelopeOf, nonEmpty } from "../bridge/continuation";
import { inCallOrder, resultBlock, type TurnTools, turnTools } from "../bridge/toolset";
import { recordContextLog } from "../chat/context-log";
import { type MessageParam, type Progress, runAgentLoop } from "../chat/loop";
import { buildSystemPrompt } from "../chat/prompt";
import { loadConfig } from "../config/config";
import type { Env } from "../config/env";
import type { Registry } from "../core/capability";
import type { TurnScope } from "../core/context";
import { addUsage, zeroUsage } from "../core/events";
import type { ToolContext } from "../core/tool";
import { createDb } from "../db/client";
import type { Plan } from "../db/schema";
import { describeFailure } from "../lib/errors";
import { createModelClient } from "../model/anthropic";
import { isAbort, modelFailure } from "../model/errors";
import { recordUsage } from "../usage/record";
import { addTokens, noTokens, type SpentTokens } from "../usage/spent";
import type { EventSink } from "./event-stream";
import { currentTurnStart, followUpQuery, modelHistory, type StoredMessage } from "./history";
import { liveRows, planFold, summaryRow } from "./history-budget";
import type { SessionStorage } from "./storage";
import { touchSession } from "./store";
import { offlineSummary, SUMMARY_FORMAT, summarise } from "./summarise";

type Caller = { turnId: string; userId: string; plan: Plan; sessionId: string };
export type TurnInput = Caller & { message: string; siteId: string | null; projectId: string | null; stream: boolean; clientTools: ClientToolDef[] };
export type ResumeInput = Caller & { answer: Answer };

type Segment = {
  scope: TurnScope;
  model: string;
  system: string;
  tools: TurnTools;
  progress?: Progress;
  counters: Map<string, number>;
  /** The prompt's sections and their ids (ToolContext.injected): kept across suspensions, like the prompt. */
  injected: ReadonlyMap<string, string[]>;
  stream: boolean;
};
/** What a segment changed, the tokens it spent, and the D1 bookkeeping it started: awaited together, after the last event. */
type Tally = { added: number; pending: boolean; writes: Promise<unknown>[]; spent: SpentTokens };
export type Alarm = { set(at: number): Promise<void>; clear(): Promise<void> };

export const pendingMessage = (sessionId: string) =>
  `a tool call is pending in this session: answer it with POST /v1/sessions/${sessionId}/tool_result or cancel it with DELETE /v1/sessions/${sessionId}/pending`;

export class TurnRunner {
  constructor(
    private readonly store: SessionStorage,
    private readonly env: Env,
    private readonly alarm: Alarm,
    private readonly registry: Registry,
  ) {}

  async chat(input: TurnInput, sink: EventSink): Promise<void> {
    sink.emit({ type: "session", id: input.sessionId });
    // A turn that waited for the lock behind one that suspended.
    if (this.store.continuation()) return sink.emit({ type: "error", code: "tool_pending", message: pendingMessage(input.sessionId) });
    const scope = this.scope(input, input.siteId, input.projectId);
    const lastReply = this.store.messages().findLast((m) => m.role === "assistant");
    const tally: Tally = { added: 0, pending: false, writes: [], spent: noTokens() };
    let userSeq: number | undefined;
    try {
      const defer = (work: Promise<unknown>) =>
        tally.writes.push(work.catch((err: unknown) => console.error(JSON.stringify({ deferred: describeFailure(err) }))));
      const prompt = await buildSystemPrompt(
        { ...scope, query: followUpQuery(input.message, lastReply), now: Date.now(), defer },
        this.registry.contextProviders,
      );
      // The per-turn context heads the user message and is stored with it: the turn is replayed exactly.
      [userSeq] = this.store.append([
        {
          role: "user",
          content: [
            { type: "text", text: prompt.turnContext },
            { type: "text", text: input.message },
          ],
        },
      ]);
      tally.added = 1;
      // Older turns over the history budget fold into the session summary before the model call.
      await this.foldHistory(scope, tally);
      // Written alongside the model call, not before it: the audit row must not delay the first byte.
      tally.writes.push(recordContextLog(scope.db, input.userId, input.sessionId, prompt));
      const injected = new Map(prompt.injected.map((s) => [s.name, s.ids]));
      const seg: Segment = {
        scope,
        model: scope.config.chatModel,
        system: prompt.system,
        tools: turnTools(this.registry.tools, input.clientTools),
        counters: new Map(),
        injected,
        stream: input.stream,
      };
      tally.pending = await this.run(seg, sink, tally);
    } catch (err) {
      if (!isAbort(err) && !sink.signal.aborted) {
        if (userSeq === undefined) return this.fail(err, sink, input.sessionId);
        // The API rejected the turn: history goes back to exactly what it was, and the client can retry.
        tally.added -= this.rollbackTurn();
      } else if ((err as { answered?: boolean }).answered !== true && userSeq !== undefined) {
        // The client left before the model answered: the turn did not happen.
        this.store.deleteMessage(userSeq);
        tally.added -= 1;
      }
      this.fail(err, sink, input.sessionId);
    } finally {
      await Promise.all([
        ...tally.writes,
        this.recordSpent(scope, scope.config.chatModel, tally.spent),
        touchSession(scope.db, input.userId, input.sessionId, this.store.messageCount(), tally.pending),
      ]);
    }
  }

  async resume(input: ResumeInput, resolution: Resolution, sink: EventSink): Promise<void> {
    sink.emit({ type: "session", id: input.sessionId });
    const cont = this.store.continuation();
    if (!cont?.pending.some((p) => p.call_id === resolution.call.call_id)) {
      return sink.emit({ type: "error", code: "continuation_expired", message: "the pending tool call is gone: it expired or was cancelled" });
    }
    const scope = this.scope(input, cont.site_id, cont.project_id);
    const progress = { iterations: cont.iterations, usage: addUsage(zeroUsage(), cont.usage), toolsUsed: cont.tools_used };
    const tools = turnTools(this.registry.tools, cont.client_tools, cont.server_tools);
    const counters = new Map(Object.entries(cont.counters));
    const seg: Segment = {
      scope,
      model: cont.model,
      system: cont.system,
      tools,
      progress,
      counters,
      injected: new Map(Object.entries(cont.injected)),
      stream: cont.stream,
    };
    const tally: Tally = { added: 0, pending: false, writes: [], spent: noTokens() };
    try {
      if (resolution.remember) this.store.allowAlways(resolution.call.tool_name);
      const { results, pending } = await applyAnswer(cont, resolution, tools, this.toolCtx(seg, sink), sink.emit);
      if (nonEmpty(pending)) {
        tally.pending = await this.suspend({ ...cont, results, pending, counters: Object.fromEntries(seg.counters), expires_at: this.expiry() }, sink);
        return;
      }
      tally.added += this.store.closeContinuation(completed(cont.messages, results)).length;
      await this.alarm.clear();
      tally.pending = await this.run(seg, sink, tally);
    } catch (err) {
      if (!isAbort(err) && !sink.signal.aborted) tally.added -= this.rollbackTurn();
      this.fail(err, sink, input.sessionId);
    } finally {
      await Promise.all([
        ...tally.writes,
        this.recordSpent(scope, cont.model, tally.spent),
        touchSession(scope.db, input.userId, input.sessionId, this.store.messageCount(), tally.pending),
      ]);
    }
  }

  /** Ends a suspended turn without the client: every open call gets an is_error result, so history stays whole. */
  async abandon(cont: Continuation, reason: string, expired: boolean): Promise<string[]> {
    const open = cont.pending.map((p) => p.call_id);
    const results = [...cont.results, ...open.map((id) => resultBlock(id, { content: reason, isError: true }))];
    this.store.closeContinuation(completed(cont.messages, results), expired ? open : []);
    await this.alarm.clear();
    await touchSession(createDb(this.env.DB), cont.user_id, cont.session_id, this.store.messageCount(), false);
    return open;
  }

  /** Runs the loop for one segment and ends it; true when it suspended. */
  private async run(seg: Segment, sink: EventSink, tally: Tally): Promise<boolean> {
    const { scope } = seg;
    const history = modelHistory(this.requestRows());
    const outcome = await runAgentLoop({
      client: createModelClient(scope.config).client,
      model: seg.model,
      maxTokens: scope.config.maxTokens,
      maxIterations: scope.config.maxIterations,
      system: seg.system,
      messages: history.messages,
      turnEnds: history.turnEnds,
      thinking: { effort: scope.config.chatEffort, display: scope.config.thinkingDisplay },
      tools: seg.tools,
      alwaysAllow: this.store.alwaysAllowed(),
      toolCtx: this.toolCtx(seg, sink),
      signal: sink.signal,
      emit: sink.emit,
      persist: async (msgs) => {
        tally.added += this.store.append(msgs).length;
      },
      onUsage: (u) => addTokens(tally.spent, u),
      ...(seg.progress ? { progress: seg.progress } : {}),
    });
    if (outcome.kind === "refused") {
      // A refused turn must leave the conversation, or every later turn is refused too (docs/models.md).
      tally.added -= this.rollbackTurn();
      sink.emit({ type: "done", stop_reason: "refusal", usage: outcome.usage, tools_used: outcome.toolsUsed });
      return false;
    }
    if (outcome.kind === "done") {
      sink.emit({ type: "done", stop_reason: outcome.stopReason, usage: outcome.usage, tools_used: outcome.toolsUsed });
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
  private rollbackTurn(): number {
    const rows = this.store.messages();
    const turn = rows.slice(currentTurnStart(rows));
    for (const row of turn) this.store.deleteMessage(row.seq);
    return turn.length;
  }

  /** What a model call sees: the running summary, then the messages not folded into it. */
  private requestRows(): StoredMessage[] {
    const summary = this.store.summary();
    const live = liveRows(this.store.messages(), summary);
    return summary ? [summaryRow(summary), ...live] : live;
  }

  /**
   * Keeps the history a model call sees within the budget: the oldest whole turns are folded into the
   * session summary by the background model (stored history is untouched), and the facts it found go
   * to memory. If the summary cannot be made, this turn sends the longer history and the next one retries.
   */
  private async foldHistory(scope: TurnScope, tally: Tally): Promise<void> {
    const summary = this.store.summary();
    const { fold } = planFold(liveRows(this.store.messages(), summary), scope.config.historyBudgetTokens);
    const last = fold.at(-1);
    if (!last) return;
    const { config } = scope;
    const model = { client: createModelClient(config, { [SUMMARY_FORMAT]: offlineSummary }).client, model: config.backgroundModel };
    const later = (work: Promise<unknown>) => tally.writes.push(work.catch((err: unknown) => console.error(JSON.stringify({ summary: describeFailure(err) }))));
    try {
      const out = await summarise(model, scope.userId, summary?.text ?? "", fold);
      later(
        recordUsage(scope.db, {
          userId: scope.userId,
          kind: "summary",
          model: model.model,
          usage: out.usage,
          sessionId: scope.sessionId,
          prices: config.modelPrices,
        }),
      );
      if (!out.output) throw out.error ?? new Error("no summary");
      this.store.saveSummary({ text: out.output.summary, through: last.seq, messages: (summary?.messages ?? 0) + fold.length, updated_at: Date.now() });
      const observations = out.output.observations;
      for (const observe of this.registry.observers) later(observe(scope, observations));
    } catch (err) {
      if (isAbort(err)) throw err;
      console.error(JSON.stringify({ session: scope.sessionId, summary: describeFailure(err) }));
    }
  }

  /** One usage row for the segment's model calls, including those before a failure. */
  private recordSpent(scope: TurnScope, model: string, spent: SpentTokens): Promise<void> {
    return recordUsage(scope.db, {
      userId: scope.userId,
      kind: "chat",
      model,
      usage: spent,
      sessionId: scope.sessionId,
      prices: scope.config.modelPrices,
    }).catch((err: unknown) => console.error(JSON.stringify({ usage: describeFailure(err) })));
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
    return { db: createDb(this.env.DB), env: this.env, config, userId: caller.userId, plan: caller.plan, sessionId: caller.sessionId, siteId, projectId };
  }

  private toolCtx(seg: Segment, sink: EventSink): ToolContext {
    return { ...seg.scope, emit: sink.emit, turn: seg.counters, injected: seg.injected };
  }

  private fail(err: unknown, sink: EventSink, sessionId: string): void {
    if (isAbort(err) || sink.signal.aborted) return;
    const failure = modelFailure(err);
    if (!failure) console.error(JSON.stringify({ session: sessionId, error: describeFailure(err) }));
    sink.emit({ type: "error", ...(failure ?? { code: "internal", message: "internal error" }) });
  }
}

/** The suspended assistant message(s), then one user message with every tool_result, in call order. */
function completed(messages: MessageParam[], results: Parameters<typeof inCallOrder>[1]): MessageParam[] {
  const assistant = messages.at(-1);
  return [...messages, { role: "user", content: assistant ? inCallOrder(assistant, results) : [...results] }];
}
