import { open } from "node:fs/promises";
import { type Api, EngramError, ok } from "./api.js";
import { isObject } from "./jsonfile.js";
import { type SessionState, updateSession } from "./state.js";

/** The server refuses request bodies over its limit (413); uploads start at this and halve on a 413. */
const DEFAULT_CHUNK_BYTES = 1024 * 1024;
const MIN_CHUNK_BYTES = 16 * 1024;

export type UploadResult = {
  session_id: string;
  /** Where this run started sending (the server's offset) and where it ended. */
  from: number;
  offset: number;
  size: number;
  sent_bytes: number;
  requests: number;
  status: SessionState["status"];
  error?: string;
};

export type UploadOptions = {
  /** Epoch ms after which no new request starts (the hook's budget). */
  deadline?: number;
  requestTimeoutMs?: number;
  chunkBytes?: number;
};

type Chunk = { bytes: number; content: string } | { tooLong: true } | null;

/** Reads whole lines from `offset`, at most `max` bytes unless a single line is longer; null when no complete line. */
async function readChunk(file: Awaited<ReturnType<typeof open>>, offset: number, size: number, max: number): Promise<Chunk> {
  let want = Math.min(max, size - offset);
  for (;;) {
    const buf = Buffer.alloc(want);
    const { bytesRead } = await file.read(buf, 0, want, offset);
    const data = buf.subarray(0, bytesRead);
    const cut = data.lastIndexOf(0x0a) + 1;
    if (cut > 0) return { bytes: cut, content: data.subarray(0, cut).toString("utf8") };
    if (offset + bytesRead >= size) return null; // only an unfinished last line: Claude Code is still writing it
    if (want >= max * 4) return { tooLong: true };
    want = Math.min(want * 2, size - offset);
  }
}

const mismatchOffset = (err: EngramError): number | undefined =>
  err.status === 409 && isObject(err.body) && typeof err.body.bytes_received === "number" ? err.body.bytes_received : undefined;

/**
 * Uploads a transcript's bytes from the server's offset to the last complete line, in chunks, and records the
 * new offset after every accepted chunk. Never throws for network or server trouble: the session stays
 * `pending` with the error, so the next run retries from what the server has.
 */
export async function uploadTranscript(api: Api, sessionId: string, prev: SessionState, opts: UploadOptions = {}): Promise<UploadResult> {
  let offset = prev.offset;
  let chunk = opts.chunkBytes ?? DEFAULT_CHUNK_BYTES;
  let sent = 0;
  let requests = 0;
  let mismatches = 0;
  let error: string | undefined;
  const from = offset;
  let size = prev.size;
  const save = async (status: SessionState["status"]) => {
    const now = new Date().toISOString();
    const entry: SessionState = { ...prev, offset, size, status, attempted_at: now };
    delete entry.error;
    if (error) entry.error = error;
    if (status === "synced") entry.synced_at = now;
    await updateSession(sessionId, entry);
  };

  let file: Awaited<ReturnType<typeof open>>;
  try {
    file = await open(prev.path, "r");
  } catch (err) {
    const gone = (err as NodeJS.ErrnoException).code === "ENOENT";
    error = `cannot read the transcript: ${(err as Error).message}`;
    await save(gone ? "gone" : "pending");
    return { session_id: sessionId, from, offset, size, sent_bytes: 0, requests: 0, status: gone ? "gone" : "pending", error };
  }
  try {
    size = (await file.stat()).size;
    for (;;) {
      if (offset > size) {
        // The server has more than this file holds (another machine, or the file was replaced): nothing to send.
        break;
      }
      const piece = await readChunk(file, offset, size, chunk);
      if (piece === null) break;
      if ("tooLong" in piece) {
        error = `a line at byte ${offset} is longer than ${chunk * 4} bytes; it cannot be uploaded`;
        break;
      }
      if (opts.deadline !== undefined && Date.now() >= opts.deadline) {
        error = "stopped at the time limit; the rest is queued for the next run";
        break;
      }
      const timeoutMs = Math.max(1000, Math.min(opts.requestTimeoutMs ?? 30_000, (opts.deadline ?? Number.POSITIVE_INFINITY) - Date.now()));
      try {
        requests += 1;
        await ok(
          api.client({ timeoutMs }).POST("/v1/transcripts", {
            body: { session_id: sessionId, project: prev.project, offset, content: piece.content, total_bytes: size },
          }),
        );
        offset += piece.bytes;
        sent += piece.bytes;
        await save(offset >= size ? "synced" : "pending");
      } catch (err) {
        const serverOffset = err instanceof EngramError ? mismatchOffset(err) : undefined;
        if (serverOffset !== undefined && mismatches < 3) {
          mismatches += 1;
          offset = serverOffset; // the server says where it is: resend from there (or skip what it already has)
          continue;
        }
        if (err instanceof EngramError && err.status === 413 && chunk > MIN_CHUNK_BYTES) {
          chunk = Math.max(MIN_CHUNK_BYTES, Math.floor(chunk / 2));
          continue;
        }
        error = err instanceof EngramError ? `server answered ${err.status} ${err.code}: ${err.message}` : (err as Error).message;
        break;
      }
    }
  } finally {
    await file.close();
  }
  const status = error ? "pending" : "synced";
  await save(status);
  return { session_id: sessionId, from, offset, size, sent_bytes: sent, requests, status, ...(error ? { error } : {}) };
}
