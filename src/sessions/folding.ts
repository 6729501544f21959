/**
 * Keeps the history a model call sees within the budget (history-budget.ts): the oldest whole turns are folded into
 * the session summary by the background model (stored history is untouched), and the facts it found go to memory.
 */
import type { Registry } from "../core/capability";
import type { TurnScope } from "../core/context";
import { createModelClient } from "../model/anthropic";
import { isAbort } from "../model/errors";
import { usageInsert } from "../usage/record";
import { landWrites, logFailure, newTally, runLater, type Tally } from "./bookkeeping";
import type { StoredMessage } from "./history";
import { aheadTrigger, foldDue, latestTurnSeq, liveRows, planFold, summaryRow, trimFrom, trimmedRow } from "./history-budget";
import type { SessionStorage } from "./storage";
import { offlineSummary, SUMMARY_FORMAT, summarise } from "./summarise";

/** How the offline model fills in a summary: one object, so the model client made for it is reused. */
const SUMMARY_SKILLS = { [SUMMARY_FORMAT]: offlineSummary };

export class HistoryFolding {
  constructor(
    private readonly store: SessionStorage,
    private readonly registry: Registry,
  ) {}

  /**
   * What a model call sees: the running summary, then the messages not folded into it, from where the request was
   * last cut (`fit`) with a note of how many were left out.
   */
  requestRows(rows: readonly StoredMessage[]): StoredMessage[] {
    const summary = this.store.summary();
    const live = liveRows(rows, summary);
    const from = this.store.trimmedFrom();
    const kept = from === null ? live : live.filter((r) => r.seq >= from);
    const dropped = live.length - kept.length;
    return [...(summary ? [summaryRow(summary)] : []), ...(dropped ? [trimmedRow(dropped, Date.now())] : []), ...kept];
  }

  /**
   * Before a turn's first model call: folds if the new message takes the history past the budget, and if it is still
   * past (no summary could be made, or a retry is not due yet), cuts the oldest turns out of the turn's requests.
   * Decided here only, so every request of a turn, across its suspensions, starts the same way.
   */
  async fit(scope: TurnScope, tally: Tally, rows: readonly StoredMessage[], signal: AbortSignal): Promise<void> {
    await this.fold(scope, tally, rows, "before", signal);
    const live = liveRows(rows, this.store.summary());
    const from = this.store.trimmedFrom();
    const next = trimFrom(live, scope.config.historyBudgetTokens, from);
    if (next !== from) this.store.saveTrimmedFrom(next);
  }

  /**
   * Folds the oldest turns when the history is past the budget. Done `after` a turn, ahead of the next one
   * (`ahead`), and `before` a model call only when the new message takes the history past the budget (`fit`). If
   * the summary cannot be made, a later turn retries (`foldDue`: the wait doubles with each consecutive failure).
   */
  async fold(scope: TurnScope, tally: Tally, rows: readonly StoredMessage[], when: "before" | "after", signal: AbortSignal): Promise<void> {
    const { config } = scope;
    const budget = config.historyBudgetTokens;
    const summary = this.store.summary();
    const live = liveRows(rows, summary);
    const { fold } = planFold(live, budget, when === "after" ? aheadTrigger(live, budget) : budget);
    const last = fold.at(-1);
    if (!last) return;
    const failures = this.store.foldFailures();
    const turnSeq = latestTurnSeq(live);
    if (!foldDue(failures, turnSeq, when)) return;
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
        offline: !config.anthropicApiKey,
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
      logFailure(scope.sessionId, "summary")(err);
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
  async ahead(scope: TurnScope, signal: AbortSignal): Promise<void> {
    const tally = newTally();
    try {
      await this.fold(scope, tally, this.store.liveMessages(), "after", signal);
    } catch (err) {
      if (isAbort(err)) return;
      throw err;
    }
    await Promise.all([landWrites(scope.db, tally.rows, scope.sessionId), runLater(tally, scope.sessionId)]);
  }
}
