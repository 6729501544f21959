import { writeFile } from "node:fs/promises";
import path from "node:path";
import { Api, ok, toCliError } from "./api.js";
import { type Command, EXIT, str } from "./command.js";
import { requireConfig } from "./config.js";
import { readStats, renderDashboard, type Stats } from "./dashboard.js";
import { pendingSessions, readState } from "./state.js";

async function localQueue() {
  const pending = pendingSessions(await readState());
  return { pending: pending.length, errors: pending.filter(([, s]) => s.error).map(([id, s]) => ({ session_id: id, error: s.error })) };
}

function printStats(s: Stats): void {
  const total = s.byType.reduce((a, [, n]) => a + n, 0);
  const out = [
    `lessons: ${total}${s.byType.length ? ` (${s.byType.map(([k, n]) => `${k} ${n}`).join(", ")})` : ""}`,
    `signal: ${s.bySignal.map(([k, n]) => `${k} ${n}`).join(", ") || "-"}`,
    `recalls, last ${s.recallsPerDay.length} days: ${s.recallsPerDay.reduce((a, d) => a + d.count, 0)}`,
    `projects: ${s.projects.map((p) => `${p.project} ${p.lessons}`).join(", ") || "-"}`,
    `transcripts: ${s.sync.transcripts} (${s.sync.pending} pending, ${s.sync.failed} failed), last synced ${s.sync.lastSyncedAt ?? "never"}`,
  ];
  if (s.topRecalled.length) out.push("top recalled:", ...s.topRecalled.slice(0, 5).map((t) => `  ${t.recalls}x ${t.id}  ${t.title.slice(0, 80)}`));
  process.stdout.write(`${out.join("\n")}\n`);
}

export const statsCommand: Command = {
  name: "stats",
  summary: "What engram has learned: lessons, recalls, projects, sync health",
  usage: "stats [--health] [--html FILE] [--json]",
  details:
    "--health prints sync health only (server and local queue) and exits 1 when something needs attention. --html writes a self-contained dashboard (no scripts, no network; light and dark).",
  options: {
    health: { type: "boolean", help: "Sync health only; exit 1 when transcripts failed or uploads are stuck" },
    html: { type: "string", value: "FILE", help: "Write an HTML dashboard to FILE" },
    json: { type: "boolean", help: "Machine-readable output" },
  },
  run: async (values) => {
    const config = await requireConfig();
    const api = new Api(config);
    let raw: unknown;
    try {
      raw = await ok(api.client().GET("/v1/lessons/stats"));
    } catch (err) {
      throw toCliError(err);
    }
    const stats = readStats(raw);
    const html = str(values.html);
    if (html) {
      const file = path.resolve(html);
      await writeFile(file, renderDashboard(stats, { server: config.url, generatedAt: new Date().toISOString() }));
      if (!values.json) process.stdout.write(`wrote ${file}\n`);
    }
    if (values.health) {
      const local = await localQueue();
      const healthy = stats.sync.failed === 0 && local.errors.length === 0;
      if (values.json) process.stdout.write(`${JSON.stringify({ healthy, server: raw && (raw as { sync?: unknown }).sync, local }, null, 2)}\n`);
      else {
        process.stdout.write(
          `${healthy ? "healthy" : "needs attention"}: ${stats.sync.transcripts} transcripts on the server, ${stats.sync.pending} pending, ${stats.sync.failed} failed; last synced ${stats.sync.lastSyncedAt ?? "never"}\n`,
        );
        process.stdout.write(
          `local queue: ${local.pending} session(s) waiting${local.errors.length ? `, ${local.errors.length} with errors (see ~/.engram/hook.log; retry: engram sync)` : ""}\n`,
        );
      }
      return healthy ? EXIT.ok : EXIT.failure;
    }
    if (values.json) process.stdout.write(`${JSON.stringify(raw, null, 2)}\n`);
    else if (!html) printStats(stats);
    return EXIT.ok;
  },
};
