import { drizzle } from "drizzle-orm/d1";
import * as schema from "./schema";

export type Db = ReturnType<typeof createDb>;

export const createDb = (d1: D1Database) => drizzle(d1, { schema });

export const ALPHABET = "0123456789abcdefghijkmnpqrstuvwxyz";

/** Random, prefixed, URL-safe id: `ses_3kq9...` (20 characters of entropy). */
export function newId(prefix: string): string {
  const bytes = crypto.getRandomValues(new Uint8Array(20));
  let out = "";
  for (const b of bytes) out += ALPHABET[b % ALPHABET.length];
  return `${prefix}_${out}`;
}
