/**
 * The `queue` handler: routes each message to the capability that owns its `kind`.
 * Messages from the dead-letter queue are recorded where the user and operators can see them, then
 * handed to their kind's `deadLetter`.
 */
import type { Env } from "../config/env";
import { createDb, newId } from "../db/client";
import { auditLogs } from "../db/schema";
import { describeFailure } from "../lib/errors";

export type QueueMessage = { kind: string; userId?: string; [k: string]: unknown };

export type QueueHandler = (batch: readonly Message<QueueMessage>[], env: Env) => Promise<void>;

/** A queue message kind and the capability code that consumes it. */
export type QueueKind = {
  kind: string;
  handle: QueueHandler;
  /** What happens when its messages end in the dead-letter queue, after the audit row. */
  deadLetter?: QueueHandler;
};

export const DLQ_SUFFIX = "-dlq";

export async function handleQueue(kinds: ReadonlyMap<string, QueueKind>, batch: MessageBatch<QueueMessage>, env: Env): Promise<void> {
  if (batch.queue.endsWith(DLQ_SUFFIX)) return recordDeadLetters(kinds, batch, env);
  const byKind = new Map<string, Message<QueueMessage>[]>();
  for (const msg of batch.messages) {
    const kind = typeof msg.body?.kind === "string" ? msg.body.kind : "";
    if (!kinds.has(kind)) {
      // Not ours to drop: retried until it lands in the dead-letter queue, where it is recorded.
      console.error(JSON.stringify({ queue: batch.queue, unknown_kind: kind.slice(0, 50), id: msg.id }));
      msg.retry();
      continue;
    }
    byKind.set(kind, [...(byKind.get(kind) ?? []), msg]);
  }
  // One kind failing must neither stop the others nor make their finished messages redeliver.
  for (const [kind, messages] of byKind) {
    const handler = kinds.get(kind);
    if (!handler) continue;
    try {
      await handler.handle(messages, env);
    } catch (err) {
      console.error(JSON.stringify({ queue: batch.queue, kind, error: describeFailure(err) }));
      for (const m of messages) m.retry();
    }
  }
}

/** D1 binds at most 100 parameters per statement; an audit row binds 5. */
const AUDIT_ROWS_PER_STATEMENT = 16;

async function recordDeadLetters(kinds: ReadonlyMap<string, QueueKind>, batch: MessageBatch<QueueMessage>, env: Env) {
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
  for (const [kind, { deadLetter }] of kinds) {
    const messages = batch.messages.filter((m) => m.body?.kind === kind);
    if (deadLetter && messages.length) await deadLetter(messages, env);
  }
  for (const m of batch.messages) m.ack();
}
