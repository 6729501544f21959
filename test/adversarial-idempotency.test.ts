/**
 * An Idempotency-Key is bound to the whole body it first came with: the same body replays, any other body is a
 * conflict, a subset of the first one included.
 */
import { describe, expect, it } from "vitest";
import { api, createUser } from "./helpers";

const observation = (content: string) => ({ type: "learned_fact", content, source_metadata: { source: "sync" } });
const post = (key: string, idempotencyKey: string, observations: unknown[]) =>
  api(key, "POST", "/v1/observations", { observations }, { "idempotency-key": idempotencyKey });

describe("Idempotency-Key on POST /v1/observations", () => {
  it("replays the same whole body and refuses a subset, a superset or a reordering of it", async () => {
    const u = await createUser();
    const two = [observation("User deploys on Fridays."), observation("User's CI runs on GitHub Actions.")];
    const first = await post(u.key, "sync-1", two);
    expect(first.status).toBe(202);
    const { events } = (await first.json()) as { events: { id: string }[] };

    for (const other of [[two[0]], [two[1]], [...two, observation("User likes tea.")], [two[1], two[0]]]) {
      const res = await post(u.key, "sync-1", other);
      expect(res.status).toBe(409);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("conflict");
    }

    const again = await post(u.key, "sync-1", two);
    expect(again.status).toBe(202);
    expect(await again.json()).toMatchObject({ replayed: true, events: events.map((e) => ({ id: e.id })) });
  });
});
