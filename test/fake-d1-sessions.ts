/**
 * A D1 binding whose Sessions API (src/db/replicas.ts) holds to the documented shape, over a real local database:
 * `withSession` takes nothing, "first-primary", "first-unconstrained" or a bookmark this binding issued (anything
 * else throws, as a malformed bookmark would); a session has `prepare`, `batch` and `getBookmark` only;
 * `getBookmark()` is null until the session's first query, then a string that sorts oldest to newest and never
 * goes below the bookmark the session started from. It records where every session started.
 */
export type FakeSessions = { binding: D1Database; opened: string[]; issued: () => string | null };

export function fakeSessionsD1(real: D1Database): FakeSessions {
  let clock = 0;
  const issued = new Set<string>();
  const opened: string[] = [];
  const mint = () => {
    const bookmark = `0000${(++clock).toString(16).padStart(8, "0")}-fake`;
    issued.add(bookmark);
    return bookmark;
  };
  const native = new WeakMap<object, D1PreparedStatement>();
  const withSession = (start?: string) => {
    if (start !== undefined && start !== "first-primary" && start !== "first-unconstrained" && !issued.has(start)) {
      throw new Error(`D1_ERROR: not a bookmark or session constraint: ${start}`);
    }
    opened.push(start ?? "first-unconstrained");
    let bookmark: string | null = null;
    const seen = <T>(work: Promise<T>) =>
      work.then((result) => {
        bookmark = mint();
        return result;
      });
    const statement = (real: D1PreparedStatement): D1PreparedStatement => {
      const wrapped = new Proxy(real, {
        get(target, prop) {
          if (prop === "bind") return (...values: unknown[]) => statement(target.bind(...values));
          const value: unknown = Reflect.get(target, prop, target);
          if (typeof value !== "function") return value;
          if (prop === "run" || prop === "all" || prop === "first" || prop === "raw") return (...args: unknown[]) => seen(value.apply(target, args));
          return value.bind(target);
        },
      });
      native.set(wrapped, real);
      return wrapped;
    };
    return {
      prepare: (query: string) => statement(real.prepare(query)),
      batch: (statements: D1PreparedStatement[]) => seen(real.batch(statements.map((s) => native.get(s) ?? s))),
      getBookmark: () => bookmark,
    };
  };
  const binding = new Proxy(real, {
    get(target, prop) {
      if (prop === "withSession") return withSession;
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { binding, opened, issued: () => (clock ? `0000${clock.toString(16).padStart(8, "0")}-fake` : null) };
}
