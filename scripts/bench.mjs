#!/usr/bin/env node
// `npm run bench [-- name-filter]`: (1) starts engram under `wrangler dev` (local D1, DOs, queues) against
// a zero-latency fake Messages API served from this process and runs every scenario in bench/scenarios/
// many times over HTTP; (2) runs the micro-benchmarks inside workerd (bench/*.test.ts, which print
// BENCH_RESULT lines); then writes the medians and p95s to BENCHMARKS.md with the machine and the command.
//
// Adding a benchmark: an HTTP scenario is a file in bench/scenarios/ exporting { name, target, targets,
// description, runs, warmup?, setup?(h), sample(h, state, i) -> { metric: ms }, report?(h, state) -> markdown }
// (h: the server's url, api(), createUser(), script() for the fake model, startWorker() for a Worker of its own);
// a micro-benchmark is bench/<name>.test.ts calling report() from bench/report.ts with the same
// { group, target, targets, description }. `target` is the sentence a reader sees; `targets` is what each row
// is checked against: { metric | "*": { p50?, p95?, mean?, max?: upper bound } }; rows without one are context.
// BENCHMARKS.md is one section per name (scripts/bench-report.mjs): `npm run bench -- <filter>` runs the
// scenario and micro-benchmark files whose name contains <filter> and replaces only their sections.
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { createServer } from "node:http";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { fmt, writeReport } from "./bench-report.mjs";
import { buildFakeAnthropic } from "./build-fake.mjs";
import { startLocalWorker } from "./local-worker.mjs";

const filter = process.argv[2] ?? "";
const ADMIN = "bench-admin-token-0123456789";
/**
 * What every benchmarked Worker runs with: a known admin token, the fake Messages API as the model, and the
 * per-user daily chat budget at its ceiling (a scenario drives hundreds of turns through one user; the budget
 * is a product limit, not what a benchmark measures).
 */
