/**
 * Counts D1 round trips up to the first model call, for the test and benchmark Workers only: a D1
 * binding wrapped by `meteredD1` reports every call (a query, a batch) to one meter per isolate.
 * `sequential` is the longest chain of calls where each started after the one before it had finished,
 * the round trips a turn waits for one after another; `calls` counts them all, concurrent ones included.
 * Production code never sees this: it is wired in test/worker.ts and bench/worker.ts.
 */
export type MeterReading = { calls: number; sequential: number };

type State = {
  generation: number;
  armed: boolean;
  calls: number;
  deepest: number;
  settledDepth: number;
  atModel: MeterReading | null;
  /** The SQL text of every statement run before the first model call. */
  texts: string[];
};
const state: State = { generation: 0, armed: false, calls: 0, deepest: 0, settledDepth: 0, atModel: null, texts: [] };

export const meter = {
  /** Starts counting afresh (call it just before the request to measure). */
  arm(): void {
    Object.assign(state, { generation: state.generation + 1, armed: true, calls: 0, deepest: 0, settledDepth: 0, atModel: null, texts: [] });
  },
  /** The first model call freezes the reading. */
  modelCalled(): void {
    if (state.armed && !state.atModel) state.atModel = { calls: state.calls, sequential: state.deepest };
  },
  /** D1 round trips before the first model call since `arm`; null when no model call happened. */
  reading(): MeterReading | null {
    return state.atModel;
  },
  /** The SQL text of the statements run before the first model call since `arm`. */
  statements(): readonly string[] {
    return state.texts;
  },
};

function track<T>(texts: readonly string[], work: () => Promise<T>): Promise<T> {
  if (!state.armed || state.atModel) return work();
  state.texts.push(...texts);
  const generation = state.generation;
  // A call started after others finished may depend on them: it is one round trip further along.
  const depth = state.settledDepth + 1;
  state.calls += 1;
  state.deepest = Math.max(state.deepest, depth);
  return work().finally(() => {
    if (state.generation === generation) state.settledDepth = Math.max(state.settledDepth, depth);
  });
}

const RUNS = new Set(["all", "raw", "run", "first"]);
const native = new WeakMap<object, { statement: D1PreparedStatement; text: string }>();

function meteredStatement(statement: D1PreparedStatement, text: string): D1PreparedStatement {
  const wrapped = new Proxy(statement, {
    get(target, prop) {
      if (prop === "bind") return (...values: unknown[]) => meteredStatement(target.bind(...values), text);
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      if (typeof prop === "string" && RUNS.has(prop)) return (...args: unknown[]) => track([text], () => value.apply(target, args));
      return value.bind(target);
    },
  });
  native.set(wrapped, { statement, text });
  return wrapped;
}

/** The binding, counting its calls; statements it prepares can still go into its `batch`. */
export function meteredD1(d1: D1Database): D1Database {
  return new Proxy(d1, {
    get(target, prop) {
      if (prop === "prepare") return (query: string) => meteredStatement(target.prepare(query), query);
      if (prop === "batch")
        return (statements: D1PreparedStatement[]) =>
          track(
            statements.map((s) => native.get(s)?.text ?? ""),
            () => target.batch(statements.map((s) => native.get(s)?.statement ?? s)),
          );
      if (prop === "exec") return (query: string) => track([query], () => target.exec(query));
      // A D1 session (the Sessions API, src/db/replicas.ts) runs its queries with prepare and batch too: count them.
      if (prop === "withSession") return (arg?: string) => meteredD1(target.withSession(arg) as unknown as D1Database);
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** Global fetch that tells the meter when a request goes to a Messages API. */
export function meteredFetch(inner: typeof fetch): typeof fetch {
  return (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    if (new URL(url).pathname.endsWith("/v1/messages")) meter.modelCalled();
    return inner(input, init);
  };
}

/** The environment with every D1 binding (the directory `DB` and each `SHARD_n`) passed through `wrap`. */
export function meteredShards<E extends object>(env: E, wrap: (d1: D1Database) => D1Database): E {
  const out: Record<string, unknown> = { ...(env as Record<string, unknown>) };
  for (const [name, value] of Object.entries(env as Record<string, unknown>))
    if (name === "DB" || /^SHARD_\d+$/.test(name)) out[name] = wrap(value as D1Database);
  return out as E;
}
