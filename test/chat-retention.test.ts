/**
 * Per-turn audit rows (the system text a turn was shown) are kept AUDIT_RETENTION_DAYS, then the cron
 * trigger deletes them, whoever they belong to; 0 keeps them until the user erases.
 */
import { createExecutionContext, createScheduledController, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Env } from "../src/config/env";
import { api, chat, createUser } from "./helpers";
import { runOnAllShards, userD1 } from "./shard-helpers";
import worker from "./worker";

const DAY = 86_400_000;
type Logs = { context_logs: { id: string; session_id: string }[] };

async function cron(vars: Partial<Env> = {}, at = Date.now()) {
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ scheduledTime: at, cron: "*/5 * * * *" }), { ...env, ...vars }, ctx);
  await waitOnExecutionContext(ctx);
}
const logs = async (key: string) => ((await (await api(key, "GET", "/v1/memory/context-logs")).json()) as Logs).context_logs;
const age = (sessionId: string, days: number) =>
  runOnAllShards("UPDATE context_logs SET created_at = ?1 WHERE session_id = ?2", Date.now() - days * DAY, sessionId);

describe("audit row retention", () => {
  it("the cron trigger deletes every user's audit rows older than the window and keeps the newer ones", async () => {
    const [a, b] = [await createUser(), await createUser()];
    const old = await chat(a.key, { message: "I live in Lisbon" });
    const recent = await chat(a.key, { message: "hello again" });
    const theirs = await chat(b.key, { message: "I live in Porto" });
    await age(old.sessionId, 31);
    await age(theirs.sessionId, 45);
    await age(recent.sessionId, 29);

    await cron();
    expect((await logs(a.key)).map((l) => l.session_id)).toEqual([recent.sessionId]);
    expect(await logs(b.key)).toEqual([]);
  });

  it("AUDIT_RETENTION_DAYS=0 keeps them; a shorter window prunes sooner", async () => {
    const u = await createUser();
    const turn = await chat(u.key, { message: "hello" });
    await age(turn.sessionId, 400);
    await cron({ AUDIT_RETENTION_DAYS: "0" });
    expect(await logs(u.key)).toHaveLength(1);
    await age(turn.sessionId, 8);
    await cron({ AUDIT_RETENTION_DAYS: "7" });
    expect(await logs(u.key)).toEqual([]);
  });

  it("a backlog larger than one step is worked off, and rows inside the window are never touched", async () => {
    const u = await createUser();
    const turn = await chat(u.key, { message: "hello" });
    const insert = (await userD1(u.id)).prepare("INSERT INTO context_logs (id, user_id, session_id, injected, created_at) VALUES (?1, ?2, ?3, '{}', ?4)");
    const rows = Array.from({ length: 1200 }, (_, i) => insert.bind(`ctx_backlog_${i}`, u.id, turn.sessionId, Date.now() - 90 * DAY));
    for (let i = 0; i < rows.length; i += 100) await (await userD1(u.id)).batch(rows.slice(i, i + 100));
    await cron();
    const left = await (await userD1(u.id)).prepare("SELECT count(*) n FROM context_logs WHERE user_id = ?1").bind(u.id).first<{ n: number }>();
    expect(left?.n).toBe(1);
  });
});
