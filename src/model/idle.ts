/**
 * The SDK's `timeout` only covers the wait for the response headers: once a stream has started, a model
 * that stops sending would hold the turn (and its session's lock) open for as long as the connection
 * lives. This fetch gives every response body an idle limit: no bytes for `ms` and the body errors with
 * `ModelStalled`, which ends the call like any other model failure.
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

function idleLimited(body: ReadableStream<Uint8Array>, ms: number): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const stalled = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new ModelStalled(ms)), ms);
      });
      try {
        const next = await Promise.race([reader.read(), stalled]);
        if (next.done) controller.close();
        else controller.enqueue(next.value);
      } catch (err) {
        reader.cancel(err).catch(() => undefined);
        controller.error(err);
      } finally {
        clearTimeout(timer);
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
}
