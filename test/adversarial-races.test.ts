/**
 * Blind writes that race (no expected version from the client) are retried inside the server on top of what won:
 * twenty at once get through. One that still loses every attempt is a 409 with Retry-After, naming what won.
 */
import { describe, expect, it } from "vitest";
import { api, createUser } from "./helpers";
import { userD1 } from "./shard-helpers";

const T = 120_000;
const N = 20;

const all = <T>(make: (i: number) => Promise<T>) => Promise.all(Array.from({ length: N }, (_, i) => make(i)));

/** Each answer: its status, Retry-After and message. */
const answers = (responses: Response[]) =>
  Promise.all(
    responses.map(async (r) => ({
      status: r.status,
      retryAfter: r.headers.get("retry-after"),
      message: r.status === 200 ? "" : ((await r.json()) as { error: { message: string } }).error.message,
    })),
  );

/**
 * Each answer is a success, or a 409 the client can act on: Retry-After, and a message saying what won. On a loaded
 * machine one writer may lose every retry; nearly all must get through. Returns how many succeeded.
 */
function expectServed(out: Awaited<ReturnType<typeof answers>>): number {
  for (const a of out.filter((x) => x.status !== 200)) {
    expect(a).toMatchObject({ status: 409, retryAfter: "1" });
    expect(a.message).toMatch(/(?:was saved while this change was being written|changed while this write was in flight)/);
  }
  const ok = out.filter((a) => a.status === 200).length;
  expect(ok).toBeGreaterThanOrEqual(N - 2);
  return ok;
}

/** Every insert of this user's rows into `table` fails as a lost race would, until the returned function undoes it. */
async function blockInserts(table: string, userId: string): Promise<() => Promise<void>> {
  const name = `block_${table}_${userId.replace(/\W/g, "")}`;
  const d1 = await userD1(userId);
  await d1
    .prepare(
      `CREATE TRIGGER ${name} BEFORE INSERT ON ${table} WHEN NEW.user_id = '${userId}'
     BEGIN SELECT RAISE(ABORT, 'UNIQUE constraint failed: ${table}.user_id'); END`,
    )
    .run();
  return async () => void (await d1.prepare(`DROP TRIGGER ${name}`).run());
}

describe("twenty concurrent blind writes", () => {
  it(
    "PUT /v1/brain/soul: the writes succeed, each as its own version",
    async () => {
      const u = await createUser();
      const ok = expectServed(await answers(await all((i) => api(u.key, "PUT", "/v1/brain/soul", { content: `Ana, version from writer ${i}.` }))));
      const soul = (await (await api(u.key, "GET", "/v1/brain/soul")).json()) as { version: number };
      expect(soul.version).toBe(ok);
    },
    T,
  );

  it(
    "PATCH /v1/memory/scaffold: the keys written are all set",
    async () => {
      const u = await createUser();
      const ok = expectServed(await answers(await all((i) => api(u.key, "PATCH", "/v1/memory/scaffold", { scaffold: { [`key${i}`]: i } }))));
      const { scaffold } = (await (await api(u.key, "GET", "/v1/memory/scaffold")).json()) as { scaffold: Record<string, number> };
      expect(Object.keys(scaffold)).toHaveLength(ok);
    },
    T,
  );

  it(
    "PUT /v1/memory/working: the writes succeed, one revision each",
    async () => {
      const u = await createUser();
      const ok = expectServed(await answers(await all((i) => api(u.key, "PUT", "/v1/memory/working", { working_memory: `Ana is baking batch ${i}.` }))));
      const { runs } = (await (await api(u.key, "GET", "/v1/memory/runs?limit=50")).json()) as { runs: { kind: string }[] };
      expect(runs.filter((r) => r.kind === "edit")).toHaveLength(ok);
    },
    T,
  );
});

describe("a write that loses every attempt", () => {
  it(
    "is a 409 with Retry-After that names what won, not a consolidation that never ran",
    async () => {
      const u = await createUser();
      expect((await api(u.key, "PUT", "/v1/memory/working", { working_memory: "Ana bakes." })).status).toBe(200);
      const unblock = await blockInserts("memory_runs", u.id);
      try {
        const res = await api(u.key, "PATCH", "/v1/memory/scaffold", { scaffold: { city: "Porto" } });
        expect(res.status).toBe(409);
        expect(res.headers.get("retry-after")).toBe("1");
        const { error } = (await res.json()) as { error: { code: string; message: string } };
        expect(error.code).toBe("conflict");
        expect(error.message).toMatch(/another edit of the working memory or scaffold/);
        expect(error.message).not.toMatch(/consolidat/);
      } finally {
        await unblock();
      }
    },
    T,
  );

  it(
    "PUT /v1/brain/soul: a 409 with Retry-After",
    async () => {
      const u = await createUser();
      const unblock = await blockInserts("brain_versions", u.id);
      try {
        const res = await api(u.key, "PUT", "/v1/brain/soul", { content: "Ana." });
        expect(res.status).toBe(409);
        expect(res.headers.get("retry-after")).toBe("1");
      } finally {
        await unblock();
      }
    },
    T,
  );
});
