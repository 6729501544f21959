/**
 * Faults of the observation pipeline: a consumer that crashes in the middle of a batch, a batch delivered
 * again after a crash, duplicate messages, a failing queue send, and the cron sweep running while a
 * consumer works on the same events. Each observation is consolidated exactly once and none is lost.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { ConsolidateMessage } from "../src/memory/deps";
import { STALE_PENDING_MS, sweepMemory } from "../src/memory/sweep";
import { count, failWrites, repairAll } from "./fault-helpers";
import { api, createUser, script, seen } from "./helpers";
import { captured, consolidation, deliver, getJson, observe } from "./memory-helpers";
import { userD1 } from "./shard-helpers";

afterEach(repairAll);

type Events = { events: { id: string; status: string; attempts: number }[] };

const reply = (fact: string) => consolidation({ updated_scaffold: {}, updated_working_memory: fact, facts_to_embed: [fact] });

/** What a user has after consolidation: runs, facts, and events by status. */
async function applied(userId: string) {
  return {
    runs: await count("SELECT count(*) n FROM memory_runs WHERE user_id = ?", userId),
    facts: await count("SELECT count(*) n FROM facts WHERE user_id = ?", userId),
    pending: await count("SELECT count(*) n FROM context_events WHERE user_id = ? AND status = 'pending'", userId),
    processed: await count("SELECT count(*) n FROM context_events WHERE user_id = ? AND status = 'processed'", userId),
  };
}

describe("consumer crash mid-batch", () => {
  it("a D1 failure applying one user's consolidation rolls all of it back, retries only that user, and the redelivered batch applies each user once", async () => {
    const [a, b, c] = [await createUser(), await createUser(), await createUser()];
    const sent: ConsolidateMessage[] = [];
    for (const [u, text] of [
      [a, "I live in Porto"],
      [b, "I live in Oslo"],
      [c, "I live in Lima"],
    ] as const) {
      sent.push(...(await observe(u.id, [{ content: text }])).sent);
      await script(u.id, reply(text.replace("I live", "User lives")));
    }
    await script(b.id, reply("User lives in Oslo"));
    // B's batch fails on its last statement (marking the events processed): the batch is one transaction.
    const repair = await failWrites("context_events", b.id, "UPDATE", "NEW.status = 'processed'");
    const first = await deliver(sent);
    expect(first.explicitAcks.sort()).toHaveLength(2);
    expect(first.retryMessages).toHaveLength(1);
    expect(await applied(b.id)).toEqual({ runs: 0, facts: 0, pending: 1, processed: 0 });
    expect((await getJson<Events>(b.key, "/v1/memory/events")).events[0]).toMatchObject({ status: "pending", attempts: 1 });
    for (const u of [a, c]) expect(await applied(u.id)).toEqual({ runs: 1, facts: 1, pending: 0, processed: 1 });

    await repair();
    // The runtime redelivers the whole batch (as after a crash before its acks were recorded).
    const again = await deliver(sent, 2);
    expect(again.explicitAcks).toHaveLength(3);
    for (const u of [a, b, c]) expect(await applied(u.id)).toEqual({ runs: 1, facts: 1, pending: 0, processed: 1 });
    // A and C were not sent to the model again: nothing was left to consolidate.
    expect(await seen(a.id)).toHaveLength(1);
    expect(await seen(c.id)).toHaveLength(1);
    expect(await seen(b.id)).toHaveLength(2);
  });

  it("applies a message delivered three times in one batch and again later exactly once", async () => {
    const u = await createUser();
    const { sent } = await observe(u.id, [{ content: "I play the cello" }, { content: "I have two cats" }]);
    await script(
      u.id,
      consolidation({
        updated_scaffold: { Pets: "two cats" },
        updated_working_memory: "Cellist, two cats.",
        facts_to_embed: ["User plays the cello", "User has two cats"],
      }),
    );
    expect((await deliver([...sent, ...sent, ...sent])).explicitAcks).toHaveLength(3);
    expect((await deliver(sent, 3)).explicitAcks).toHaveLength(1);
    expect(await applied(u.id)).toEqual({ runs: 1, facts: 2, pending: 0, processed: 2 });
    expect(await seen(u.id)).toHaveLength(1);
  });
});

describe("queue send outage", () => {
  it("keeps an observation whose queue message could not be sent, and the sweep consolidates it later", async () => {
    const u = await createUser();
    const { deps } = await captured(u.id, { queue: { send: () => Promise.reject(new Error("queue unavailable")) } });
    const { recordObservations } = await import("../src/memory/events");
    const out = await recordObservations(deps, { id: u.id, plan: "free" }, [{ type: "fact", content: "I drink oolong", sourceMetadata: {} }]);
    expect(out.events).toHaveLength(1);
    expect(await applied(u.id)).toMatchObject({ pending: 1 });
    const sweep = await captured(u.id);
    await sweepMemory(sweep.deps, Date.now() + STALE_PENDING_MS + 1000);
    const mine = sweep.sent.filter((m) => m.userId === u.id);
    expect(mine).toHaveLength(1);
    await script(u.id, reply("User drinks oolong"));
    expect((await deliver(mine)).explicitAcks).toHaveLength(1);
    expect(await applied(u.id)).toEqual({ runs: 1, facts: 1, pending: 0, processed: 1 });
  });
});

describe("cron overlapping a consumer", () => {
  it("the sweep re-enqueueing events a consumer is consolidating at the same moment applies them once", async () => {
    const u = await createUser();
    const { sent, events } = await observe(u.id, [{ content: "I moved to Kyoto" }]);
    await (await userD1(u.id))
      .prepare("UPDATE context_events SET created_at = created_at - ? WHERE id = ?")
      .bind(STALE_PENDING_MS + 1000, events[0]?.id)
      .run();
    await script(u.id, reply("User lives in Kyoto"), reply("User lives in Kyoto now"));
    // The sweep's queue delivers at once, so the sweep's consolidation runs beside the original message's.
    const results: Awaited<ReturnType<typeof deliver>>[] = [];
    const { deps } = await captured(u.id, {
      queue: {
        send: async (m) => {
          if (m.userId === u.id) results.push(await deliver([m]));
        },
      },
    });
    const [late] = await Promise.all([deliver(sent), sweepMemory(deps, Date.now())]);
    results.push(late);
    expect(results).toHaveLength(2);
    const retried = results.flatMap((r) => r.retryMessages);
    // A loser is retried; its retry finds nothing left and is acked.
    for (const _ of retried) expect((await deliver(sent, 2)).explicitAcks).toHaveLength(1);
    expect(await applied(u.id)).toEqual({ runs: 1, facts: 1, pending: 0, processed: 1 });
    const res = await api(u.key, "GET", "/v1/memory/facts");
    const facts = ((await res.json()) as { facts: { text: string }[] }).facts.map((f) => f.text);
    expect(facts).toHaveLength(1);
    expect(facts[0]).toMatch(/^User lives in Kyoto/);
  });
});
