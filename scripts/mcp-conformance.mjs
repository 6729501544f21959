#!/usr/bin/env node
// `npm run test:mcp-conformance`: the official MCP conformance suite (@modelcontextprotocol/conformance, server
// scenarios) against a local engram. Starts `wrangler dev` (scripts/local-worker.mjs: fresh local D1, the offline
// model), creates a user through the admin API, and runs `conformance server` with the scenarios engram does not
// implement listed in test/mcp-conformance-baseline.yml (docs/mcp.md says why for each). The suite's CLI has no
// way to send a credential, so it talks to a loopback proxy that adds the user's bearer key to each request and
// forwards everything else untouched (Host and Origin included, so the DNS-rebinding scenario reaches engram's own
// check). Exit code: the suite's own (1 on a regression, and on a baseline entry that now passes).
// `-- --all` runs every scenario without the baseline (the before/after counts in docs/mcp.md).
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
const all = process.argv.includes("--all");
const started = Date.now();
const seconds = () => ((Date.now() - started) / 1000).toFixed(1);

const dir = mkdtempSync(path.join(tmpdir(), "engram-conformance-"));
const envFile = path.join(dir, "conformance.env");
writeFileSync(envFile, `ADMIN_TOKEN=${ADMIN_TOKEN}\n`);
let worker;
let proxy;
let code = 1;
try {
  worker = await startLocalWorker({ envFile });
  console.log(`engram ready on ${worker.origin} after ${seconds()} s`);
  const key = await createUser(worker.origin);
  const port = await freePort();
  proxy = await withBearer(worker.port, key, port);
  const out = path.join(dir, "results");
  const args = [CLI, "server", "--url", `http://127.0.0.1:${port}/mcp`, "-o", out, ...(all ? [] : ["--expected-failures", BASELINE])];
  code = await run(process.execPath, args);
  summarise(out);
  console.log(`conformance: ${seconds()} s in all`);
} catch (err) {
  console.error(err instanceof Error ? err.message : err);
  if (worker) console.error(worker.output().slice(-4000));
} finally {
  proxy?.close();
  await worker?.stop();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(code);

async function createUser(origin) {
  const res = await fetch(`${origin}/v1/admin/users`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ email: "conformance@engram.test" }),
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

function run(cmd, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: ROOT, stdio: "inherit", env: { ...process.env, NO_COLOR: "1" } });
    child.once("error", reject);
    child.once("exit", (c) => resolve(c ?? 1));
  });
}

/** One line per scenario from the suite's checks.json files: which passed, which failed. */
function summarise(out) {
  const scenarios = readdirSync(out).sort();
  let passed = 0;
  const failed = [];
  for (const name of scenarios) {
    const checks = JSON.parse(readFileSync(path.join(out, name, "checks.json"), "utf8"));
    const scenario = name.replace(/^server-/, "").replace(/-\d{4}-\d\d-\d\dT.*$/, "");
    if (checks.some((c) => c.status === "FAILURE")) failed.push(scenario);
    else passed++;
  }
  console.log(`conformance: ${passed} of ${scenarios.length} scenarios pass; failing: ${failed.join(", ") || "none"}`);
}