const benchVars = (fakeUrl) => ({
  ADMIN_TOKEN: ADMIN,
  ANTHROPIC_API_KEY: "sk-ant-bench",
  ANTHROPIC_BASE_URL: fakeUrl,
  DAILY_CHAT_TOKENS: "1000000000",
});
const env = { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false" };

/** The fake Messages API over HTTP on a free loopback port (also used by scripts/load.mjs). */
export async function serveFake() {
  const file = await buildFakeAnthropic(path.resolve(".wrangler/bench/fake-anthropic.mjs"));
  const fake = (await import(pathToFileURL(file).href)).default;
  const server = createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = chunks.length ? Buffer.concat(chunks) : undefined;
    const response = await fake.fetch(new Request(`http://127.0.0.1${req.url}`, { method: req.method, headers: req.headers, body }));
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (response.body) for await (const chunk of response.body) res.write(chunk);
    res.end();
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return { server, url: `http://127.0.0.1:${server.address().port}` };
}

/** The production Worker against the fake model, cron triggers callable (GET /__scheduled). */
function startEngram(fakeUrl) {
  return startLocalWorker({ vars: benchVars(fakeUrl), testScheduled: true });
}

function harness(url, fakeUrl) {
  const api = (key, method, p, body) =>
    fetch(`${url}${p}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
  return {
    url,
    fakeUrl,
    adminToken: ADMIN,
    api,
    /** Another local Worker (e.g. { entry: "bench/worker.ts" }) with the same vars: the scenario stops it. */
    startWorker: (options) => startLocalWorker({ ...options, vars: benchVars(fakeUrl) }),
    async createUser(plan = "pro") {
      const res = await api(ADMIN, "POST", "/v1/admin/users", { name: "bench", plan });
      const body = await res.json();
      return { id: body.user.id, key: body.api_key.key };
    },
    /** The fake model's own HTTP round trip for a one-line streamed reply: what a turn's figure includes for the model. */
    async fakeRoundTrip() {
      const t0 = performance.now();
      const res = await fetch(`${fakeUrl}/v1/messages`, {
        method: "POST",
        headers: { "x-api-key": "k", "content-type": "application/json" },
        body: JSON.stringify({ model: "claude-sonnet-5-5", max_tokens: 10, stream: true, messages: [{ role: "user", content: "hi" }] }),
      });
      await res.text();
      return performance.now() - t0;
    },
    async script(userId, steps) {
      await fetch(`${fakeUrl}/__script`, { method: "POST", body: JSON.stringify({ key: userId, steps }) });
    },
  };
}

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
function summarize(values) {
  const s = [...values].sort((a, b) => a - b);
  const mean = s.reduce((a, b) => a + b, 0) / s.length;
  return { n: s.length, p50: quantile(s, 0.5), p95: quantile(s, 0.95), mean, min: s[0], max: s.at(-1) };
}

async function main() {
  const files = readdirSync("bench/scenarios")
    .filter((f) => f.endsWith(".mjs") && f.includes(filter))
    .sort();
  const sections = [];
  if (files.length) sections.push(...(await httpScenarios(files)));
  sections.push(...microBenchmarks());
  writeReport("BENCHMARKS.md", sections, { filter });
}

async function httpScenarios(files) {
  const fake = await serveFake();
  const engram = await startEngram(fake.url);
  const h = harness(engram.origin, fake.url);
  const sections = [];
  try {
    for (const file of files) {
      const scenario = (await import(pathToFileURL(path.resolve("bench/scenarios", file)).href)).default;
      process.stdout.write(`bench: ${scenario.name} ... `);
      const state = scenario.setup ? await scenario.setup(h) : undefined;
      for (let i = 0; i < (scenario.warmup ?? 10); i++) await scenario.sample(h, state, i);
      const samples = {};
      for (let i = 0; i < scenario.runs; i++) {
        const result = await scenario.sample(h, state, i);
        for (const [metric, value] of Object.entries(result)) {
          samples[metric] ??= [];
          samples[metric].push(value);
        }
      }
      const extra = scenario.report ? await scenario.report(h, state) : undefined;
      const rows = Object.entries(samples).map(([metric, values]) => ({ metric, ...summarize(values) }));
      sections.push({ scenario, rows, extra });
      console.log(rows.map((r) => `${r.metric} p50=${fmt(r.p50)} p95=${fmt(r.p95)}`).join(", "));
    }
  } finally {
    await engram.stop();
    fake.server.close();
  }
  return sections;
}

function microBenchmarks() {
  const files = readdirSync("bench")
    .filter((f) => f.endsWith(".test.ts") && f.includes(filter))
    .map((f) => `bench/${f}`);
  if (files.length === 0) return [];
  console.log(`bench: micro-benchmarks in workerd: ${files.join(", ")}`);
  const run = spawnSync("npx", ["vitest", "run", "-c", "bench/vitest.config.ts", ...files], { env, encoding: "utf8", maxBuffer: 64 * 2 ** 20 });
  if (run.status !== 0) throw new Error(`micro-benchmarks failed:\n${run.stdout}\n${run.stderr}`);
  const groups = new Map();
  for (const line of run.stdout.split("\n")) {
    const at = line.indexOf("BENCH_RESULT ");
    if (at < 0) continue;
    const { group, target, targets, description, metric, ...stats } = JSON.parse(line.slice(at + "BENCH_RESULT ".length));
    if (!groups.has(group)) groups.set(group, { scenario: { name: group, target, targets, description }, rows: [] });
    groups.get(group).rows.push({ metric, ...stats });
  }
  for (const g of groups.values()) console.log(`bench: ${g.scenario.name}: ${g.rows.map((r) => `${r.metric} p50=${fmt(r.p50)} p95=${fmt(r.p95)}`).join(", ")}`);
  return [...groups.values()];
}

// Run only as a script: scripts/load.mjs imports serveFake from here.
if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href)
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
