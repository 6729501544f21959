/**
 * Whether a new message may start a turn, decided before anything is written: the session must be the user's,
 * with no tool call pending, and today's chat budget must have room for the turn's first model call (reserved
 * then, usage/reservation.ts). The checks share one D1 round trip with every context provider's reads, so an
 * admitted turn has its prompt on the way.
 */

import type { Refusal } from "../bridge/answer";
import type { ClientToolDef } from "../bridge/client-tools";
import { turnTools } from "../bridge/toolset";
import type { BuiltPrompt } from "../chat/prompt";
import { buildSystemPrompt } from "../chat/prompt";
import { readBatch } from "../chat/read-batch";
import type { Env } from "../config/env";
import { type Consent, consentOf, consentQuery } from "../consent/settings";
import type { Registry } from "../core/capability";
import type { TurnScope } from "../core/context";
import type { Statement } from "../db/batch";
import type { Db } from "../db/client";
import { budgetOf, reservationRefusal } from "../usage/budget";
import { MIN_REPLY_TOKENS, reserveQuery } from "../usage/reservation";
import { logFailure, newTally, type Tally } from "./bookkeeping";
import { followUpQuery, type StoredMessage } from "./history";
import { firstCallInput } from "./reserve";
import { type Caller, turnScope } from "./segment";
import type { SessionMeta, SessionStorage } from "./storage";
import { sessionMetaRow, sessionOfUser } from "./store";

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

/** Why a turn did not start: nothing was written. `retryAfter` (seconds) goes out as Retry-After. */
export type TurnRefusal = Refusal & { retryAfter?: number };

/** A turn let in: its scope, the live history it starts from, its prompt being built, and what providers handed over. */
export type Admitted = { scope: TurnScope; rows: StoredMessage[]; building: Promise<BuiltPrompt>; tally: Tally; consent: Promise<Consent> };

export const pendingMessage = (sessionId: string) =>
  `a tool call is pending in this session: answer it with POST /v1/sessions/${sessionId}/tool_result ` +
  `or cancel it with DELETE /v1/sessions/${sessionId}/pending`;

const INTERNAL: TurnRefusal = { code: "internal", message: "internal error" };
const NOT_FOUND: TurnRefusal = { code: "not_found", message: "session not found" };

export async function admit(store: SessionStorage, db: Db, env: Env, registry: Registry, input: TurnInput): Promise<Admitted | { refusal: TurnRefusal }> {
  // A turn that waited for the lock behind one that suspended.
  if (store.continuation()) return { refusal: { code: "tool_pending", message: pendingMessage(input.sessionId) } };
  let meta: SessionMeta | null;
  try {
    // Stored by the session's first turn; a session from before that is read once.
    meta = store.sessionMeta() ?? input.created ?? (await sessionMetaRow(db, input.userId, input.sessionId));
  } catch (err) {
    logFailure(input.sessionId, "context")(err);
    return { refusal: INTERNAL };
  }
  if (!meta) return { refusal: NOT_FOUND };
  const scopeOf = (m: SessionMeta) => turnScope(db, env, input, input.siteId ?? m.site_id, input.projectId ?? m.project_id);
  let scope = scopeOf(meta);
  // What model calls can still see (the folded part of a long history is neither read nor parsed).
  const rows = store.liveMessages();
  const lastReply = rows.findLast((m) => m.role === "assistant") ?? store.lastMessage("assistant");
  const tally = newTally();
  const now = Date.now();
  // What providers hand over (deferred work, writes) goes out with the turn's bookkeeping.
  const handover = { defer: (work: () => Promise<unknown>) => tally.later.push(work), write: (rows: readonly Statement[]) => tally.rows.push(...rows) };
  const query = followUpQuery(input.message, lastReply);
  // One D1 round trip before the model call: the session check, the budget reservation for the first model call
  // (only if the user still has the session: a refused turn writes nothing) and every provider's reads.
  const reads = readBatch(scope.db);
  const ofUser = sessionOfUser(scope.db, input.userId, input.sessionId, now);
  const { config } = scope;
  const firstCall = reserveQuery(scope.db, {
    reservation: tally.reservation,
    userId: input.userId,
    sessionId: input.sessionId,
    limit: config.dailyChatTokens,
    spent: 0,
    input: firstCallInput(rows, store.summary()?.text ?? "", input.message, config.historyBudgetTokens, turnTools(registry.tools, input.clientTools)),
    maxTokens: config.maxTokens,
    now,
    session: true,
  });
  const checks = config.dailyChatTokens
    ? reads.read([ofUser, firstCall]).then(([[session], [reservation]]) => ({ session, reserved: reservation?.tokens ?? 0 }))
    : reads.read([ofUser]).then(([[session]]) => ({ session, reserved: null }));
  // Awaited once the batch is flushed, and its failure handled there: until then it must not count as unhandled.
  checks.catch(() => undefined);
  const consent = reads.read([consentQuery(scope.db, input.userId)]).then(([[row]]) => consentOf(row));
  consent.catch(() => undefined);
  let building = buildSystemPrompt({ ...scope, query, now, read: reads.read, consent, ...handover }, registry.contextProviders);
  await reads.flush();
  let found: Awaited<typeof checks>;
  try {
    found = await checks;
  } catch (err) {
    logFailure(input.sessionId, "context")(err);
    return { refusal: INTERNAL };
  }
  const { session, reserved } = found;
  if (!session) return { refusal: NOT_FOUND };
  if (session.site_id !== meta.site_id || session.project_id !== meta.project_id) {
    // The row moved since this object stored it (a project merged or deleted, a tool filed the conversation):
    // the row wins, and a prompt built for the old scope is built again (one more round trip, once per change).
    meta = { site_id: session.site_id, project_id: session.project_id };
    store.saveSessionMeta(meta);
    const fresh = scopeOf(meta);
    if (fresh.siteId !== scope.siteId || fresh.projectId !== scope.projectId) {
      building.catch(() => undefined);
      scope = fresh;
      building = buildSystemPrompt({ ...scope, query, now, consent, ...handover }, registry.contextProviders);
    }
  }
  // The over-estimate may not fit where the call itself does: it is then reserved once its input is known (reserve.ts).
  if (reserved === 0 && config.dailyChatTokens - session.used - session.held < MIN_REPLY_TOKENS) {
    const refused = reservationRefusal(budgetOf(session.used, config, now), session.held, now);
    return { refusal: { code: refused.code, message: refused.message, retryAfter: refused.retryAfterSeconds } };
  }
  if (reserved) tally.reservation.tokens = reserved;
  if (!store.sessionMeta()) store.saveSessionMeta(meta);
  return { scope, rows, building, tally, consent };
}
