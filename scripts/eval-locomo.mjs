#!/usr/bin/env node
// `npm run eval:locomo -- --data PATH [--conversations 1-5] [--json OUT] [--params "history=true"]`: recall on the
// LoCoMo conversations (docs/evaluation.md), inside workerd through bench/locomo/vitest.config.ts. The dataset is
// CC BY-NC 4.0 and stays outside the repository; so does --json, which is derived from it.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { machine, writeSection } from "./bench-report.mjs";

const USAGE = 'usage: npm run eval:locomo -- --data PATH [--conversations 1-5|6-10|1,3,7] [--json OUT] [--params "history=true&neighbours=false"] [--ablate]';
const REPO = path.resolve(import.meta.dirname, "..");

function fail(message) {
  console.error(`eval:locomo: ${message}\n${USAGE}`);
  process.exit(1);
}

const inside = (p) => {
  const rel = path.relative(REPO, p);
  return !rel.startsWith("..") && !path.isAbsolute(rel);
};

let values;
try {
  ({ values } = parseArgs({
    options: { data: { type: "string" }, conversations: { type: "string" }, json: { type: "string" }, params: { type: "string" }, ablate: { type: "boolean" } },
  }));
} catch (err) {
  fail(err.message);
}

const data = values.data && path.resolve(values.data);
if (!data || !existsSync(data)) {
  fail(
    `${data ? `no file at ${data}` : "--data is required"}. Download data/locomo10.json from https://github.com/snap-research/LoCoMo ` +
      "and keep it outside this repository (CC BY-NC 4.0: evaluation only); see docs/evaluation.md.",
  );
}
if (inside(data)) console.warn(`eval:locomo: ${data} is inside the repository; keep LoCoMo outside it (CC BY-NC 4.0), never commit it`);
let count;
try {
  const samples = JSON.parse(readFileSync(data, "utf8"));
  if (!Array.isArray(samples) || !samples.every((s) => s?.conversation && Array.isArray(s.qa))) throw new Error("not an array of conversations with qa");
  count = samples.length;
} catch (err) {
  fail(`${data} is not LoCoMo's locomo10.json: ${err.message}`);
}

/** "1-5", "6-10", "1,3,7" or "2": the 1-based conversation numbers, in order. */
function conversations(spec) {
  if (!spec) return Array.from({ length: count }, (_, i) => i + 1);
  const numbers = spec.split(",").flatMap((part) => {
    const m = /^\s*(\d+)\s*(?:-\s*(\d+))?\s*$/.exec(part);
    if (!m) fail(`--conversations ${spec}: expected numbers and ranges like 1-5 or 1,3,7`);
    const [from, to] = [Number(m[1]), Number(m[2] ?? m[1])];
    return Array.from({ length: to - from + 1 }, (_, i) => from + i);
  });
  const wrong = numbers.find((n) => n < 1 || n > count);
  if (wrong !== undefined || !numbers.length) fail(`--conversations ${spec}: the file has conversations 1-${count}`);
  return [...new Set(numbers)].sort((a, b) => a - b);
}

const json = values.json && path.resolve(values.json);
if (json && inside(json)) fail(`--json ${json} is inside the repository: its figures derive from LoCoMo (CC BY-NC 4.0), write it elsewhere`);

const chosen = conversations(values.conversations);
// The targets go to BENCHMARKS.md only from a run the targets are about: all ten conversations, default search.
const official = chosen.length === count && count === 10 && !values.params && !values.ablate;
const scratch = official ? mkdtempSync(path.join(os.tmpdir(), "eval-locomo-")) : null;
const targets = scratch && path.join(scratch, "targets.md");
const env = {
  ...process.env,
  LOCOMO_DATA: data,
  LOCOMO_CONVERSATIONS: chosen.join(","),
  LOCOMO_JSON: json ?? "",
  LOCOMO_TARGETS: targets ?? "",
  LOCOMO_PARAMS: values.params ?? "",
  LOCOMO_ABLATE: values.ablate ? "1" : "",
};
const t0 = performance.now();
const run = spawnSync("npx", ["vitest", "run", "-c", "bench/locomo/vitest.config.ts"], { cwd: REPO, env, stdio: "inherit" });
const seconds = ((performance.now() - t0) / 1000).toFixed(0);
if (run.status === 0 && targets && existsSync(targets)) {
  const body = [
    "## Recall on real conversations (LoCoMo)",
    "",
    "Target: hybrid recall@5 at least 1.1x SQLite FTS5 `bm25()` on all ten conversations and on each half, and never under",
    "it on a category; engram's full text at least FTS5's; a verbatim import supersedes nothing.",
    "",
    "LoCoMo's ten conversations (5,882 turns, public data kept outside the repository: docs/evaluation.md), each a new",
    "user: every turn imported through `POST /v1/memory/facts`, every question asked through `GET /v1/memory/facts/search`;",
    "FTS5 `bm25()` (an OR of the question's content words) and MiniSearch over the same texts in the same run. Tuned on",
    'conversations 1-5 only. A question is found when one of its evidence turns is in the top 5. "Only hybrid / only',
    "FTS5\" counts the questions one found and the other did not; McNemar's exact p says how likely so uneven a split",
    "is if the two were equally good: a category of 48 questions moves by 2 points with one question.",
    "",
    `Measured ${new Date().toISOString().slice(0, 10)} by \`npm run eval:locomo -- --data PATH\` in ${seconds} s (${machine()}, load average ${os
      .loadavg()
      .slice(0, 2)
      .map((v) => v.toFixed(1))
      .join(" / ")}).`,
    "",
    readFileSync(targets, "utf8"),
  ].join("\n");
  writeSection(path.join(REPO, "BENCHMARKS.md"), "recall-on-real-conversations-locomo", body);
  console.log("eval:locomo: wrote the LoCoMo section of BENCHMARKS.md");
}
if (scratch) rmSync(scratch, { recursive: true, force: true });
console.log(`eval:locomo: conversations ${env.LOCOMO_CONVERSATIONS}, total ${seconds} s${json ? `; per-question ranks in ${json}` : ""}`);
process.exit(run.status ?? 1);
