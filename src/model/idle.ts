/**
 * The SDK's `timeout` only covers the wait for the response headers: once a stream has started, a model
 * that stops sending would hold the turn (and its session's lock) open for as long as the connection
 * lives. This fetch gives every response body an idle limit: no bytes for `ms` while the reader waits for
 * them and the body errors with `ModelStalled`, which ends the call like any other model failure.
 */
import { ModelStalled } from "./errors";

type Fetch = (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>;

export function idleLimitedFetch(ms: number, inner: Fetch = (input, init) => fetch(input, init)): Fetch {
  return async (input, init) => {
    const res = await inner(input, init);
    if (!res.body) return res;
    return new Response(idleLimited(res.body, ms), { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}

/**
 * One timer per body, not one per chunk: a read only notes when it started waiting, and the timer,
 * when it fires, either finds a read waiting for `ms` (the body errors), or is set again for the rest
 * of the wait, or, with no read waiting, is left unset until the next read sets it.
 */
function idleLimited(body: ReadableStream<Uint8Array>, ms: number): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let waitingSince: number | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stop: ((err: unknown) => void) | undefined;
  let finished = false;
  const arm = (delay: number) => {
    timer = setTimeout(check, delay);
  };
  const check = () => {
    timer = undefined;
    if (finished || waitingSince === undefined) return;
    const waited = Date.now() - waitingSince;
    if (waited < ms) return arm(ms - waited);
    stop?.(new ModelStalled(ms));
  };
  const finish = () => {
    finished = true;
    clearTimeout(timer);
    timer = undefined;
  };
  return new ReadableStream<Uint8Array>({
    start(controller) {
      stop = (err) => {
        if (finished) return;
        finish();
        reader.cancel(err).catch(() => undefined);
        controller.error(err);
      };
    },
    async pull(controller) {
      waitingSince = Date.now();
      if (timer === undefined) arm(ms);
      try {
        const next = await reader.read();
        waitingSince = undefined;
        if (finished) return;
        if (next.done) {
          finish();
          controller.close();
        } else controller.enqueue(next.value);
      } catch (err) {
        stop?.(err);
      }
    },
    cancel(reason) {
      finish();
      return reader.cancel(reason);
    },
  });
}
