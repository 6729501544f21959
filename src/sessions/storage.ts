/**
 * The session Durable Object's SQLite: the history (`messages`), the suspended turn (`continuation`,
 * at most one row) and small state (`state`: the always-allow set, recently expired call ids, a failed
 * resume's turn kept for its retry, ...).
 * Every JSON column holds one JSON value written with one JSON.stringify; the CHECKs make a
 * continuation whose messages are a string (a second layer of escaping) impossible to store.
 * The tables are created by the first write: an object reached with an id that names no session (a
 * turn refused before anything is written) stores nothing.
 */

import { type Continuation, decodeContinuation, encodeContinuation } from "../bridge/continuation";
import { decodeRetryable, RetryableTurn } from "../bridge/retry";
import type { MessageParam } from "../chat/loop";
import type { StoredStatement } from "../db/batch";
import type { SpentTokens } from "../usage/spent";
import type { StoredMessage } from "./history";
import type { FoldFailures, SessionSummary } from "./history-budget";

/** A D1 session bookmark and the shard it belongs to (a bookmark means nothing to another database). */
export type D1Position = { shard: number; bookmark: string };

type Row = { seq: number; role: "user" | "assistant"; content: string; created_at: number };

const KEEP_EXPIRED = 20;

const stored = (r: Row): StoredMessage => ({ seq: r.seq, role: r.role, content: JSON.parse(r.content) as MessageParam["content"], created_at: r.created_at });

/** The session row's defaults a turn needs before its context read (they never change after creation). */
export type SessionMeta = { site_id: string | null; project_id: string | null };

export class SessionStorage {
  private readonly sql: SqlStorage;
  private created: boolean;
  /**
   * Live messages already read and parsed, by seq. A stored message never changes (rows are only
   * inserted and deleted, and seq only grows), so a turn reads the content of the rows after
   * `newestParsed` alone; the seqs it lists say which rows still exist. Callers must not mutate them.
   */
  private readonly parsed = new Map<number, StoredMessage>();
  private newestParsed = 0;

  constructor(private readonly storage: DurableObjectStorage) {
    this.sql = storage.sql;
    this.created = this.sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'state'").toArray().length > 0;
  }

  /** After `deleteAll`: the tables are gone, and the next write creates them again. */
  forget(): void {
    this.created = false;
    this.parsed.clear();
    this.newestParsed = 0;
  }

  private create(): void {
    if (this.created) return;
    this.sql.exec(`CREATE TABLE IF NOT EXISTS messages (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
      content TEXT NOT NULL CHECK (json_valid(content)),
      created_at INTEGER NOT NULL)`);
    this.sql.exec(`CREATE TABLE IF NOT EXISTS state (key TEXT PRIMARY KEY, value TEXT NOT NULL CHECK (json_valid(value)))`);
    this.sql.exec(`CREATE TABLE IF NOT EXISTS continuation (
      slot INTEGER PRIMARY KEY CHECK (slot = 1),
      v INTEGER NOT NULL,
      body TEXT NOT NULL CHECK (json_valid(body) AND json_type(body, '$.messages') = 'array' AND json_extract(body, '$.v') = v),
      expires_at INTEGER NOT NULL)`);
    this.created = true;
  }

  messages(): StoredMessage[] {
    if (!this.created) return [];
    return this.sql.exec<Row>("SELECT seq, role, content, created_at FROM messages ORDER BY seq").toArray().map(stored);
  }

  /** Stored messages after `afterSeq`, at most `limit`, in order: an export reads a long history in pages. */
  messagesAfter(afterSeq: number, limit: number): StoredMessage[] {
    if (!this.created) return [];
    return this.sql.exec<Row>("SELECT seq, role, content, created_at FROM messages WHERE seq > ? ORDER BY seq LIMIT ?", afterSeq, limit).toArray().map(stored);
  }

  /**
   * An imported conversation's messages, appended in order with their own times, in one transaction. `reset` first
   * drops every stored message: an import that failed after writing here is written again from the start.
   */
  importMessages(messages: readonly Pick<StoredMessage, "role" | "content" | "created_at">[], reset: boolean): void {
    this.create();
    this.storage.transactionSync(() => {
      if (reset) this.sql.exec("DELETE FROM messages");
      for (const m of messages)
        this.sql.exec("INSERT INTO messages (role, content, created_at) VALUES (?, ?, ?)", m.role, JSON.stringify(m.content), m.created_at);
    });
    this.parsed.clear();
    this.newestParsed = 0;
  }

