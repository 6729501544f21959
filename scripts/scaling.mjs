#!/usr/bin/env node
// `npm run scaling [-- --active 0.2 --turns 20 --observations 10 --prompt-chars 8000 --peak 3 --json]`
//
// Where engram meets Cloudflare's published limits at 10k, 1M and 100M users (docs/scaling.md). Two halves:
// 1. Measured here: the bytes one row of each D1 table takes, indexes and full-text shadow tables included.
//    The repository's own migrations are applied to an in-memory SQLite (node:sqlite, the same engine D1 runs),
//    a sample of rows shaped like the ones engram writes is inserted, and SQLite's `dbstat` says how many bytes
//    each table and its indexes use.
// 2. A usage profile (flags; defaults below) turns those into storage per user per year, D1 queries/s, queue
//    messages/s and vectors at each scale, each against the limit it runs into.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { parseArgs } from "node:util";

const { values: opt } = parseArgs({
  options: {
    active: { type: "string", default: "0.2" }, // share of users active on a given day
    turns: { type: "string", default: "20" }, // chat turns per active user per day
    observations: { type: "string", default: "10" }, // observations per active user per day
    "per-consolidation": { type: "string", default: "3" }, // observations one consolidation run takes (queue batching)
    "facts-per-run": { type: "string", default: "1.5" }, // new facts per consolidation run
    sessions: { type: "string", default: "2" }, // new sessions per active user per day
    "prompt-chars": { type: "string", default: "8000" }, // system prompt size a turn's audit row stores (budget: 24,000)
    peak: { type: "string", default: "3" }, // peak hour over the daily average
    days: { type: "string", default: "365" }, // how long rows accumulate (nothing is pruned today)
    "log-days": { type: "string" }, // keep the per-turn audit rows (context_logs) this many days (default: --days)
    json: { type: "boolean", default: false },
  },
});
const p = Object.fromEntries(Object.entries(opt).map(([k, v]) => [k, typeof v === "string" ? Number(v) : v]));
for (const [k, v] of Object.entries(p)) if (typeof v === "number" && !(Number.isFinite(v) && v >= 0)) throw new Error(`--${k} must be a non-negative number`);

// Cloudflare's published limits, as published in 2026 (sources in docs/scaling.md).
const LIMITS = {
  d1DatabaseBytes: 10e9, // D1: 10 GB per database (Workers Paid), not raisable
  d1QueriesPerSecond: 1000, // D1: one database runs queries one at a time; ~1,000/s at 1 ms per query
  d1DatabasesPerAccount: 50_000,
  vectorsPerIndex: 10_000_000, // Vectorize: 10M vectors per index
  namespacesPerIndex: 50_000, // Vectorize: 50,000 namespaces per index (Workers Paid)
  indexesPerAccount: 50_000,
  queueMessagesPerSecond: 5000, // Queues: 5,000 messages/s per queue
  queuesPerAccount: 10_000,
  doRequestsPerSecond: 1000, // Durable Objects: soft limit of 1,000 requests/s per object
  doBytes: 10e9, // SQLite-backed Durable Object: 10 GB per object
};

// D1 statements per operation, counted on the code paths (the chat-turn bench meters the turn's reads: 6 D1
// calls before the model, the key lookup among them; then one bookkeeping batch of usage, audit and session rows).
const STATEMENTS = { turn: 6 + 3 + 1, observation: 3, consolidation: 8 };
// Vectorize calls: a turn's retrieval queries once; a consolidation queries for related facts and upserts.
const VECTOR_CALLS = { turn: 1, consolidation: 2 };

const ROOT = path.join(import.meta.dirname, "..");

function migratedDb() {
  const db = new DatabaseSync(":memory:");
  const dir = path.join(ROOT, "migrations");
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith(".sql"))
    .sort())
    db.exec(readFileSync(path.join(dir, file), "utf8"));
  return db;
}

