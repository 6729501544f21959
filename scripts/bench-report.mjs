// BENCHMARKS.md as a set of sections, so a filtered run (`npm run bench -- brain`) rewrites only its own.
// Each section sits between `<!-- bench:begin ID -->` and `<!-- bench:end ID -->`, ID being the section's name
// in lower-case words joined by dashes. Every figure row states its target and whether it was met.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";

export const fmt = (v) => (Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 1 ? v.toFixed(2) : v.toFixed(3));

const sectionId = (name) =>
  name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "");

/**
 * `targets` maps a metric (or "*" for every metric of the section without its own entry) to upper bounds on
 * its statistics, e.g. `{ overhead_ms: { p50: 10, p95: 25 } }`. A metric without a target is context.
 */
export function verdict(targets, row) {
  const bounds = targets?.[row.metric] ?? targets?.["*"];
  if (!bounds || Object.keys(bounds).length === 0) return "context (no target)";
  const checks = Object.entries(bounds).map(([stat, limit]) => ({ text: `${stat} <= ${limit}`, ok: row[stat] <= limit }));
  return `${checks.map((c) => c.text).join(", ")}: ${checks.every((c) => c.ok) ? "met" : "**missed**"}`;
}

function renderSection({ scenario, rows, extra }, run) {
  const id = sectionId(scenario.name);
  const lines = [`<!-- bench:begin ${id} -->`, `## ${scenario.name}`, "", `Target: ${scenario.target}`, ""];
  if (scenario.description) lines.push(scenario.description, "");
  lines.push(`Measured ${run.date} by \`${run.command}\` (${run.machine}).`, "");
  lines.push("| metric | n | p50 | p95 | mean | min | max | target |", "|---|---|---|---|---|---|---|---|");
  for (const r of rows)
    lines.push(`| ${r.metric} | ${r.n} | ${fmt(r.p50)} | ${fmt(r.p95)} | ${fmt(r.mean)} | ${fmt(r.min)} | ${fmt(r.max)} | ${verdict(scenario.targets, r)} |`);
  if (extra) lines.push("", extra);
  lines.push(`<!-- bench:end ${id} -->`);
  return { id, text: lines.join("\n") };
}

/** The sections already in the file, in order, keyed by id. */
function readSections(file) {
  if (!existsSync(file)) return new Map();
  const text = readFileSync(file, "utf8");
  const found = new Map();
  for (const m of text.matchAll(/<!-- bench:begin (\S+) -->[\s\S]*?<!-- bench:end \1 -->/g)) found.set(m[1], m[0]);
  return found;
}

/** Sections other commands write (`npm run load`, `npm run eval:locomo`, by hand from `eval:recall`): kept by every run of `npm run bench`. */
const WRITTEN_ELSEWHERE = new Set(["load", "recall-on-real-conversations-locomo", "recall-on-long-conversations"]);

/** The machine a figure was measured on, as every section states it. */
export const machine = () =>
  `${os.cpus()[0]?.model ?? "unknown CPU"}, ${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.platform()} ${os.release()}, Node ${process.version}`;

/** Writes `sections`; with a filter, keeps every other section already in the file; without, drops them (not those written elsewhere). */
export function writeReport(file, sections, { filter }) {
  const run = { date: new Date().toISOString().slice(0, 10), command: `npm run bench${filter ? ` -- ${filter}` : ""}`, machine: machine() };
  const merged = new Map([...readSections(file)].filter(([id]) => filter || WRITTEN_ELSEWHERE.has(id)));
  for (const s of sections) {
    const { id, text } = renderSection(s, run);
    merged.set(id, text);
  }
  writeSections(file, merged);
  console.log(`bench: wrote ${sections.length} section(s) of ${file}`);
}

/** Puts one section (its text between the markers) in the file, in place of the one with its id, or at the end. */
export function writeSection(file, id, body) {
  const merged = readSections(file);
  merged.set(id, [`<!-- bench:begin ${id} -->`, body.trim(), `<!-- bench:end ${id} -->`].join("\n"));
  writeSections(file, merged);
}

function writeSections(file, merged) {
  const header = [
    "# engram benchmarks",
    "",
    "Written by `npm run bench` (all sections) or `npm run bench -- <filter>` (only the sections it measures); each",
    "section names its date, command and machine. Every row states its target and whether it was met.",
    "HTTP scenarios: engram under `wrangler dev` (local D1, Durable Objects, queues) on loopback; the model is the fake",
    "Messages API served from the bench process with no added latency; wall-clock milliseconds measured by the client.",
    "Micro-benchmarks: inside workerd with local D1 (the test pool), timed with the Worker's clock, which advances on I/O.",
    "Written by other commands, and kept by `npm run bench`: the load section (`npm run load`), recall on LoCoMo",
    "(`npm run eval:locomo` over all ten conversations) and recall on generated conversations (by hand, `npm run eval:recall`).",
    "",
  ];
  writeFileSync(file, `${[...header, ...[...merged.values()].flatMap((t) => [t, ""])].join("\n")}`);
}
