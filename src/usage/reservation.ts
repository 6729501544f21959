/**
 * Reservations against the daily chat budget (budget.ts). Checking the budget only before a turn let one turn of
 * several model calls pass it by a third; instead, before each model call a turn reserves what it has spent so far
 * (its usage row is written when it ends), the call's input and the call's output limit, in one guarded statement:
 * the reservation lands only if today's usage, every other running turn's reservation and this one fit within the
 * budget, so turns running at once cannot together pass it either. Near the end of the budget the output limit is
 * lowered to what is left; with less than `MIN_REPLY_TOKENS` left the call is refused. The reservation is deleted in
 * the batch that writes the turn's usage; one a crashed turn left stops counting once it expires.
 */
import { and, eq, gt, lte, ne, or, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { chatReservations } from "../db/schema";
import { chatSpentQuery } from "./budget";

/** Long enough for any one model call; each reservation made for a call starts it again. */
export const RESERVATION_TTL_MS = 30 * 60_000;

/** The smallest output limit worth a model call: with less room left, the call is refused rather than cut short at once. */
export const MIN_REPLY_TOKENS = 1024;

/** A turn segment's reservation: its row's id, and how many tokens the row holds (0: none yet). */
export type Reservation = { id: string; tokens: number };

/** What running turns of the user hold today, besides the reservation `exceptId`. */
const heldByOthers = (db: Db, userId: string, now: number, exceptId: string) =>
  db
    .select({ held: sql<number>`coalesce(sum(${chatReservations.tokens}), 0)` })
    .from(chatReservations)
    .where(and(eq(chatReservations.userId, userId), gt(chatReservations.expiresAt, now), ne(chatReservations.id, exceptId)));

export type ReserveCall = {
  reservation: Reservation;
  userId: string;
  sessionId: string;
  /** The daily budget (DAILY_CHAT_TOKENS, not 0). */
  limit: number;
  /** What the turn's segment has spent so far, not yet in a usage row. */
  spent: number;
  /** The call's input, estimated. */
  input: number;
  maxTokens: number;
  now: number;
  /** Reserve only if the user still has this session (a turn's first reservation, made before anything is written). */
  session?: boolean;
};

/**
 * Makes (or grows) the reservation to `spent + input + the output limit`, the limit at most `maxTokens` and at least
 * `MIN_REPLY_TOKENS`; returns the row's new `tokens`, or no row when that does not fit today's budget.
 */
export function reserveQuery(db: Db, c: ReserveCall) {
  const room = sql`${c.limit} - (${chatSpentQuery(db, c.userId, c.now)}) - (${heldByOthers(db, c.userId, c.now, c.reservation.id)}) - ${c.spent + c.input}`;
  const owned = c.session ? sql` AND EXISTS (SELECT 1 FROM sessions WHERE id = ${c.sessionId} AND user_id = ${c.userId})` : sql``;
  const tokens = sql`${c.spent + c.input} + min(${c.maxTokens}, ${room})`;
  return db
    .insert(chatReservations)
    .select(sql`SELECT ${c.reservation.id}, ${c.userId}, ${c.sessionId}, ${tokens}, ${c.now + RESERVATION_TTL_MS} WHERE ${room} >= ${MIN_REPLY_TOKENS}${owned}`)
    .onConflictDoUpdate({ target: chatReservations.id, set: { tokens: sql`excluded.tokens`, expiresAt: sql`excluded.expires_at` } })
    .returning({ tokens: chatReservations.tokens });
}

/** Deletes the reservation, with any of the user's that expired (left by a crashed turn). */
export const releaseQuery = (db: Db, userId: string, reservation: Reservation, now: number) =>
  db
    .delete(chatReservations)
    .where(and(eq(chatReservations.userId, userId), or(eq(chatReservations.id, reservation.id), lte(chatReservations.expiresAt, now))));

/** What the user's running turns hold today (for a refusal's message: is the rest held by other turns?). */
export const heldQuery = (db: Db, userId: string, now: number) => heldByOthers(db, userId, now, "");