const words = "the user prefers short emails works on the toolstream beta launch lives in porto plays chess on sundays".split(" ");
const sentence = (i, n) => Array.from({ length: n }, (_, k) => words[(i * 7 + k * 3) % words.length]).join(" ");
const id = (prefix, i) => `${prefix}_${String(i).padStart(20, "0")}`;
const SAMPLE = 2000;

/** Bytes per row of each table engram grows per user, measured with dbstat over a sample of SAMPLE rows. */
function measureRowBytes() {
  const db = migratedDb();
  const user = id("usr", 1);
  db.prepare("INSERT INTO users (id, name, plan, working_memory) VALUES (?, ?, 'pro', ?)").run(user, "Sample", sentence(1, 400));
  const now = Date.now();
  const insert = {
    facts: db.prepare("INSERT INTO facts (id, user_id, text, metadata, source, confidence, created_at) VALUES (?, ?, ?, ?, 'system_learned', 0.7, ?)"),
    context_events: db.prepare(
      "INSERT INTO context_events (id, user_id, event_type, content, source_metadata, status, processed, created_at, processed_at) VALUES (?, ?, 'learned_fact', ?, ?, 'processed', 1, ?, ?)",
    ),
    sessions: db.prepare("INSERT INTO sessions (id, user_id, title, message_count, created_at, updated_at) VALUES (?, ?, ?, 24, ?, ?)"),
    usage: db.prepare(
      "INSERT INTO usage (id, user_id, kind, model, input_tokens, output_tokens, session_id, created_at) VALUES (?, ?, 'chat', 'claude-sonnet-5-5', 5200, 340, ?, ?)",
    ),
    context_logs: db.prepare("INSERT INTO context_logs (id, user_id, session_id, injected, created_at) VALUES (?, ?, ?, ?, ?)"),
    memory_runs: db.prepare(
      "INSERT INTO memory_runs (id, user_id, rev, kind, event_ids, summary, model, input_tokens, output_tokens, created_at) VALUES (?, ?, ?, 'consolidation', ?, ?, 'claude-haiku-5-5', 2400, 300, ?)",
    ),
  };
  const systemText = sentence(3, Math.round(p["prompt-chars"] / 6));
  for (let i = 0; i < SAMPLE; i++) {
    const at = now + i;
    const events = [id("evt", i), id("evt", i + 1), id("evt", i + 2)];
    insert.facts.run(id("fct", i), user, `User ${sentence(i, 14)} (${i})`, JSON.stringify({ event_ids: events, session_ids: [id("ses", i % 50)] }), at);
    insert.context_events.run(
      id("evt", i),
      user,
      `${sentence(i + 5, 18)} (${i})`,
      JSON.stringify({ source: "interactive", session_id: id("ses", i % 50) }),
      at,
      at + 1000,
    );
    insert.sessions.run(id("ses", i), user, sentence(i, 6), at, at);
    insert.usage.run(id("use", i), user, id("ses", i % 50), at);
    const injected = {
      sections: [
        { name: "soul", ids: [], chars: 1200 },
        { name: "working_memory", ids: [], chars: 2400 },
        { name: "retrieved_facts", ids: Array.from({ length: 8 }, (_, k) => id("fct", i + k)), chars: 900 },
      ],
      skipped: [{ name: "heartbeat", reason: "nothing due" }],
      system_chars: systemText.length,
      system: systemText,
      turn_context: `<turn_context>\n${sentence(i, 40)}\n</turn_context>`,
    };
    insert.context_logs.run(id("ctx", i), user, id("ses", i % 50), JSON.stringify(injected), at);
    insert.memory_runs.run(
      id("run", i),
      user,
      i + 1,
      JSON.stringify(events),
      JSON.stringify({ facts: [id("fct", i)], scaffold_changed: ["Role"], working_memory_words: 120 }),
      at,
    );
  }
  // Every b-tree (table, its indexes, FTS shadow tables) belongs to the table it serves.
  const owner = new Map(
    db
      .prepare("SELECT name, tbl_name FROM sqlite_master WHERE type IN ('table', 'index')")
      .all()
      .map((r) => [r.name, r.tbl_name]),
  );
  const fts = (name) => name.replace(/_(data|idx|content|docsize|config)$/, "").replace(/_fts$/, "");
  const bytes = new Map();
  for (const r of db.prepare("SELECT name, sum(pgsize) bytes FROM dbstat GROUP BY name").all()) {
    const table = fts(owner.get(r.name) ?? r.name);
    bytes.set(table, (bytes.get(table) ?? 0) + r.bytes);
  }
  const perRow = Object.fromEntries(Object.keys(insert).map((t) => [t, Math.round((bytes.get(t) ?? 0) / SAMPLE)]));
  return { ...perRow, memory_run_copies: runCopyBytes() - perRow.memory_runs };
}

