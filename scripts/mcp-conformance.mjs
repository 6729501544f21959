#!/usr/bin/env node
// `npm run test:mcp-conformance`: the official MCP conformance suite (@modelcontextprotocol/conformance, server
// scenarios) against a local engram. Starts `wrangler dev` (scripts/local-worker.mjs: fresh local D1, the offline
// model), creates a user through the admin API, and runs `conformance server` with the scenarios engram does not
// implement listed in test/mcp-conformance-baseline.yml (docs/mcp.md says why for each). The suite's CLI has no
// way to send a credential, so it talks to a loopback proxy that adds the user's bearer key to each request and
// forwards everything else untouched (Host and Origin included, so the DNS-rebinding scenario reaches engram's own
// check). Exit code: the suite's own (1 on a regression, and on a baseline entry that now passes).
// `-- --all` runs every scenario without the baseline (the before/after counts in docs/mcp.md). `npm test` runs it
// through cli/test/mcp-conformance.test.ts instead, against the CLI tests' engram (no second server to start).
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, request } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { freePort, startLocalWorker } from "./local-worker.mjs";

const ROOT = path.join(import.meta.dirname, "..");
const CLI = path.join(ROOT, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js");
const BASELINE = path.join(ROOT, "test", "mcp-conformance-baseline.yml");
const ADMIN_TOKEN = "conformance-admin-token-0123456789";
/**
 * Runs the suite against a running engram (`origin`, whose admin token is `adminToken`): creates a user, puts the
 * bearer proxy in front, runs `conformance server` with the baseline (`all`: every scenario, no baseline).
 * Resolves to the suite's exit code and which scenarios passed; prints the suite's own report as it goes.
 */
export async function runConformance({ origin, adminToken, all = false, log = console.log }) {
  const key = await createUser(origin, adminToken);
  const port = await freePort();
  const proxy = await withBearer(new URL(origin).port, key, port);
  const out = mkdtempSync(path.join(tmpdir(), "engram-conformance-results-"));
  try {
    const args = [CLI, "server", "--url", `http://127.0.0.1:${port}/mcp`, "-o", out, ...(all ? [] : ["--expected-failures", BASELINE])];
    const code = await run(process.execPath, args, log);
    return { code, ...summarise(out) };
  } finally {
    proxy.close();
    rmSync(out, { recursive: true, force: true });
  }
}

// Run directly (`npm run test:mcp-conformance [-- --all]`): its own `wrangler dev`, then the suite.
if (process.argv[1] && import.meta.filename === path.resolve(process.argv[1])) {
  const started = Date.now();
  const seconds = () => ((Date.now() - started) / 1000).toFixed(1);
  const dir = mkdtempSync(path.join(tmpdir(), "engram-conformance-"));
  const envFile = path.join(dir, "conformance.env");
  writeFileSync(envFile, `ADMIN_TOKEN=${ADMIN_TOKEN}\n`);
  let worker;
  let code = 1;
  try {
    worker = await startLocalWorker({ envFile });
    console.log(`engram ready on ${worker.origin} after ${seconds()} s`);
    const result = await runConformance({ origin: worker.origin, adminToken: ADMIN_TOKEN, all: process.argv.includes("--all") });
    console.log(`conformance: ${result.passed.length} of ${result.total} scenarios pass; failing: ${result.failed.join(", ") || "none"}`);
    console.log(`conformance: ${seconds()} s in all`);
    code = result.code;
  } catch (err) {
    console.error(err instanceof Error ? err.message : err);
    if (worker) console.error(worker.output().slice(-4000));
  } finally {
    await worker?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  process.exit(code);
}

async function createUser(origin, adminToken) {
  const res = await fetch(`${origin}/v1/admin/users`, {
    method: "POST",
    headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
    body: JSON.stringify({ email: `conformance-${crypto.randomUUID()}@engram.test` }),
  });
  if (!res.ok) throw new Error(`create user: ${res.status} ${await res.text()}`);
  return (await res.json()).api_key.key;
}

/** A loopback proxy to engram that adds `Authorization: Bearer <key>` and changes nothing else. */
function withBearer(upstreamPort, key, port) {
  const server = createServer((req, res) => {
    const upstream = request(
      { host: "127.0.0.1", port: upstreamPort, method: req.method, path: req.url, headers: { ...req.headers, authorization: `Bearer ${key}` } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", (err) => {
      res.writeHead(502, { "content-type": "text/plain" });
      res.end(`proxy: ${err.message}`);
    });
    req.pipe(upstream);
  });
  return new Promise((resolve) => server.listen(port, "127.0.0.1", () => resolve(server)));
}

function run(cmd, args, log) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1" } });
    for (const stream of [child.stdout, child.stderr]) stream.on("data", (d) => log(String(d).trimEnd()));
    child.once("error", reject);
    child.once("exit", (c) => resolve(c ?? 1));
  });
}

/**
 * Which scenarios passed and which did not, from the suite's checks.json files. As for the suite's baseline, a
 * scenario passes only with no FAILURE and no WARNING among its checks.
 */
function summarise(out) {
  const passed = [];
  const failed = [];
  for (const name of readdirSync(out).sort()) {
    const checks = JSON.parse(readFileSync(path.join(out, name, "checks.json"), "utf8"));
    const scenario = name.replace(/^server-/, "").replace(/-\d{4}-\d\d-\d\dT.*$/, "");
    (checks.some((c) => c.status === "FAILURE" || c.status === "WARNING") ? failed : passed).push(scenario);
  }
  return { passed, failed, total: passed.length + failed.length };
}
