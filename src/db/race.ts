/**
 * Writes that race. Guarded writes (a version check or a unique row inside the statement) let one of two racing
 * writers win and the other write nothing. A blind write (the client sent no version it read) has nothing to
 * lose by being planned again from what is now current, so it is retried a few times, each after a short random
 * pause that spreads the racers out. One that still loses is a 409 with Retry-After: sending it again can succeed.
 */
import { AppError } from "../lib/errors";

/** What a 409 from a lost race tells the client to wait, in seconds. */
export const RACE_RETRY_AFTER_SECONDS = 1;

/** A guarded write lost to a concurrent one and wrote nothing. `message` says what won, for the client. */
export class LostRace extends AppError {
  constructor(message: string) {
    super("conflict", message, undefined, RACE_RETRY_AFTER_SECONDS);
  }
}

/** Attempts of a blind write in all; with the pauses below, about a second of waiting at worst. */
export const RACE_ATTEMPTS = 12;
const PAUSE_MS = 4;
const MAX_PAUSE_MS = 100;

/** A random pause (full jitter) whose bound doubles with each attempt: 0-8 ms, 0-16, 0-32... up to 0-100. */
const pause = (attempt: number) => new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(MAX_PAUSE_MS, PAUSE_MS * 2 ** attempt)));

/** Runs `write` (which must read what it depends on itself) again while it loses races, `RACE_ATTEMPTS` times at most. */
export async function retryLostRace<T>(write: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (err) {
      if (!(err instanceof LostRace) || attempt >= RACE_ATTEMPTS) throw err;
      await pause(attempt);
    }
  }
}