/**
 * Bytes per memory revision that keeps a copy of the tiers (the latest KEPT_COPIES of a user's do): the same
 * revisions as above, each holding a 400-word narrative and a scaffold of about 1,500 characters.
 */
function runCopyBytes() {
  const db = migratedDb();
  const user = id("usr", 1);
  db.prepare("INSERT INTO users (id, name, plan) VALUES (?, ?, 'pro')").run(user, "Sample");
  const scaffold = JSON.stringify(Object.fromEntries(Array.from({ length: 20 }, (_, k) => [`Key ${k}`, sentence(k, 10)])));
  const meta = JSON.stringify(Object.fromEntries(Array.from({ length: 20 }, (_, k) => [`Key ${k}`, { confidence: 0.9, updated_at: Date.now() }])));
  const insert = db.prepare(
    "INSERT INTO memory_runs (id, user_id, rev, kind, event_ids, summary, model, input_tokens, output_tokens, created_at, working_memory, scaffold, scaffold_meta) VALUES (?, ?, ?, 'consolidation', ?, ?, 'claude-haiku-5-5', 2400, 300, ?, ?, ?, ?)",
  );
  for (let i = 0; i < SAMPLE; i++) {
    const events = [id("evt", i), id("evt", i + 1), id("evt", i + 2)];
    const summary = { facts: [id("fct", i)], scaffold_changed: ["Role"], working_memory_words: 400 };
    insert.run(id("run", i), user, i + 1, JSON.stringify(events), JSON.stringify(summary), Date.now() + i, sentence(i, 400), scaffold, meta);
  }
  const total = db.prepare("SELECT sum(pgsize) bytes FROM dbstat WHERE name IN (SELECT name FROM sqlite_master WHERE tbl_name = 'memory_runs')").get();
  return Math.round(total.bytes / SAMPLE);
}

/** How many of a user's latest memory revisions keep their copy of the tiers (KEPT_COPIES in src/memory/tiers.ts). */
const KEPT_COPIES = 100;

function perUser(rowBytes) {
  const activeDays = p.days * p.active;
  const runs = p.observations / p["per-consolidation"];
  const rows = {
    facts: activeDays * runs * p["facts-per-run"],
    context_events: activeDays * p.observations,
    sessions: activeDays * p.sessions,
    usage: activeDays * (p.turns + runs), // a chat row per turn, a consolidation row per run
    context_logs: Math.min(p.days, p["log-days"] ?? p.days) * p.active * p.turns,
    memory_runs: activeDays * runs,
    memory_run_copies: Math.min(activeDays * runs, KEPT_COPIES),
  };
  const bytes = Object.entries(rows).reduce((sum, [t, n]) => sum + n * (rowBytes[t] ?? 0), 0);
  const perDay = p.turns * STATEMENTS.turn + p.observations * STATEMENTS.observation + runs * STATEMENTS.consolidation;
  return { rows, bytes, statementsPerActiveDay: perDay, runsPerActiveDay: runs };
}