  /**
   * The messages a model call can still see: those after the running summary (all of them without one).
   * A long session's folded turns stay on disk instead of being read and parsed on every turn, and the
   * rows an earlier turn already parsed are not read or parsed again (see `parsed`).
   */
  liveMessages(): StoredMessage[] {
    if (!this.created) return [];
    const through = this.summary()?.through ?? 0;
    const known = this.newestParsed;
    const rows = this.sql
      .exec<Row | (Omit<Row, "content"> & { content: null })>(
        "SELECT seq, role, CASE WHEN seq > ? THEN content END AS content, created_at FROM messages WHERE seq > ? ORDER BY seq",
        known,
        through,
      )
      .toArray();
    const out: StoredMessage[] = [];
    for (const row of rows) {
      const hit = row.content === null ? (this.parsed.get(row.seq) ?? this.readOne(row.seq)) : this.remember(stored(row as Row));
      if (hit) out.push(hit);
    }
    for (const seq of this.parsed.keys()) if (seq <= through) this.parsed.delete(seq);
    return out;
  }

  private readOne(seq: number): StoredMessage | undefined {
    const row = this.sql.exec<Row>("SELECT seq, role, content, created_at FROM messages WHERE seq = ?", seq).toArray()[0];
    return row ? this.remember(stored(row)) : undefined;
  }

  private remember(m: StoredMessage): StoredMessage {
    this.parsed.set(m.seq, m);
    if (m.seq > this.newestParsed) this.newestParsed = m.seq;
    return m;
  }

  /** The latest message (of `role`, when given), wherever it is in the history. */
  lastMessage(role?: StoredMessage["role"]): StoredMessage | undefined {
    if (!this.created) return undefined;
    const query = `SELECT seq, role, content, created_at FROM messages ${role ? "WHERE role = ?" : ""} ORDER BY seq DESC LIMIT 1`;
    const row = this.sql.exec<Row>(query, ...(role ? [role] : [])).toArray()[0];
    return row ? stored(row) : undefined;
  }

  messageCount(): number {
    return this.sql.exec<{ n: number }>("SELECT count(*) AS n FROM messages").one().n;
  }

  append(messages: readonly MessageParam[]): number[] {
    this.create();
    return this.storage.transactionSync(() => this.insert(messages));
  }

  deleteMessage(seq: number): void {
    if (!this.created) return;
    this.sql.exec("DELETE FROM messages WHERE seq = ?", seq);
  }

  continuation(): Continuation | null {
    if (!this.created) return null;
    const row = this.sql.exec<{ body: string }>("SELECT body FROM continuation WHERE slot = 1").toArray()[0];
    return row ? decodeContinuation(row.body) : null;
  }

  /** Replaces the continuation (one-shot: there is never more than one). */
  saveContinuation(c: Continuation): void {
    this.create();
    this.sql.exec("INSERT OR REPLACE INTO continuation (slot, v, body, expires_at) VALUES (1, ?, ?, ?)", c.v, encodeContinuation(c), c.expires_at);
  }

  /** Writes messages to history and clears the continuation, in one transaction; `expired` calls answer 410 later. */
  closeContinuation(messages: readonly MessageParam[], expired: readonly string[] = []): number[] {
    this.create();
    return this.storage.transactionSync(() => {
      this.sql.exec("DELETE FROM continuation");
      if (expired.length) this.setState("expired_calls", [...expired, ...(this.state<string[]>("expired_calls") ?? [])].slice(0, KEEP_EXPIRED));
      return this.insert(messages);
    });
  }

  /** A resumed turn the model failed after the client's answer, kept for the same answer sent again (bridge/retry.ts). */
  retryableTurn(): RetryableTurn | null {
    const value = this.state<unknown>("retryable_turn");
    return value === null ? null : decodeRetryable(value);
  }

  /** Written through its schema; null drops it (the turn went on). */
  saveRetryableTurn(turn: RetryableTurn | null): void {
    if (turn) this.setState("retryable_turn", RetryableTurn.parse(turn));
    else if (this.created) this.sql.exec("DELETE FROM state WHERE key = 'retryable_turn'");
  }

  alwaysAllowed(): Set<string> {
    return new Set(this.state<string[]>("always_allow") ?? []);
  }

