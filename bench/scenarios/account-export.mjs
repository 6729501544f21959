// GET /v1/export of an account with 10,000 facts and 1,000 session turns (10 sessions of 100 turns), over HTTP from
// `wrangler dev` with local D1 and Durable Objects. The account is filled by POST /v1/import of a generated archive
// (its time is reported once), on a Worker of its own so that its workerd's memory can be read while it exports.
import { readdirSync, readFileSync } from "node:fs";
import os from "node:os";

const now = () => performance.now();
const FACTS = 10_000;
const SESSIONS = 10;
const TURNS_PER_SESSION = 100;
const WORDS = ["garden", "tomato", "invoice", "Porto", "sister", "bakery", "deadline", "piano", "marathon", "client", "recipe", "holiday"];

function archive() {
  const at = Date.UTC(2026, 0, 1);
  const lines = [{ format: "engram.archive", version: 1, exported_at: at }];
  for (let i = 0; i < FACTS; i++) {
    const words = Array.from({ length: 12 }, (_, j) => WORDS[(i * 7 + j * 5) % WORDS.length]).join(" ");
    const data = {
      id: `fct_bench${String(i).padStart(6, "0")}`,
      text: `Fact ${i}: the user mentioned ${words}.`,
      metadata: { source: "bench" },
      created_at: at + i,
    };
    lines.push({ kind: "fact", data });
  }
  for (let s = 0; s < SESSIONS; s++) {
    const id = `ses_bench${s}`;
    lines.push({ kind: "session", data: { id, title: `Session ${s}`, message_count: TURNS_PER_SESSION * 2, created_at: at, updated_at: at } });
    for (let t = 0; t < TURNS_PER_SESSION; t++) {
      const user = { type: "text", text: `Turn ${t} of session ${s}: what should I plan for the ${WORDS[t % WORDS.length]} this week?` };
      const reply = { type: "text", text: `Here is a plan for the ${WORDS[(t + 3) % WORDS.length]}: ${"one step, then the next; ".repeat(8)}` };
      lines.push({ kind: "message", data: { session_id: id, seq: 2 * t + 1, role: "user", content: [user], created_at: at + t } });
      lines.push({ kind: "message", data: { session_id: id, seq: 2 * t + 2, role: "assistant", content: [reply], created_at: at + t } });
    }
  }
  lines.push({ kind: "end", data: { records: lines.length - 1 } });
  return `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`;
}

/** workerd's resident memory (KiB), found in the process group wrangler leads. */
function workerdRss(group) {
  let total = 0;
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) !== group || !stat.includes("(workerd)")) continue;
      total += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
    } catch {
      // The process ended while it was read.
    }
  }
  return total;
}

async function exportOnce(state) {
  let peak = 0;
  const before = workerdRss(state.worker.pid);
  const sampler = setInterval(() => {
    peak = Math.max(peak, workerdRss(state.worker.pid));
  }, 25);
  const t0 = now();
  const res = await fetch(`${state.worker.origin}/v1/export`, { headers: { authorization: `Bearer ${state.user.key}` } });
  let first = 0;
  let bytes = 0;
  let chunks = 0;
  let largest = 0;
  const decoder = new TextDecoder();
  let text = "";
  for await (const chunk of res.body) {
    if (!first) first = now() - t0;
    bytes += chunk.byteLength;
    largest = Math.max(largest, chunk.byteLength);
    chunks++;
    text += decoder.decode(chunk, { stream: true });
  }
  const total = now() - t0;
  clearInterval(sampler);
  peak = Math.max(peak, workerdRss(state.worker.pid));
  if (res.status !== 200) throw new Error(`export: ${res.status} ${text.slice(0, 500)}`);
  return { total, first, bytes, chunks, largest, rssBefore: before, rssPeak: peak, text };
}

export default {
  name: "Account: export of 10,000 facts and 1,000 session turns",
  target: "export_ms p50 <= 5000 ms locally, with the Worker's memory bounded (it grows by far less than the archive's size)",
  targets: { export_ms: { p50: 5000 } },
  description:
    "`export_ms`: GET /v1/export read to its end by the client (10,000 facts, 10 sessions of 100 turns = 2,000 stored messages, in Durable Objects). " +
    "`first_byte_ms`: until the first chunk arrives. `workerd_rss_growth_mb`: workerd's peak resident memory during the export minus before it, sampled every 25 ms from /proc (the whole runtime: D1 and the objects included).",
  runs: 5,
  warmup: 1,
  async setup(h) {
    const worker = await h.startWorker({ testScheduled: true });
    const res = await fetch(`${worker.origin}/v1/admin/users`, {
      method: "POST",
      headers: { authorization: `Bearer ${h.adminToken}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "bench", plan: "pro" }),
    });
    const body = await res.json();
    const user = { id: body.user.id, key: body.api_key.key };
    const text = archive();
    const t0 = now();
    const imported = await fetch(`${worker.origin}/v1/import`, {
      method: "POST",
      headers: { authorization: `Bearer ${user.key}`, "content-type": "application/x-ndjson" },
      body: text,
    });
    const importMs = now() - t0;
    if (imported.status !== 200) throw new Error(`import: ${imported.status} ${await imported.text()}`);
    const receipt = await imported.json();
    const state = { worker, user, importMs, archiveBytes: text.length, receipt };
    // The import queues its 10,000 facts for indexing after it answers: wait for that to end (polling: it is the
    // background work, not what is measured), so exports do not share the CPU with it.
    const deadline = Date.now() + 600_000;
    for (;;) {
      const { text: out } = await exportOnce(state);
      if (!out.includes('"embedded_at":null') || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 2000));
    }
    return state;
  },
  async sample(_h, state) {
    const run = await exportOnce(state);
    state.last = run;
    return {
      export_ms: run.total,
      first_byte_ms: run.first,
      workerd_rss_growth_mb: Math.max(0, run.rssPeak - run.rssBefore) / 1024,
    };
  },
  async report(_h, state) {
    await state.worker.stop();
    const run = state.last;
    const [one, five] = os.loadavg();
    return [
      `Archive: ${(run.bytes / 2 ** 20).toFixed(1)} MiB in ${run.chunks} chunks (largest network chunk ${(run.largest / 1024).toFixed(0)} KiB); workerd resident before the last export ${(run.rssBefore / 1024).toFixed(0)} MiB, peak ${(run.rssPeak / 1024).toFixed(0)} MiB.`,
      `Filling the account: POST /v1/import of the generated ${(state.archiveBytes / 2 ** 20).toFixed(1)} MiB archive took ${(state.importMs / 1000).toFixed(2)} s (one D1 transaction; imported ${state.receipt.imported.fact} facts, ${state.receipt.imported.message} messages).`,
      `Load average at the end of the run: ${one.toFixed(2)} (1 min), ${five.toFixed(2)} (5 min) on ${os.cpus().length} cores.`,
    ].join("\n\n");
  },
};
