/**
 * Real faults for the fault suite, injected into the real D1 database (no mocks): a trigger makes one
 * user's writes to a table fail the way a D1 error would (the statement and its whole batch abort), and
 * renaming a table makes every read of it fail. Each returns its repair; `repairAll` undoes what a failed
 * test left behind. Faults go into every shard (src/db/shards.ts): they name a user or a table, wherever it lives.
 * `pausingD1` forces an interleaving: another request lands between a reader's read and its
 * write, as a slow round trip allows.
 */
import { env } from "cloudflare:test";
import { allShards, countOnShards } from "./shard-helpers";

const execAll = async (query: string) => {
  for (const d1 of allShards()) await d1.exec(query);
};

const repairs: (() => Promise<unknown>)[] = [];
let triggers = 0;

/** Every `op` on `table` for `userId` fails (when `when` holds, an SQL condition on NEW) until repaired. */
export async function failWrites(table: string, userId: string, op: "INSERT" | "UPDATE" = "INSERT", when = "1") {
  const name = `fault_${table}_${++triggers}`;
  await execAll(
    `CREATE TRIGGER ${name} BEFORE ${op} ON ${table} WHEN NEW.user_id = '${userId.replaceAll("'", "''")}' AND (${when}) BEGIN SELECT RAISE(ABORT, 'injected D1 fault'); END`,
  );
  return track(() => execAll(`DROP TRIGGER IF EXISTS ${name}`));
}

/** Every statement touching `table` fails (no such table) until repaired. */
export async function takeDown(table: string) {
  await execAll(`ALTER TABLE ${table} RENAME TO ${table}_down`);
  return track(() => execAll(`ALTER TABLE ${table}_down RENAME TO ${table}`));
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

export const count = countOnShards;

/**
 * The real D1 binding, except that `meanwhile` runs once, just before the first statement whose SQL matches
 * `pattern` is sent (alone or in a batch). Whatever the code under test read before that statement, it read
 * before `meanwhile` ran.
 */
export function pausingD1(pattern: RegExp, meanwhile: () => Promise<unknown>, d1: D1Database = env.DB): D1Database {
  let waiting = true;
  const pauseBefore = async (texts: readonly string[]) => {
    if (!waiting || !texts.some((t) => pattern.test(t))) return;
    waiting = false;
    await meanwhile();
  };
  // Each statement handed out, with its SQL and the real statement a batch must be given.
  const handedOut = new WeakMap<D1PreparedStatement, { sql: string; real: D1PreparedStatement }>();
  const statement = (real: D1PreparedStatement, sql: string): D1PreparedStatement => {
    const wrapped = new Proxy(real, {
      get(target, prop) {
        const value: unknown = Reflect.get(target, prop, target);
        if (prop === "bind") return (...values: unknown[]) => statement(target.bind(...values), sql);
        if (typeof value !== "function") return value;
        const method = value.bind(target) as (...args: unknown[]) => Promise<unknown>;
        if (prop !== "all" && prop !== "raw" && prop !== "first" && prop !== "run") return method;
        return async (...args: unknown[]) => {
          await pauseBefore([sql]);
          return method(...args);
        };
      },
    });
    handedOut.set(wrapped, { sql, real });
    return wrapped;
  };
  return new Proxy(d1, {
    get(target, prop) {
      if (prop === "prepare") return (sql: string) => statement(target.prepare(sql), sql);
      if (prop === "batch")
        return async (statements: D1PreparedStatement[]) => {
          await pauseBefore(statements.map((s) => handedOut.get(s)?.sql ?? ""));
          return target.batch(statements.map((s) => handedOut.get(s)?.real ?? s));
        };
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