  allowAlways(toolName: string): void {
    this.setState("always_allow", [...new Set([...this.alwaysAllowed(), toolName])]);
  }

  /** The running summary of the messages left out of model calls (they stay in `messages`). */
  summary(): SessionSummary | null {
    return this.state<SessionSummary>("summary");
  }

  saveSummary(summary: SessionSummary): void {
    this.setState("summary", summary);
  }

  /** Consecutive failed summary calls (null after a success): later turns wait before trying again. */
  foldFailures(): FoldFailures | null {
    return this.state<FoldFailures>("fold_failures");
  }

  saveFoldFailures(failures: FoldFailures | null): void {
    if (failures) this.setState("fold_failures", failures);
    else if (this.created) this.sql.exec("DELETE FROM state WHERE key = 'fold_failures'");
  }

  /**
   * Set while a turn segment runs, cleared when it ends or suspends. Found set by a later turn (the lock is then
   * free), it says the Worker was killed mid-turn.
   */
  turnRunning(): boolean {
    return this.state<number>("turn_running") !== null;
  }

  markTurnRunning(running: boolean): void {
    if (running) this.setState("turn_running", Date.now());
    else if (this.created) this.sql.exec("DELETE FROM state WHERE key = 'turn_running'");
  }

  /** The seq the requests' history starts from while no summary covers what is before it (history-budget.ts, `trimFrom`). */
  trimmedFrom(): number | null {
    return this.state<number>("trimmed_from");
  }

  saveTrimmedFrom(seq: number | null): void {
    if (seq !== null) this.setState("trimmed_from", seq);
    else if (this.created) this.sql.exec("DELETE FROM state WHERE key = 'trimmed_from'");
  }

  sessionMeta(): SessionMeta | null {
    return this.state<SessionMeta>("session");
  }

  saveSessionMeta(meta: SessionMeta): void {
    this.setState("session", meta);
  }

  /**
   * Tokens a turn spent whose usage row could not be written: the next turn's bookkeeping writes them (a
   * record saved before costs were kept per call has no `cost_usd`).
   */
  owedTokens(): (Omit<SpentTokens, "cost_usd"> & { cost_usd?: number }) | null {
    return this.state<Omit<SpentTokens, "cost_usd"> & { cost_usd?: number }>("owed_tokens");
  }

  saveOwedTokens(owed: SpentTokens | null): void {
    if (owed) this.setState("owed_tokens", owed);
    else if (this.created) this.sql.exec("DELETE FROM state WHERE key = 'owed_tokens'");
  }

  /** D1 writes a segment could not make because its user was being moved: the next segment makes them. */
  owedWrites(): StoredStatement[] | null {
    return this.state<StoredStatement[]>("owed_writes");
  }

  saveOwedWrites(owed: StoredStatement[] | null): void {
    if (owed) this.setState("owed_writes", owed);
    else if (this.created) this.sql.exec("DELETE FROM state WHERE key = 'owed_writes'");
  }

  /** Where the last turn left its shard's D1 session (src/db/replicas.ts): the next turn reads from there on. */
  d1Bookmark(): D1Position | null {
    return this.state<D1Position>("d1_bookmark");
  }

  /** Kept only in a session that exists: a turn that outlived its session's erasure must not create it again. */
  saveD1Bookmark(position: D1Position): void {
    if (this.created) this.setState("d1_bookmark", position);
  }

  wasExpired(callId: string): boolean {
    return (this.state<string[]>("expired_calls") ?? []).includes(callId);
  }

  private insert(messages: readonly MessageParam[]): number[] {
    const at = Date.now();
    return messages.map(
      (m) =>
        this.sql
          .exec<{ seq: number }>("INSERT INTO messages (role, content, created_at) VALUES (?, ?, ?) RETURNING seq", m.role, JSON.stringify(m.content), at)
          .one().seq,
    );
  }

  private state<T>(key: string): T | null {
    if (!this.created) return null;
    const row = this.sql.exec<{ value: string }>("SELECT value FROM state WHERE key = ?", key).toArray()[0];
    return row ? (JSON.parse(row.value) as T) : null;
  }

  private setState(key: string, value: unknown): void {
    this.create();
    this.sql.exec("INSERT OR REPLACE INTO state (key, value) VALUES (?, ?)", key, JSON.stringify(value));
  }
}
