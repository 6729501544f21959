import { appendFile, mkdir, rename, stat } from "node:fs/promises";
import { Api } from "./api.js";
import { type Command, EXIT } from "./command.js";
import { loadConfig } from "./config.js";
import { isObject } from "./jsonfile.js";
import { engramFiles } from "./paths.js";
import { pendingSessions, readState, type SessionState, updateSession } from "./state.js";
import { projectName } from "./transcripts.js";
import { type UploadResult, uploadTranscript } from "./upload.js";

const LOG_MAX_BYTES = 1024 * 1024;

/** One line per event in ~/.engram/hook.log: ids, offsets and errors, never transcript content or keys. */
export async function log(line: string): Promise<void> {
  const file = engramFiles().log;
  try {
    await mkdir(engramFiles().home, { recursive: true, mode: 0o700 });
    const size = await stat(file).then(
      (s) => s.size,
      () => 0,
    );
    if (size > LOG_MAX_BYTES) await rename(file, `${file}.1`);
    await appendFile(file, `${new Date().toISOString()} ${line}\n`, { mode: 0o600 });
  } catch {
    // Nowhere left to report to; the hook must still exit 0.
  }
}

/** Reads the hook's JSON from stdin, giving up after `ms` (a stdin that is never closed must not hang the hook). */
async function readStdin(ms: number): Promise<string> {
  if (process.stdin.isTTY) return "";
  return new Promise((resolve) => {
    let data = "";
    const done = () => {
      clearTimeout(timer);
      process.stdin.pause();
      resolve(data);
    };
    const timer = setTimeout(done, ms);
    process.stdin.setEncoding("utf8");
    process.stdin.on("data", (chunk: string) => {
      data += chunk;
      try {
        JSON.parse(data); // a complete object: no need to wait for end of input
        done();
      } catch {
        // not complete yet
      }
    });
    process.stdin.on("end", done);
    process.stdin.on("error", done);
  });
}

type HookInput = { session_id: string; transcript_path: string; cwd?: string; hook_event_name?: string };

function parseInput(text: string): HookInput | string {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return "stdin is not JSON";
  }
  if (!isObject(v) || typeof v.session_id !== "string" || !/^[\w.-]{1,200}$/.test(v.session_id)) return "no valid session_id on stdin";
  if (typeof v.transcript_path !== "string" || !v.transcript_path) return "no transcript_path on stdin";
  return {
    session_id: v.session_id,
    transcript_path: v.transcript_path,
    ...(typeof v.cwd === "string" ? { cwd: v.cwd } : {}),
    ...(typeof v.hook_event_name === "string" ? { hook_event_name: v.hook_event_name } : {}),
  };
}

const describe = (r: UploadResult) =>
  `session=${r.session_id} from=${r.from} to=${r.offset} size=${r.size} sent=${r.sent_bytes} requests=${r.requests} status=${r.status}${r.error ? ` error=${JSON.stringify(r.error)}` : ""}`;

async function runHook(json: boolean): Promise<void> {
  const budgetMs = Number(process.env.ENGRAM_HOOK_TIMEOUT_MS) || 10_000;
  const deadline = Date.now() + budgetMs;
  const input = parseInput(await readStdin(Math.min(2000, budgetMs)));
  if (typeof input === "string") {
    await log(`hook ignored: ${input}`);
    return;
  }
  const event = input.hook_event_name ?? "hook";
  const state = await readState();
  const prev = state.sessions[input.session_id];
  // Queue first: if anything below fails or times out, the next run still knows this session is behind.
  const entry: SessionState = {
    path: input.transcript_path,
    project: input.cwd ? projectName(input.cwd) : (prev?.project ?? null),
    offset: prev?.offset ?? 0,
    size: prev?.size ?? 0,
    status: "pending",
    attempted_at: new Date().toISOString(),
    ...(prev?.synced_at ? { synced_at: prev.synced_at } : {}),
  };
  await updateSession(input.session_id, entry);

  const { config } = await loadConfig().catch(() => ({ config: {} as { url?: string; apiKey?: string } }));
  if (!config.url || !config.apiKey) {
    await log(`${event} session=${input.session_id} queued: engram is not configured (run engram login)`);
    return;
  }
  const api = new Api({ url: config.url, apiKey: config.apiKey });
  const results: UploadResult[] = [await uploadTranscript(api, input.session_id, entry, { deadline, requestTimeoutMs: 5000 })];
  await log(`${event} ${describe(results[0] as UploadResult)}`);
  // Then the offline queue: sessions an earlier run could not finish, while the budget lasts.
  if (results[0]?.status === "synced") {
    for (const [id, s] of pendingSessions(await readState())) {
      if (id === input.session_id || Date.now() >= deadline) continue;
      const r = await uploadTranscript(api, id, s, { deadline, requestTimeoutMs: 5000 });
      results.push(r);
      await log(`${event} queued ${describe(r)}`);
    }
  }
  if (json) process.stdout.write(`${JSON.stringify({ results })}\n`);
}

export const hookCommand: Command = {
  name: "hook",
  summary: "Claude Code hook: upload the session's new transcript lines (reads the hook JSON on stdin)",
  usage: "hook [--json]",
  details:
    "Installed by `engram install` on Stop and SessionEnd. Reads {session_id, transcript_path, cwd, hook_event_name} on stdin, uploads what was appended since the last sync, then retries queued sessions. Always exits 0 and prints nothing (Claude Code must never be blocked); errors go to ~/.engram/hook.log. ENGRAM_HOOK_TIMEOUT_MS sets its time budget (default 10000).",
  options: { json: { type: "boolean", help: "Print what was uploaded (for debugging)" } },
  run: async (values) => {
    try {
      await runHook(values.json === true);
    } catch (err) {
      await log(`hook failed: ${(err as Error).message}`);
    }
    return EXIT.ok;
  },
};
