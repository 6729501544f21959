/**
 * Writes of a user being moved to another shard (src/account/move.ts) pause: a request that looks the user up while
 * the directory marks them `moving_to` is refused before it writes, and a write already under way when the move
 * began is refused by the old shard's triggers (migration 0027), whose message starts with `user_moving`. Both end
 * as the same error: 503 with Retry-After.
 */
import { AppError } from "../lib/errors";

/** Seconds a paused write is told to wait: moving a year of a user's rows takes a few seconds. */
export const MOVE_RETRY_SECONDS = 5;

export const userMoving = () =>
  new AppError(
    "user_moving",
    "your account is being moved to another database: writes are paused for a few seconds, retry shortly",
    undefined,
    MOVE_RETRY_SECONDS,
  );

/** Whether an error is the old shard's fence refusing a write (D1 wraps the trigger's message, drizzle wraps D1's error). */
export function isFenced(err: unknown): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) if (e.message.includes("user_moving:")) return true;
  return false;
}

/** Methods that only read: served while the user moves (from the old shard until the switch, then the new one). */
const READS = new Set(["GET", "HEAD", "OPTIONS"]);

/** Refuses a write request of a user the directory shows moving. */
export function assertWritable(user: { movingTo: number | null }, method: string): void {
  if (user.movingTo !== null && !READS.has(method.toUpperCase())) throw userMoving();
}
