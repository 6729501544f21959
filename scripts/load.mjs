#!/usr/bin/env node
// `npm run load [-- --duration 60 --rounds 1 --concurrency 8 --observe-every 2000 --tokens 120 --drain 120
//   --heap-dir DIR --write]`
//
// A load run on loopback only: engram under `wrangler dev` (scripts/local-worker.mjs: fresh local D1, Durable
// Objects, queues) against the fake Messages API (scripts/bench.mjs `serveFake`) behind a pacing proxy that
// answers like a real model: the first byte after --ttft ms (300), then text at --tps tokens per second (40).
// N sessions (each its own user and key) chat turn after turn for --duration seconds while each user also posts
// an observation every --observe-every ms. Then it waits (at most --drain seconds) for the queue to consolidate
// every observation and accounts for each one by id. With --rounds N it does that N times with the same users, and
// after start-up and each round it reads the Worker's memory (scripts/worker-memory.mjs: workerd's resident size and
// the isolate's heap after a full collection; --heap-dir keeps a heap snapshot of each). It prints turns/s, p50/p95 time to first byte and to first
// token, errors and lost observations; it exits 1 when there were errors or lost observations. --write puts the
// figures in BENCHMARKS.md (section `load`). Everything stops by itself: the server is stopped in every case.
import { createServer } from "node:http";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { serveFake } from "./bench.mjs";
import { machine, writeSection } from "./bench-report.mjs";
import { startLocalWorker } from "./local-worker.mjs";
import { workerdRssMiB, workerHeapMiB } from "./worker-memory.mjs";

const { values: opt } = parseArgs({
  options: {
    duration: { type: "string", default: "60" },
    rounds: { type: "string", default: "1" },
    "heap-dir": { type: "string" },
    concurrency: { type: "string", default: "8" },
    "observe-every": { type: "string", default: "2000" },
    tokens: { type: "string", default: "120" },
    ttft: { type: "string", default: "300" },
    tps: { type: "string", default: "40" },
    drain: { type: "string", default: "120" },
    write: { type: "boolean", default: false },
  },
});
const num = (name) => {
  const v = Number(opt[name]);
  if (!Number.isFinite(v) || v < 0) throw new Error(`--${name} must be a non-negative number`);
  return v;
};
const cfg = {
  durationMs: num("duration") * 1000,
  rounds: Math.max(1, Math.floor(num("rounds"))),
  concurrency: Math.max(1, Math.floor(num("concurrency"))),
  observeEveryMs: num("observe-every"),
  tokens: Math.max(1, Math.floor(num("tokens"))),
  ttftMs: num("ttft"),
  tps: Math.max(1, num("tps")),
  drainMs: num("drain") * 1000,
};
// The whole run is bounded whatever the flags say.
const HARD_STOP_MS = Math.min(cfg.rounds * (cfg.durationMs + cfg.drainMs + 60_000) + 5 * 60_000, 40 * 60_000);

const ADMIN = "load-admin-token-0123456789";
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const CHARS_PER_TOKEN = 4;

/**
 * In front of the fake: holds each response for the time to first token, then paces SSE text: every
 * `content_block_delta` frame waits for its share of the token rate. JSON answers (background calls) get the
 * first-token delay only.
 */
async function pacingProxy(upstream) {
  const server = createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const started = Date.now();
    const answer = await fetch(`${upstream}${req.url}`, {
      method: req.method,
      headers: Object.fromEntries(Object.entries(req.headers).filter(([k]) => k !== "host" && k !== "content-length")),
      body: chunks.length ? Buffer.concat(chunks) : undefined,
    });
    await sleep(Math.max(0, cfg.ttftMs - (Date.now() - started)));
    res.writeHead(answer.status, Object.fromEntries([...answer.headers].filter(([k]) => k !== "content-length" && k !== "content-encoding")));
    if (!answer.headers.get("content-type")?.includes("text/event-stream")) {
      res.end(Buffer.from(await answer.arrayBuffer()));
      return;
    }
    const decoder = new TextDecoder();
    let buffer = "";
    for await (const chunk of answer.body) {
      buffer += decoder.decode(chunk, { stream: true });
      let end = buffer.indexOf("\n\n");
      while (end >= 0) {
        const frame = buffer.slice(0, end + 2);
        buffer = buffer.slice(end + 2);
        const text = /"text":"((?:[^"\\]|\\.)*)"/.exec(frame)?.[1];
        if (frame.includes("content_block_delta") && text) await sleep(((text.length / CHARS_PER_TOKEN) * 1000) / cfg.tps);
        res.write(frame);
        end = buffer.indexOf("\n\n");
      }
    }
    res.end(buffer);
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return { server, url: `http://127.0.0.1:${server.address().port}` };
}

