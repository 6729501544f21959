/**
 * Reads through D1's read replicas (the Sessions API): `withSession(constraintOrBookmark)` on a D1 binding opens a
 * session whose queries may go to a nearby replica, each at least as new as the bookmark it started from and as
 * every earlier query of the session (sequential consistency); `getBookmark()` is the latest position the session
 * saw (null before its first query). Bookmarks are opaque strings that sort oldest to newest.
 *
 * A chat turn runs its D1 work in one session of the user's shard, started from the bookmark the session object
 * kept from the turn before, so a turn reads what the previous one wrote even from a replica. Locally (wrangler dev,
 * tests) the binding's own `withSession` serves it from the one database.
 */
import { createDb, type Db } from "./client";

/** What a session may start from: a bookmark, or one of the two constraints the API takes. */
export const FIRST_UNCONSTRAINED = "first-unconstrained";
export const FIRST_PRIMARY = "first-primary";

export type ReadSession = {
  /** Drizzle over the session: domain code takes it like any `Db`. */
  readonly db: Db;
  /** The newest position the session has seen (null before its first query). */
  bookmark(): string | null;
};

/** A session on `d1` from `bookmark` (null: no earlier position to honour, so any replica may answer first). */
export function openReadSession(d1: D1Database, bookmark: string | null): ReadSession {
  const session = d1.withSession(bookmark ?? FIRST_UNCONSTRAINED);
  // drizzle needs only prepare and batch, which a session has (it has no exec or dump, which drizzle never calls).
  return { db: createDb(session as unknown as D1Database), bookmark: () => session.getBookmark() };
}

/** The newer of two bookmarks (they sort oldest to newest), so a late, older one never moves a user back. */
export const newerBookmark = (a: string | null, b: string | null): string | null => (a === null ? b : b === null ? a : a > b ? a : b);
