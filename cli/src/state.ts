import { mkdir } from "node:fs/promises";
import { formatJson, isObject, readJson, writeFileAtomic } from "./jsonfile.js";
import { engramFiles } from "./paths.js";

/**
 * What has been uploaded, per Claude Code session: the byte offset the server has, so the next run sends only
 * what was appended since. A session whose upload failed (offline, server error) stays `pending` with its
 * transcript path: that is the offline queue, flushed by the next `engram hook` or `engram sync`.
 */
export type SessionState = {
  path: string;
  project: string | null;
  /** Bytes of the local file the server has (always at a line boundary). */
  offset: number;
  /** Local file size at the last attempt. */
  size: number;
  /** `gone`: the transcript file no longer exists (Claude Code prunes old ones); nothing left to retry. */
  status: "synced" | "pending" | "gone";
  error?: string;
  attempted_at: string;
  synced_at?: string;
};

export type State = { sessions: Record<string, SessionState> };

export async function readState(): Promise<State> {
  // A damaged state file must not stop the hook: starting over costs one offset_mismatch round trip per session.
  const raw = await readJson<unknown>(engramFiles().state).catch(() => undefined);
  if (!isObject(raw) || !isObject(raw.sessions)) return { sessions: {} };
  return { sessions: raw.sessions as Record<string, SessionState> };
}

/**
 * Re-reads the file and changes one session: two hooks finishing at once (two Claude Code windows) then lose
 * at most each other's latest offset, which the server's offset check recovers on the next run.
 */
export async function updateSession(id: string, entry: SessionState): Promise<void> {
  const files = engramFiles();
  await mkdir(files.home, { recursive: true, mode: 0o700 });
  const state = await readState();
  state.sessions[id] = entry;
  await writeFileAtomic(files.state, formatJson(state), 0o600);
}

export const pendingSessions = (state: State) => Object.entries(state.sessions).filter(([, s]) => s.status === "pending");
