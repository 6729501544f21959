#!/usr/bin/env node
// `npm run mutate [-- options]`: a small mutation check of the code where a wrong comparison or pattern costs the
// most (src/bridge, src/sessions, src/memory, src/lib/redact.ts). Each mutant in scripts/mutants.json changes one
// token of one file ({ id, file, search, replace, tests }: `search` must occur exactly once in `file`); it is
// applied alone, the named test files run with vitest, and the mutant is killed when they fail, survives when
// they pass. The file is written back afterwards whatever happens: on a failure, on Ctrl+C (SIGINT, SIGTERM,
// SIGHUP), and, after a hard kill, at the start of the next run (from .mutate-restore.json, git-ignored).
//
// Before the mutants, the union of their test files runs once unmutated: a failing baseline would make every
// mutant look killed, so the run stops there. Exit code 0 when every mutant was killed, 1 when one survived,
// 2 when the list or the baseline is wrong.
//
// Options: --only=<id,id> runs those mutants; --check validates the list without running anything;
// --no-baseline skips the unmutated run; --timeout=<seconds> per vitest run (default 300; a timed-out run
// counts as killed, and is reported as such); --verbose prints the end of each run's output (which test failed).
import { spawn } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";

const ROOT = path.resolve(import.meta.dirname, "..");
const LIST = path.join(ROOT, "scripts/mutants.json");
const JOURNAL = path.join(ROOT, ".mutate-restore.json");
const VITEST = path.join(ROOT, "node_modules/vitest/vitest.mjs");

const args = process.argv.slice(2);
const option = (name) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const only = option("only")?.split(",");
const timeoutMs = Number(option("timeout") ?? 300) * 1000;
const checkOnly = args.includes("--check");
const baseline = !args.includes("--no-baseline");
const verbose = args.includes("--verbose");

/** The file being mutated and its original text, while a mutant is applied. */
let applied = null;

function restore() {
  if (!applied) return;
  writeFileSync(applied.path, applied.original);
  if (readFileSync(applied.path, "utf8") !== applied.original) throw new Error(`could not restore ${applied.path}`);
  applied = null;
  rmSync(JOURNAL, { force: true });
}

function apply(mutant) {
  const file = path.join(ROOT, mutant.file);
  const original = readFileSync(file, "utf8");
  // The journal is on disk before the file changes: a run killed outright is undone by the next one.
  writeFileSync(JOURNAL, JSON.stringify({ file: mutant.file, original }));
  applied = { path: file, original };
  writeFileSync(
    file,
    original.replace(mutant.search, () => mutant.replace),
  );
}

function recoverFromJournal() {
  if (!existsSync(JOURNAL)) return;
  const { file, original } = JSON.parse(readFileSync(JOURNAL, "utf8"));
  writeFileSync(path.join(ROOT, file), original);
  rmSync(JOURNAL);
  console.log(`restored ${file}, left mutated by an interrupted run`);
}

let child = null;
const stopChild = () => {
  // vitest runs in its own process group (workerd included): end the group, never anything else.
  if (child?.pid && child.exitCode === null) {
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
};

for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => {
    stopChild();
    restore();
    console.log(`\n${signal}: stopped; every file is as it was`);
    process.exit(130);
  });
}
process.on("exit", () => {
  stopChild();
  restore();
});

/** Runs vitest on `files`; resolves to "passed", "failed" or "timeout", with the output's tail. */
function runTests(files) {
  return new Promise((resolve) => {
    const started = Date.now();
    child = spawn(process.execPath, [VITEST, "run", "--bail=1", ...files], {
      cwd: ROOT,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, FORCE_COLOR: "0", CI: "1" },
    });
    let tail = "";
    const keep = (chunk) => {
      tail = (tail + chunk.toString()).slice(-4000);
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      stopChild();
    }, timeoutMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      child = null;
      const seconds = (Date.now() - started) / 1000;
      resolve({ outcome: timedOut ? "timeout" : code === 0 ? "passed" : "failed", seconds, tail });
    });
  });
}

function validate(mutants) {
  const problems = [];
  const ids = new Set();
  for (const m of mutants) {
    const where = `${m.id ?? "(no id)"}:`;
    if (!m.id || ids.has(m.id)) problems.push(`${where} every mutant needs its own id`);
    ids.add(m.id);
    if (typeof m.search !== "string" || typeof m.replace !== "string" || m.search === m.replace) {
      problems.push(`${where} search and replace must be two different strings`);
      continue;
    }
    if (!Array.isArray(m.tests) || !m.tests.length) problems.push(`${where} name the test files that should kill it`);
    for (const t of m.tests ?? []) if (!existsSync(path.join(ROOT, t))) problems.push(`${where} no test file ${t}`);
    const file = path.join(ROOT, m.file ?? "");
    if (!m.file || !existsSync(file)) {
      problems.push(`${where} no file ${m.file}`);
      continue;
    }
    const count = readFileSync(file, "utf8").split(m.search).length - 1;
    if (count !== 1) problems.push(`${where} "${m.search}" occurs ${count} times in ${m.file} (it must occur once)`);
  }
  return problems;
}

const minutes = (s) => `${Math.floor(s / 60)}m${String(Math.round(s % 60)).padStart(2, "0")}s`;

async function main() {
  recoverFromJournal();
  const all = JSON.parse(readFileSync(LIST, "utf8")).mutants;
  const mutants = only ? all.filter((m) => only.includes(m.id)) : all;
  if (only && mutants.length !== only.length) {
    console.error(`unknown mutant id in --only: ${only.filter((id) => !all.some((m) => m.id === id)).join(", ")}`);
    return 2;
  }
  const problems = validate(mutants);
  if (problems.length) {
    for (const p of problems) console.error(p);
    return 2;
  }
  if (checkOnly) {
    console.log(`${mutants.length} mutants, each applies once; no tests run (--check)`);
    return 0;
  }
  const started = Date.now();
  if (baseline) {
    const files = [...new Set(mutants.flatMap((m) => m.tests))];
    process.stdout.write(`baseline: ${files.length} test files unmutated ... `);
    const run = await runTests(files);
    console.log(`${run.outcome} (${run.seconds.toFixed(0)} s)`);
    if (run.outcome !== "passed") {
      console.error(run.tail);
      console.error("the tests fail without any mutant: fix them first (or run with --no-baseline)");
      return 2;
    }
  }
  const survivors = [];
  let killed = 0;
  for (const [i, m] of mutants.entries()) {
    apply(m);
    let run;
    try {
      run = await runTests(m.tests);
    } finally {
      restore();
    }
    const status = run.outcome === "passed" ? "SURVIVED" : run.outcome === "timeout" ? "killed (timeout)" : "killed";
    if (run.outcome === "passed") survivors.push(m);
    else killed += 1;
    const at = `[${i + 1}/${mutants.length}]`;
    console.log(`${at} ${status.padEnd(16)} ${run.seconds.toFixed(0).padStart(4)} s  ${m.id} (${m.file})`);
    if (verbose) console.log(run.tail.split("\n").slice(-25).join("\n"));
  }
  const total = mutants.length;
  console.log(`\nmutation score: ${killed}/${total} killed (${((100 * killed) / total).toFixed(0)}%) in ${minutes((Date.now() - started) / 1000)}`);
  for (const m of survivors) console.log(`survived: ${m.id} (${m.file}): ${m.means ?? "no test notices it"}`);
  return survivors.length ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    stopChild();
    restore();
    console.error(err);
    process.exit(2);
  },
);