const ceil = (x) => Math.max(1, Math.ceil(x));

function atScale(users, u) {
  const active = users * p.active;
  const perSecond = (perActiveDay) => ((active * perActiveDay) / 86_400) * p.peak;
  const d1Bytes = users * u.bytes;
  const d1Qps = perSecond(u.statementsPerActiveDay);
  const queueMps = perSecond(p.observations);
  const vectors = users * u.rows.facts;
  const vectorQps = perSecond(p.turns * VECTOR_CALLS.turn + u.runsPerActiveDay * VECTOR_CALLS.consolidation);
  const need = {
    d1BySize: ceil(d1Bytes / (LIMITS.d1DatabaseBytes * 0.8)), // sharded at 80% full
    d1ByQps: ceil(d1Qps / (LIMITS.d1QueriesPerSecond * 0.5)), // sharded at 50% busy: queries queue past that
    queues: ceil(queueMps / (LIMITS.queueMessagesPerSecond * 0.5)),
    indexesByVectors: ceil(vectors / LIMITS.vectorsPerIndex),
    indexesByNamespaces: ceil(users / LIMITS.namespacesPerIndex), // a namespace per user
  };
  const first = [
    ["D1 size (10 GB per database)", need.d1BySize],
    ["D1 throughput (~1,000 queries/s per database)", need.d1ByQps],
    ["Queues throughput (5,000 messages/s per queue)", need.queues],
    ["Vectorize vectors (10M per index)", need.indexesByVectors],
    ["Vectorize namespaces (50,000 per index)", need.indexesByNamespaces],
  ].filter(([, n]) => n > 1);
  return { users, active, d1Bytes, d1Qps, queueMps, vectors, vectorQps, need, first: first.map(([what, n]) => `${what}: ${n}`) };
}

/**
 * Shards (src/db/shards.ts): how many users one shard database holds before it is 80% full or 50% busy, and so
 * how many shards a scale needs, the directory included (its rows per user: the users row and a few keys).
 */
function sharding(u) {
  const peakQpsPerUser = ((p.active * u.statementsPerActiveDay) / 86_400) * p.peak;
  const bySize = Math.floor((LIMITS.d1DatabaseBytes * 0.8) / u.bytes);
  const byQps = Math.floor((LIMITS.d1QueriesPerSecond * 0.5) / peakQpsPerUser);
  const usersPerShard = Math.min(bySize, byQps);
  // The directory: a users row (about 300 bytes with its tiers empty) and about two keys (200 bytes each) per
  // user; it serves one key lookup per request (a turn, an observation post).
  const directoryBytesPerUser = 300 + 2 * 200;
  const directoryQpsPerUser = ((p.active * (p.turns + p.observations)) / 86_400) * p.peak;
  const scales = [10_000, 1_000_000, 100_000_000].map((users) => ({
    users,
    shards: ceil(users / usersPerShard),
    directoryBytes: users * directoryBytesPerUser,
    directoryQps: users * directoryQpsPerUser,
  }));
  // Moving a user (src/account/move.ts) as it runs: one statement counts the user's rows per table; each table
  // is read in pages of 250 rows, each page written in one batch; verifying reads the counts and the user row on
  // both sides, then each non-empty table in pages of 1,000; nine more calls start the move (placement, mark,
  // fence), clear the target, copy the user row, switch, delete the old rows and clear the mark.
  // bench/shards-move.test.ts measures the same calls on a generated user.
  const tables = Object.entries(u.rows).filter(([t]) => t !== "memory_run_copies");
  const rows = tables.reduce((a, [, n]) => a + n, 0);
  const pages = (per) => tables.reduce((a, [, n]) => a + Math.ceil(n / per), 0);
  const move = { rows, bytes: u.bytes, roundTrips: 1 + 2 * pages(250) + 2 * (2 + pages(1000)) + 9 };
  return { usersPerShard, bySize, byQps, scales, move };
}