const quantile = (sorted, q) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : Number.NaN);
const stats = (values) => {
  const s = [...values].sort((a, b) => a - b);
  return { n: s.length, p50: quantile(s, 0.5), p95: quantile(s, 0.95), max: s.at(-1) ?? Number.NaN };
};

function client(origin, fakeUrl) {
  const call = (key, method, p, body, headers = {}) =>
    fetch(`${origin}${p}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}), ...headers },
      body: body ? JSON.stringify(body) : undefined,
    });
  return {
    call,
    async user(i) {
      const res = await call(ADMIN, "POST", "/v1/admin/users", { name: `load ${i}`, plan: "pro" });
      if (res.status !== 201) throw new Error(`creating a user: ${res.status} ${await res.text()}`);
      const body = await res.json();
      return { id: body.user.id, key: body.api_key.key };
    },
    script: (userId, steps) => fetch(`${fakeUrl}/__script`, { method: "POST", body: JSON.stringify({ key: userId, steps }) }),
  };
}

const REPLY = (tokens, turn) =>
  `Turn ${turn}: ${"here is a considered answer with a few details ".repeat(Math.ceil((tokens * CHARS_PER_TOKEN) / 46))}`.slice(0, tokens * CHARS_PER_TOKEN);

/** One session: turns back to back until the deadline; each turn's time to first byte and first text. */
async function chatter(api, user, deadline, out) {
  let sessionId;
  for (let turn = 1; Date.now() < deadline; turn++) {
    await api.script(user.id, [{ reply: { content: [{ type: "text", text: REPLY(cfg.tokens, turn) }] }, chunk: CHARS_PER_TOKEN }]);
    const t0 = performance.now();
    let res;
    try {
      res = await api.call(user.key, "POST", "/v1/chat", { message: `question ${turn}`, ...(sessionId ? { session_id: sessionId } : {}) });
    } catch (err) {
      out.errors.push(`chat: ${err.message}`);
      continue;
    }
    if (res.status !== 200) {
      out.errors.push(`chat: HTTP ${res.status} ${(await res.text()).slice(0, 200)}`);
      continue;
    }
    const decoder = new TextDecoder();
    let text = "";
    let firstByte;
    let firstToken;
    for await (const chunk of res.body) {
      firstByte ??= performance.now() - t0;
      text += decoder.decode(chunk, { stream: true });
      if (firstToken === undefined && text.includes("event: text")) firstToken = performance.now() - t0;
    }
    sessionId ??= /"id":"(ses_[^"]+)"/.exec(text)?.[1];
    const ended = /event: (done|error)\ndata: (.*)/.exec(text.slice(text.lastIndexOf("event: ")));
    if (ended?.[1] !== "done") {
      out.errors.push(`turn ended with ${ended?.[1] ?? "nothing"} ${ended?.[2]?.slice(0, 200) ?? ""}`);
      continue;
    }
    out.turns += 1;
    out.ttfb.push(firstByte);
    if (firstToken !== undefined) out.ttft.push(firstToken);
    out.turnMs.push(performance.now() - t0);
  }
}

/** One user's observations: one every `observeEveryMs` until the deadline, each under its own idempotency key. */
async function observer(api, user, deadline, out) {
  for (let i = 1; Date.now() < deadline; i++) {
    const body = { observations: [{ type: "learned_fact", content: `Load fact ${i} of ${user.id}: prefers option ${i % 7}` }] };
    // The background model's answer to a consolidation (at most one per observation; unused ones stay queued).
    const consolidation = {
      updated_scaffold: { Option: i % 7 },
      updated_working_memory: `Prefers option ${i % 7}.`,
      facts_to_embed: [`User prefers option ${i % 7}`],
    };
    await api.script(user.id, [{ structured: true, reply: { content: [{ type: "text", text: JSON.stringify(consolidation) }] } }]);
    let sent = false;
    // A retry after a network failure reuses the key, so it can never record the observation twice.
    for (let attempt = 0; attempt < 3 && !sent; attempt++) {
      try {
        const res = await api.call(user.key, "POST", "/v1/observations", body, { "idempotency-key": `load-${user.id}-${i}` });
        if (res.status === 202) {
          const { events } = await res.json();
          for (const e of events) out.observed.get(user.key).add(e.id);
          sent = true;
        } else out.errors.push(`observation: HTTP ${res.status} ${(await res.text()).slice(0, 200)}`);
      } catch (err) {
        out.errors.push(`observation: ${err.message}`);
      }
    }
    await sleep(cfg.observeEveryMs);
  }
}

/** Every event of a user, by id and status (all pages). */
async function eventsOf(api, key) {
  const found = new Map();
  let before = null;
  do {
    const res = await api.call(key, "GET", `/v1/memory/events?limit=100${before ? `&before=${encodeURIComponent(before)}` : ""}`);
    if (res.status !== 200) throw new Error(`listing events: ${res.status}`);
    const body = await res.json();
    for (const e of body.events) found.set(e.id, e.status);
    before = body.next_before;
  } while (before);
  return found;
}

/** Waits until no observation is pending (or the drain time is up), then accounts for each one sent. */
async function account(api, out) {
  const deadline = Date.now() + cfg.drainMs;
  let tally;
  for (;;) {
    tally = { sent: 0, processed: 0, pending: 0, deferred: 0, failed: 0, lost: 0 };
    for (const [key, ids] of out.observed) {
      const found = await eventsOf(api, key);
      for (const id of ids) {
        tally.sent += 1;
        const status = found.get(id);
        if (status === undefined) tally.lost += 1;
        else tally[status] = (tally[status] ?? 0) + 1;
      }
    }
    if (tally.pending === 0 || Date.now() > deadline) return tally;
    await sleep(2000); // polling the queue's progress, not a timing assumption
  }
}

function writeLoadSection(figures, command) {
  const f = (v) => (Number.isFinite(v) ? v.toFixed(0) : "n/a");
  const lines = [
    "## Load: concurrent sessions with observations streaming in",
    "",
    `Target: no errors and no lost observations with ${cfg.concurrency} concurrent sessions against a model answering at ${cfg.ttftMs} ms to first token and ${cfg.tps} tokens/s.`,
    "",
    `engram under \`wrangler dev\` (local D1, Durable Objects, queues) on loopback; ${cfg.concurrency} sessions (one user each) chat turn after turn for ${cfg.rounds > 1 ? `${cfg.rounds} rounds of ` : ""}${cfg.durationMs / 1000} s with ${cfg.tokens}-token replies, while each user posts an observation every ${cfg.observeEveryMs} ms; then the queue drains (at most ${cfg.drainMs / 1000} s) and every observation is looked up by id. TTFB: the chat response's first byte; TTFT: its first text event (the model's 300 ms included).`,
    "",
    `Measured ${new Date().toISOString().slice(0, 10)} by \`${command}\` (${machine()}).`,
    "",
    "| figure | value |",
    "|---|---|",
    `| turns completed | ${figures.turns} |`,
    `| turns/s | ${figures.turnsPerSecond.toFixed(2)} |`,
    `| TTFB p50 / p95 (ms) | ${f(figures.ttfb.p50)} / ${f(figures.ttfb.p95)} |`,
    `| TTFT p50 / p95 (ms) | ${f(figures.ttft.p50)} / ${f(figures.ttft.p95)} |`,
    `| turn p50 / p95 (ms) | ${f(figures.turn.p50)} / ${f(figures.turn.p95)} |`,
    `| errors | ${figures.errors} (target 0) |`,
    `| observations sent / consolidated | ${figures.observations.sent} / ${figures.observations.processed} |`,
    `| observations pending / deferred / failed after the drain | ${figures.observations.pending} / ${figures.observations.deferred} / ${figures.observations.failed} |`,
    `| lost observations | ${figures.observations.lost} (target 0) |`,
    `| workerd resident MiB: ${figures.memory.map((m) => m.at).join(" / ")} | ${figures.memory.map((m) => m.workerdRss ?? "n/a").join(" / ")} |`,
    `| Worker heap MiB after a full collection, same points | ${figures.memory.map((m) => m.heap).join(" / ")} |`,
    `| Worker buffers MiB (ArrayBuffers, runtime objects), same points | ${figures.memory.map((m) => m.buffers).join(" / ")} |`,
    `| drain after the last observation (s) | ${(figures.drainMs / 1000).toFixed(1)} |`,
    `| machine load average (1 / 5 min) at the end | ${figures.loadavg.map((v) => v.toFixed(2)).join(" / ")} on ${os.cpus().length} cores |`,
  ];
  writeSection("BENCHMARKS.md", "load", lines.join("\n"));
  console.log("load: wrote the load section of BENCHMARKS.md");
}

