import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { handleQueue, type QueueMessage } from "../src/core/queue";
import { registry } from "./worker";

async function deliver(queue: string, bodies: QueueMessage[]) {
  const batch = createMessageBatch<QueueMessage>(
    queue,
    bodies.map((body, i) => ({ id: `msg-${queue}-${i}`, timestamp: new Date(), attempts: 1, body })),
  );
  const ctx = createExecutionContext();
  await handleQueue(registry.queueKinds, batch, env);
  return getQueueResult(batch, ctx);
}

describe("queue consumer", () => {
  it("retries a message of an unknown kind instead of dropping it, so it ends in the dead-letter queue", async () => {
    const result = await deliver("engram-observations", [{ kind: "no-such-kind", userId: "usr_q1" }]);
    expect(result.retryMessages.map((m) => m.msgId)).toEqual(["msg-engram-observations-0"]);
    expect(result.explicitAcks).toEqual([]);
  });

  it("records every dead letter visibly, in batches D1 accepts, and acks them", async () => {
    const bodies = Array.from({ length: 50 }, (_, i) => ({ kind: "no-such-kind", userId: `usr_dlq${i}` }));
    const result = await deliver("engram-observations-dlq", bodies);
    expect(result.explicitAcks).toHaveLength(50);
    const rows = await env.DB.prepare("SELECT user_id, target, detail FROM audit_logs WHERE action = 'queue.dead_letter' AND user_id LIKE 'usr_dlq%'").all<{
      user_id: string;
      target: string;
      detail: string;
    }>();
    expect(rows.results).toHaveLength(50);
    expect(JSON.parse(rows.results[0]?.detail ?? "{}")).toMatchObject({ attempts: 1 });
  });
});