const human = (n, unit = "") => {
  const abs = Math.abs(n);
  const [v, s] = abs >= 1e12 ? [n / 1e12, "T"] : abs >= 1e9 ? [n / 1e9, "G"] : abs >= 1e6 ? [n / 1e6, "M"] : abs >= 1e3 ? [n / 1e3, "k"] : [n, ""];
  return `${v >= 100 || s === "" ? v.toFixed(0) : v.toFixed(1)} ${s}${unit}`.trim();
};

const rowBytes = measureRowBytes();
const u = perUser(rowBytes);
const scales = [10_000, 1_000_000, 100_000_000].map((n) => atScale(n, u));
const shards = sharding(u);

if (p.json) {
  console.log(JSON.stringify({ profile: p, limits: LIMITS, statements: STATEMENTS, rowBytes, perUser: u, scales, shards }, null, 2));
} else {
  console.log(`Profile: ${p.active * 100}% of users active a day; per active day ${p.turns} turns, ${p.observations} observations, ${p.sessions} sessions;`);
  console.log(
    `${p["per-consolidation"]} observations per consolidation, ${p["facts-per-run"]} facts per run; ${p["prompt-chars"]}-char system prompt; peak ${p.peak}x; ${p.days} days kept${p["log-days"] !== undefined ? `, audit rows ${p["log-days"]} days` : ""}.\n`,
  );
  console.log("Measured bytes per row (table + indexes + full-text index), migrations applied to SQLite:\n");
  console.log("| table | bytes/row | rows per user per year | bytes per user per year |\n|---|---|---|---|");
  for (const [t, b] of Object.entries(rowBytes)) console.log(`| ${t} | ${b} | ${u.rows[t].toFixed(0)} | ${human(u.rows[t] * b, "B")} |`);
  console.log(`| **total** | | | **${human(u.bytes, "B")}** |\n`);
  console.log(
    `D1 statements per active user per day: ${u.statementsPerActiveDay.toFixed(0)} (turn ${STATEMENTS.turn}, observation ${STATEMENTS.observation}, consolidation ${STATEMENTS.consolidation}).\n`,
  );
  console.log(
    "| users | D1 data after a year | D1 databases (size) | peak D1 queries/s | D1 databases (throughput) | peak queue msgs/s | queues | vectors | Vectorize indexes (vectors / namespace per user) | peak vector queries/s |",
  );
  console.log("|---|---|---|---|---|---|---|---|---|---|");
  for (const s of scales)
    console.log(
      `| ${human(s.users)} | ${human(s.d1Bytes, "B")} | ${s.need.d1BySize} | ${human(s.d1Qps)} | ${s.need.d1ByQps} | ${human(s.queueMps)} | ${s.need.queues} | ${human(s.vectors)} | ${s.need.indexesByVectors} / ${s.need.indexesByNamespaces} | ${human(s.vectorQps)} |`,
    );
  console.log("\nFirst limits reached (units needed, with headroom: D1 at 80% full or 50% busy, queues at 50%):");
  for (const s of scales) console.log(`- ${human(s.users)} users: ${s.first.length ? s.first.join("; ") : "none: one of each holds"}`);
  console.log(
    `\nShards (D1 databases of users' rows, at 80% full or 50% busy): ${human(shards.usersPerShard)} users per shard (size allows ${human(shards.bySize)}, throughput ${human(shards.byQps)}).\n`,
  );
  console.log("| users | shards | directory size | directory peak queries/s |\n|---|---|---|---|");
  for (const s of shards.scales) console.log(`| ${human(s.users)} | ${s.shards} | ${human(s.directoryBytes, "B")} | ${human(s.directoryQps)} |`);
  console.log(
    `\nMoving a user after a year: ${human(shards.move.rows)} rows, ${human(shards.move.bytes, "B")}, about ${shards.move.roundTrips} D1 round trips (copy, verify, switch, delete).`,
  );
}
