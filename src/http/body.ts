/**
 * Reading a request body within a size limit. Hono's `bodyLimit` stops reading a chunked body at the limit and
 * answers at once; the runtime then aborts the rest of the upload, and a client still sending (Node's fetch,
 * most SDKs) sees the connection reset instead of the 413. So past the limit the rest is read and dropped, up
 * to `DRAIN_BYTES`, before the answer is sent.
 */
import { AppError } from "../lib/errors";

/** Cloudflare refuses bodies over 100 MB on most plans before they reach the Worker; nothing larger is drained. */
export const DRAIN_BYTES = 100 * 1024 * 1024;

const tooLarge = (maxSize: number) => new AppError("payload_too_large", `request body exceeds ${maxSize} bytes`);

/** Reads and drops what is left of a body, up to `DRAIN_BYTES` in all; past that the upload is cancelled. */
async function drain(reader: ReadableStreamDefaultReader<Uint8Array>, read: number): Promise<void> {
  let size = read;
  while (size <= DRAIN_BYTES) {
    const { done, value } = await reader.read();
    if (done) return;
    size += value.byteLength;
  }
  await reader.cancel();
}

/** The body as text, or `payload_too_large` when it is over `maxSize` bytes (declared or counted while reading). */
export async function readBodyWithin(req: Request, maxSize: number): Promise<string> {
  const declared = req.headers.get("content-length");
  // A declared length is known before reading: the runtime discards such a body itself.
  if (declared !== null && !req.headers.has("transfer-encoding") && Number(declared) > maxSize) throw tooLarge(maxSize);
  if (!req.body) return "";
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxSize) {
      await drain(reader, size);
      throw tooLarge(maxSize);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.byteLength;
  }
  return new TextDecoder().decode(bytes);
}
