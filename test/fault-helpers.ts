/**
 * Real faults for the fault suite, injected into the real D1 database (no mocks): a trigger makes one
 * user's writes to a table fail the way a D1 error would (the statement and its whole batch abort), and
 * renaming a table makes every read of it fail. Each returns its repair; `repairAll` undoes what a failed
 * test left behind.
 */
import { env } from "cloudflare:test";

const repairs: (() => Promise<unknown>)[] = [];
let triggers = 0;

/** Every `op` on `table` for `userId` fails (when `when` holds, an SQL condition on NEW) until repaired. */
export async function failWrites(table: string, userId: string, op: "INSERT" | "UPDATE" = "INSERT", when = "1") {
  const name = `fault_${table}_${++triggers}`;
  await env.DB.exec(
    `CREATE TRIGGER ${name} BEFORE ${op} ON ${table} WHEN NEW.user_id = '${userId.replaceAll("'", "''")}' AND (${when}) BEGIN SELECT RAISE(ABORT, 'injected D1 fault'); END`,
  );
  return track(() => env.DB.exec(`DROP TRIGGER IF EXISTS ${name}`));
}

/** Every statement touching `table` fails (no such table) until repaired. */
export async function takeDown(table: string) {
  await env.DB.exec(`ALTER TABLE ${table} RENAME TO ${table}_down`);
  return track(() => env.DB.exec(`ALTER TABLE ${table}_down RENAME TO ${table}`));
}

function track(undo: () => Promise<unknown>) {
  let done = false;
  const repair = async () => {
    if (done) return;
    done = true;
    await undo();
  };
  repairs.push(repair);
  return repair;
}

export async function repairAll() {
  for (const repair of repairs.splice(0)) await repair();
}

export const count = async (sql: string, ...binds: unknown[]) =>
  (
    (await env.DB.prepare(sql)
      .bind(...binds)
      .first<{ n: number }>()) ?? { n: 0 }
  ).n;
