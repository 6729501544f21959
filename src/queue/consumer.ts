/**
 * The `queue` handler: routes each message to the capability that owns its `kind`.
 * Messages from the dead-letter queue are recorded where the user and operators can see them.
 */
import type { Env } from "../config/env";
import { createDb, newId } from "../db/client";
import { auditLogs } from "../db/schema";
import { describeFailure } from "../http/errors";
import { CONSOLIDATE_KIND } from "../memory/deps";
import { handleConsolidation, markDeadLettered } from "../memory/queue";

export type QueueMessage = { kind: string; userId?: string; [k: string]: unknown };

export type QueueHandler = (batch: readonly Message<QueueMessage>[], env: Env) => Promise<void>;

/** Queue message kinds and the capability that consumes each. */
const handlers = new Map<string, QueueHandler>([[CONSOLIDATE_KIND, handleConsolidation]]);

/** What each kind does when its messages end in the dead-letter queue, after the audit row. */
const deadLetterHandlers = new Map<string, QueueHandler>([[CONSOLIDATE_KIND, markDeadLettered]]);

export const DLQ_SUFFIX = "-dlq";

export async function handleQueue(batch: MessageBatch<QueueMessage>, env: Env): Promise<void> {
  if (batch.queue.endsWith(DLQ_SUFFIX)) return recordDeadLetters(batch, env);
  const byKind = new Map<string, Message<QueueMessage>[]>();
  for (const msg of batch.messages) {
    const kind = typeof msg.body?.kind === "string" ? msg.body.kind : "";
    if (!handlers.has(kind)) {
      // Not ours to drop: retried until it lands in the dead-letter queue, where it is recorded.
      console.error(JSON.stringify({ queue: batch.queue, unknown_kind: kind.slice(0, 50), id: msg.id }));
      msg.retry();
      continue;
    }
    byKind.set(kind, [...(byKind.get(kind) ?? []), msg]);
  }
  // One kind failing must neither stop the others nor make their finished messages redeliver.
  for (const [kind, messages] of byKind) {
    const handler = handlers.get(kind);
    if (!handler) continue;
    try {
      await handler(messages, env);
    } catch (err) {
      console.error(JSON.stringify({ queue: batch.queue, kind, error: describeFailure(err) }));
      for (const m of messages) m.retry();
    }
  }
}

/** D1 binds at most 100 parameters per statement; an audit row binds 5. */
const AUDIT_ROWS_PER_STATEMENT = 16;

async function recordDeadLetters(batch: MessageBatch<QueueMessage>, env: Env) {
  const db = createDb(env.DB);
  const rows = batch.messages.map((m) => ({
    id: newId("aud"),
    userId: m.body?.userId ?? null,
    action: "queue.dead_letter",
    target: typeof m.body?.kind === "string" ? m.body.kind : null,
    detail: { message_id: m.id, attempts: m.attempts, body: JSON.parse(JSON.stringify(m.body ?? null)) },
  }));
  const inserts = [];
  for (let i = 0; i < rows.length; i += AUDIT_ROWS_PER_STATEMENT) inserts.push(db.insert(auditLogs).values(rows.slice(i, i + AUDIT_ROWS_PER_STATEMENT)));
  const [first, ...rest] = inserts;
  if (first) await db.batch([first, ...rest]);
  for (const [kind, handler] of deadLetterHandlers) {
    const messages = batch.messages.filter((m) => m.body?.kind === kind);
    if (messages.length) await handler(messages, env);
  }
  for (const m of batch.messages) m.ack();
}
