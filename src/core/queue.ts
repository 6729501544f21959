/**
 * The `queue` handler: routes each message to the capability that owns its `kind`.
 * Messages from the dead-letter queue are recorded where the user and operators can see them, then
 * handed to their kind's `deadLetter`. Handlers get the messages of one shard at a time with that shard's `Db`
 * (the users' placements are read from the directory once per batch, src/db/shards.ts); a message of a user
 * being moved to another shard waits (retried later), since their writes are paused.
 */
import type { Env } from "../config/env";
import { type Db, newId } from "../db/client";
import { auditLogs } from "../db/schema";
import { placementsOf, shardDb } from "../db/shards";
import { describeFailure } from "../lib/errors";

export type QueueMessage = { kind: string; userId?: string; [k: string]: unknown };

/** `db`: the shard holding the rows of every message's user. */
export type QueueHandler = (batch: readonly Message<QueueMessage>[], env: Env, db: Db) => Promise<void>;

/** Seconds a message of a user being moved waits before it is tried again. */
export const MOVING_RETRY_SECONDS = 10;

/**
 * The messages by their user's shard. A message without a user, or of a user the directory no longer knows (a
 * deleted account), goes to shard 0, where its handler finds nothing of theirs, as it would have before shards.
 */
async function byShard(env: Env, messages: readonly Message<QueueMessage>[]): Promise<Map<number, Message<QueueMessage>[]>> {
  const userOf = (m: Message<QueueMessage>) => (typeof m.body?.userId === "string" ? m.body.userId : undefined);
  const placements = await placementsOf(
    env,
    messages.map(userOf).filter((u) => u !== undefined),
  );
  const out = new Map<number, Message<QueueMessage>[]>();
  for (const m of messages) {
    const user = userOf(m);
    const placed = user === undefined ? undefined : placements.get(user);
    if (placed?.movingTo != null) {
      m.retry({ delaySeconds: MOVING_RETRY_SECONDS });
      continue;
    }
    const shard = placed?.shard ?? 0;
    out.set(shard, [...(out.get(shard) ?? []), m]);
  }
  return out;
}

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
  // One kind (or shard) failing must neither stop the others nor make their finished messages redeliver.
  for (const [kind, messages] of byKind) {
    const handler = kinds.get(kind);
    if (!handler) continue;
    try {
      for (const [shard, group] of await byShard(env, messages)) {
        try {
          await handler.handle(group, env, shardDb(env, shard));
        } catch (err) {
          console.error(JSON.stringify({ queue: batch.queue, kind, shard, error: describeFailure(err) }));
          for (const m of group) m.retry();
        }
      }
    } catch (err) {
      console.error(JSON.stringify({ queue: batch.queue, kind, error: describeFailure(err) }));
      for (const m of messages) m.retry();
    }
  }
}

/** D1 binds at most 100 parameters per statement; an audit row binds 5. */
const AUDIT_ROWS_PER_STATEMENT = 16;

async function recordDeadLetters(kinds: ReadonlyMap<string, QueueKind>, batch: MessageBatch<QueueMessage>, env: Env) {
  for (const [shard, messages] of await byShard(env, batch.messages)) await recordShardDeadLetters(kinds, messages, env, shardDb(env, shard));
}

async function recordShardDeadLetters(kinds: ReadonlyMap<string, QueueKind>, messages: readonly Message<QueueMessage>[], env: Env, db: Db) {
  const rows = messages.map((m) => ({
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
    const ofKind = messages.filter((m) => m.body?.kind === kind);
    if (deadLetter && ofKind.length) await deadLetter(ofKind, env, db);
  }
  for (const m of messages) m.ack();
}
