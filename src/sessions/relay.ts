/**
 * The Worker's side of a streamed turn: the session object's bytes passed on as they come, with a comment line
 * (`: keep-alive`) whenever the stream has been quiet for `keepAliveMs`, so proxies and mobile networks do not
 * close it during a long tool round. A client leaving ends only its own reading: the turn runs on (turn-log.ts).
 */
import { coalescingStream } from "./coalesce";

/** How long a stream may stay silent before a keep-alive comment goes out. */
export const KEEP_ALIVE_MS = 15_000;

const KEEP_ALIVE = new TextEncoder().encode(": keep-alive\n\n");
const NEWLINE = 10;

export function relay(events: ReadableStream<Uint8Array>, keepAliveMs = KEEP_ALIVE_MS): ReadableStream<Uint8Array> {
  const reader = events.getReader();
  let timer: ReturnType<typeof setTimeout> | undefined;
  // A comment may only go between two frames: after a chunk that ended one (a blank line).
  let between = true;
  const out = coalescingStream(async () => {
    clearTimeout(timer);
    await reader.cancel();
  });
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      if (between) out.push(KEEP_ALIVE);
      arm();
    }, keepAliveMs);
  };
  arm();
  (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return out.close();
      between = value.length >= 2 && value[value.length - 1] === NEWLINE && value[value.length - 2] === NEWLINE;
      out.push(value);
      arm();
    }
  })()
    .catch((err: unknown) => out.error(err))
    .finally(() => clearTimeout(timer));
  return out.readable;
}