/** The Worker's memory now (MiB): workerd's resident size and the isolate's heap after a full collection. */
async function memoryOf(engram, label) {
  const snapshot = opt["heap-dir"] ? path.join(opt["heap-dir"], `${label.replace(/ /g, "-")}.heapsnapshot`) : undefined;
  const isolate = await workerHeapMiB(engram.inspector, snapshot).catch((err) => ({ heap: `unreadable: ${err.message}`, buffers: "n/a" }));
  return { at: label, workerdRss: workerdRssMiB(engram.pid), ...isolate };
}

async function main() {
  const hardStop = setTimeout(() => {
    console.error(`load: still running after ${HARD_STOP_MS / 1000} s; giving up`);
    process.exit(2);
  }, HARD_STOP_MS);
  hardStop.unref();
  const fake = await serveFake();
  const proxy = await pacingProxy(fake.url);
  console.log(`load: starting engram (wrangler dev) against the paced fake model at ${proxy.url} ...`);
  const engram = await startLocalWorker({ vars: { ADMIN_TOKEN: ADMIN, ANTHROPIC_API_KEY: "sk-ant-load", ANTHROPIC_BASE_URL: proxy.url } });
  try {
    const api = client(engram.origin, fake.url);
    const users = [];
    for (let i = 0; i < cfg.concurrency; i++) users.push(await api.user(i));
    const out = { turns: 0, ttfb: [], ttft: [], turnMs: [], errors: [], observed: new Map(users.map((u) => [u.key, new Set()])) };
    const memory = [await memoryOf(engram, "start")];
    let elapsed = 0;
    let drainMs = 0;
    let observations;
    for (let round = 1; round <= cfg.rounds; round++) {
      console.log(
        `load: round ${round} of ${cfg.rounds}: ${cfg.concurrency} sessions for ${cfg.durationMs / 1000} s, an observation per user every ${cfg.observeEveryMs} ms ...`,
      );
      const started = performance.now();
      const deadline = Date.now() + cfg.durationMs;
      await Promise.all(users.flatMap((u) => [chatter(api, u, deadline, out), ...(cfg.observeEveryMs > 0 ? [observer(api, u, deadline, out)] : [])]));
      elapsed += (performance.now() - started) / 1000;
      const drainStart = performance.now();
      console.log("load: waiting for the queue to consolidate every observation ...");
      observations = await account(api, out);
      drainMs = performance.now() - drainStart;
      memory.push(await memoryOf(engram, `round ${round}`));
      console.log(`load: memory ${JSON.stringify(memory.at(-1))}`);
    }
    const figures = {
      turns: out.turns,
      turnsPerSecond: out.turns / elapsed,
      ttfb: stats(out.ttfb),
      ttft: stats(out.ttft),
      turn: stats(out.turnMs),
      errors: out.errors.length,
      observations,
      drainMs,
      memory,
      // The machine is shared: the figures mean little without how busy it was.
      loadavg: os.loadavg().slice(0, 2),
    };
    console.log(JSON.stringify(figures, null, 2));
    for (const e of out.errors.slice(0, 10)) console.log(`load: error: ${e}`);
    const command = `npm run load -- ${process.argv.slice(2).join(" ")}`.trim().replace(/ --$/, "");
    if (opt.write) writeLoadSection(figures, command);
    const failed = figures.errors > 0 || observations.lost > 0 || observations.pending > 0 || observations.failed > 0;
    console.log(
      `load: ${failed ? "FAILED" : "ok"}: ${figures.turns} turns (${figures.turnsPerSecond.toFixed(2)}/s), ${figures.errors} errors, ${observations.lost} lost observations`,
    );
    if (failed) console.log(`load: the server's last output:\n${engram.output().slice(-3000)}`);
    process.exitCode = failed ? 1 : 0;
  } finally {
    await engram.stop();
    proxy.server.close();
    fake.server.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
