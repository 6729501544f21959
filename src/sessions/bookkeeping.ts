/**
 * A turn segment's bookkeeping: what it spent and the writes it hands over while it runs (`Tally`), written once
 * its model calls are over (`settle`), in one D1 batch so they cost the turn one round trip.
 */
import type { TurnScope } from "../core/context";
import { fromStored, runStatements, type Statement, storedStatement } from "../db/batch";
import { type Db, newId } from "../db/client";
import { isFenced } from "../db/fence";
import { describeFailure } from "../lib/errors";
import { usageInsert } from "../usage/record";
import { type Reservation, releaseQuery } from "../usage/reservation";
import { addSpent, noTokens, type SpentTokens } from "../usage/spent";
import type { SessionStorage } from "./storage";
import { touchSessionQuery } from "./store";

/**
 * What a segment changed and the tokens it spent, and its bookkeeping: `rows` (D1 writes, the segment's and
 * those context providers hand over) go out in one batch after the model call, beside `later` (other
 * deferred work); both are awaited before the stream ends.
 */
export type Tally = {
  pending: boolean;
  rows: Statement[];
  later: (() => Promise<unknown>)[];
  spent: SpentTokens;
  calls: number;
  /** What the segment holds of today's chat budget (reserve.ts). */
  reservation: Reservation;
};

export const newTally = (): Tally => ({ pending: false, rows: [], later: [], spent: noTokens(), calls: 0, reservation: { id: newId("rsv"), tokens: 0 } });

/** Refused writes a session keeps for its next segment at most (a segment writes a handful). */
const MAX_OWED_WRITES = 50;

/** Logs a failure of the session's work as `{session, [what]: ...}`: bookkeeping is never worth failing a turn for. */
export const logFailure = (sessionId: string, what: string) => (err: unknown) =>
  console.error(JSON.stringify({ session: sessionId, [what]: describeFailure(err) }));

/**
 * The segment's bookkeeping, after its model calls: one D1 batch (its usage row with the tokens of every
 * completed call, also before a failure; the audit row; the session row's counters; the writes context
 * providers handed over, e.g. counting a recall), beside the deferred work.
 */
export async function settle(store: SessionStorage, scope: TurnScope, model: string, tally: Tally): Promise<void> {
  // Tokens an earlier segment could not record go out with this one's (carried once, then cleared).
  const owed = store.owedTokens();
  if (owed) addSpent(tally.spent, owed, model, scope.config.modelPrices);
  const spent = usageInsert(scope.db, {
    userId: scope.userId,
    kind: "chat",
    model,
    usage: tally.spent,
    sessionId: scope.sessionId,
    prices: scope.config.modelPrices,
    offline: !scope.config.anthropicApiKey,
  });
  const touch = touchSessionQuery(scope.db, scope.userId, scope.sessionId, store.messageCount(), tally.pending);
  // Writes an earlier segment's shard refused because the user was being moved (src/db/fence.ts): the user's
  // shard now takes them (the same tables on every shard).
  const owedRows = (store.owedWrites() ?? []).map(fromStored);
  const rows = [...owedRows, ...tally.rows];
  // The reservation goes in the batch that records what was spent: the budget counts the turn once, never twice or not at all.
  const release = tally.reservation.tokens ? [releaseQuery(scope.db, scope.userId, tally.reservation, Date.now())] : [];
  // Raw statements, not drizzle's batch: providers' writes may be raw SQL with parameters (db/batch.ts).
  const writes: Statement[] = [touch, ...rows, ...release, ...(spent ? [spent] : [])];
  const fenced = new Set<number>();
  // The usage row is the last write: if it did not land, the session keeps the tokens for its next turn.
  const billed = landWrites(scope.db, writes, scope.sessionId, (i) => fenced.add(i)).then((landed) => {
    if (spent && landed.at(-1) !== true) store.saveOwedTokens(tally.spent);
    else if (owed) store.saveOwedTokens(null);
    // The rows (audit row, recall counts...) a moving user's old shard refused wait for the next segment, bounded.
    const kept = rows.filter((_, i) => fenced.has(i + 1)).slice(-MAX_OWED_WRITES);
    if (kept.length || owedRows.length) store.saveOwedWrites(kept.length ? kept.map(storedStatement) : null);
  });
  await Promise.all([billed, runLater(tally, scope.sessionId)]);
}

/** The deferred work handed over while the segment ran; a failure is logged, never thrown. */
export const runLater = (tally: Tally, sessionId: string) => Promise.all(tally.later.map((work) => work().catch(logFailure(sessionId, "deferred"))));

/**
 * Writes `writes` in one D1 batch; if the batch fails, each write is tried on its own, so one bad row does not
 * lose the others. Says which landed; failures are logged, never thrown.
 */
export async function landWrites(db: Db, writes: readonly Statement[], sessionId: string, onFenced?: (index: number) => void): Promise<boolean[]> {
  if (!writes.length) return [];
  try {
    await runStatements(db, writes);
    return writes.map(() => true);
  } catch (err) {
    logFailure(sessionId, "bookkeeping_batch")(err);
    return Promise.all(
      writes.map((row, i) =>
        runStatements(db, [row]).then(
          () => true,
          (e: unknown) => {
            logFailure(sessionId, "bookkeeping")(e);
            if (isFenced(e)) onFenced?.(i);
            return false;
          },
        ),
      ),
    );
  }
}
