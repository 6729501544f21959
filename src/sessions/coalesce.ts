/**
 * A byte stream that hands its reader everything written since the reader's last read, as one chunk.
 * A turn's events pass two hops (session object -> Worker -> client) and each chunk costs a hop its own
 * write and read; when the reader is slower than the writer (a burst of deltas, the last text and the
 * `done` event), the waiting events go out together instead of one after another. Nothing waits for
 * more to arrive: a chunk leaves as soon as the reader asks and something is there.
 */
export type Coalescing = {
  readable: ReadableStream<Uint8Array>;
  /** Dropped once the reader is gone. */
  push(chunk: Uint8Array): void;
  close(): void;
  error(reason: unknown): void;
  /** Resolves when everything pushed so far has been read (or the reader is gone). */
  drained(): Promise<void>;
};

export function coalescingStream(onCancel: (reason: unknown) => void | Promise<void>): Coalescing {
  let queue: Uint8Array[] = [];
  let ended = false;
  let failure: { reason: unknown } | undefined;
  let gone = false;
  let wake: (() => void) | undefined;
  let waiters: (() => void)[] = [];
  const poke = () => {
    wake?.();
    wake = undefined;
  };
  const settleWaiters = () => {
    for (const w of waiters) w();
    waiters = [];
  };
  const readable = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        while (!queue.length && !ended && !failure) await new Promise<void>((resolve) => (wake = resolve));
        if (queue.length) {
          controller.enqueue(concat(queue));
          queue = [];
          settleWaiters();
          return;
        }
        if (failure) controller.error(failure.reason);
        else controller.close();
      },
      async cancel(reason) {
        gone = true;
        queue = [];
        settleWaiters();
        poke();
        await onCancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
  return {
    readable,
    push(chunk) {
      if (gone || ended) return;
      queue.push(chunk);
      poke();
    },
    close() {
      ended = true;
      poke();
    },
    error(reason) {
      if (ended) return;
      ended = true;
      failure = { reason };
      poke();
    },
    drained: () => (gone || !queue.length ? Promise.resolve() : new Promise<void>((resolve) => waiters.push(resolve))),
  };
}

function concat(chunks: readonly Uint8Array[]): Uint8Array {
  if (chunks.length === 1 && chunks[0]) return chunks[0];
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

/** `head`'s chunks, then everything `tail` carries; cancelling the result cancels `tail`. */
export function prepended(head: readonly Uint8Array[], tail: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  if (!head.length) return tail;
  const reader = tail.getReader();
  return new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of head) controller.enqueue(chunk);
    },
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
}
