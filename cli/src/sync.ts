import { Api } from "./api.js";
import { type Command, EXIT, positiveInt, str } from "./command.js";
import { requireConfig } from "./config.js";
import { log } from "./hook.js";
import { claudeFiles } from "./paths.js";
import { readState, type SessionState } from "./state.js";
import { listTranscripts, projectOf } from "./transcripts.js";
import { type UploadResult, uploadTranscript } from "./upload.js";

const mib = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;

/** A one-line progress bar on stderr when it is a terminal; nothing otherwise (logs and pipes stay clean). */
function progress(total: number) {
  const tty = process.stderr.isTTY === true;
  return {
    update(done: number, bytes: number, label: string) {
      if (!tty) return;
      const width = 24;
      const filled = total ? Math.round((done / total) * width) : width;
      const line = `[${"#".repeat(filled)}${".".repeat(width - filled)}] ${done}/${total} sessions, ${mib(bytes)} sent ${label}`;
      process.stderr.write(`\r${line.slice(0, (process.stderr.columns || 100) - 1).padEnd((process.stderr.columns || 100) - 1)}`);
    },
    end() {
      if (tty) process.stderr.write("\n");
    },
  };
}

export const syncCommand: Command = {
  name: "sync",
  summary: "Upload every local Claude Code transcript's unsynced lines",
  usage: "sync [--project NAME] [--json]",
  details:
    "Walks Claude Code's transcripts (~/.claude/projects, or $CLAUDE_CONFIG_DIR/projects) and uploads what the server does not have yet, including sessions the hook queued while offline. Exits 1 when any session could not be uploaded.",
  options: {
    project: { type: "string", value: "NAME", help: "Only sessions of this project (the working directory's name)" },
    "chunk-bytes": { type: "string", value: "N", help: "Largest upload per request, in bytes (default 1048576)" },
    json: { type: "boolean", help: "Machine-readable summary" },
  },
  run: async (values) => {
    const api = new Api(await requireConfig());
    const chunkBytes = positiveInt(str(values["chunk-bytes"]), "--chunk-bytes", 1024 * 1024, 64 * 1024 * 1024);
    const only = str(values.project);
    const state = await readState();
    const found = await listTranscripts(claudeFiles().projects);
    // Queued sessions whose files live elsewhere (a hook's transcript_path outside the projects folder) count too.
    const paths = new Set(found.map((t) => t.path));
    for (const [id, s] of Object.entries(state.sessions))
      if (s.status === "pending" && !paths.has(s.path)) found.push({ sessionId: id, path: s.path, size: s.size });

    const work: { id: string; entry: SessionState }[] = [];
    for (const t of found) {
      const prev = state.sessions[t.sessionId];
      const project = prev?.project ?? (await projectOf(t.path));
      if (only && project !== only) continue;
      if (prev && prev.status === "synced" && prev.path === t.path && prev.size === t.size) continue; // nothing appended
      work.push({
        id: t.sessionId,
        entry: prev
          ? { ...prev, path: t.path, project }
          : { path: t.path, project, offset: 0, size: 0, status: "pending", attempted_at: new Date().toISOString() },
      });
    }

    const bar = progress(work.length);
    const results: UploadResult[] = [];
    let bytes = 0;
    for (const [i, w] of work.entries()) {
      bar.update(i, bytes, w.id.slice(0, 8));
      const r = await uploadTranscript(api, w.id, w.entry, { chunkBytes });
      bytes += r.sent_bytes;
      results.push(r);
      if (r.error) await log(`sync session=${r.session_id} error=${JSON.stringify(r.error)}`);
    }
    bar.update(work.length, bytes, "");
    bar.end();

    const failed = results.filter((r) => r.status === "pending");
    const summary = {
      sessions_found: found.length,
      sessions_uploaded: results.filter((r) => r.sent_bytes > 0).length,
      bytes_sent: bytes,
      failed: failed.length,
      results,
    };
    if (values.json === true) process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
    else {
      process.stdout.write(
        `${found.length} transcripts, ${summary.sessions_uploaded} uploaded (${mib(bytes)}), ${found.length - work.length} already in sync\n`,
      );
      for (const r of failed) process.stdout.write(`  failed ${r.session_id}: ${r.error}\n`);
    }
    // All unreachable: say so with its own code, so scripts can tell "offline" from "broken".
    if (failed.length && failed.every((r) => r.error?.startsWith("cannot reach"))) return EXIT.unreachable;
    return failed.length ? EXIT.failure : EXIT.ok;
  },
};
