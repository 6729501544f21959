// How much memory a local Worker holds, for load runs: the resident size of workerd (every workerd process in
// wrangler's process group, read from /proc) and, through the DevTools inspector wrangler exposes, the JavaScript
// heap of the Worker's isolate after a full garbage collection. The first is what `top` shows; the second is the
// part engram's code can hold. A heap snapshot can be written for a closer look (open it in Chrome's DevTools).
// Linux only (/proc); elsewhere the resident size is null.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
// `ws`, not Node's WebSocket: wrangler's inspector proxy refuses the handshake undici sends.
import WebSocket from "ws";

/** Resident MiB of the workerd processes in process group `pgid`, or null when /proc is not there. */
export function workerdRssMiB(pgid) {
  let pages = 0;
  let found = false;
  let entries;
  try {
    entries = readdirSync("/proc").filter((d) => /^\d+$/.test(d));
  } catch {
    return null;
  }
  for (const pid of entries) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      // After the command's closing parenthesis: state ppid pgrp ...; rss is field 24 (1-based) of the whole line.
      const close = stat.lastIndexOf(")");
      const name = stat.slice(stat.indexOf("(") + 1, close);
      const fields = stat.slice(close + 2).split(" ");
      if (Number(fields[2]) !== pgid || !name.startsWith("workerd")) continue;
      pages += Number(fields[21]);
      found = true;
    } catch {
      // The process ended while we read.
    }
  }
  return found ? Math.round((pages * 4096) / 2 ** 20) : null;
}

/** A DevTools protocol session with the Worker behind wrangler's inspector port. */
async function devtools(port) {
  const targets = await (await fetch(`http://127.0.0.1:${port}/json`)).json();
  const target = targets.find((t) => t.webSocketDebuggerUrl);
  if (!target) throw new Error(`no inspectable Worker on port ${port}`);
  const ws = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("error", (err) => reject(new Error(`could not open the inspector's WebSocket: ${err.message}`)));
  });
  let next = 0;
  const waiting = new Map();
  const listeners = new Map();
  ws.on("message", (data) => {
    const msg = JSON.parse(String(data));
    if (msg.id !== undefined) {
      const w = waiting.get(msg.id);
      waiting.delete(msg.id);
      if (msg.error) w?.reject(new Error(msg.error.message));
      else w?.resolve(msg.result);
    } else listeners.get(msg.method)?.(msg.params);
  });
  return {
    send: (method, params = {}) =>
      new Promise((resolve, reject) => {
        const id = ++next;
        waiting.set(id, { resolve, reject });
        ws.send(JSON.stringify({ id, method, params }));
      }),
    on: (method, fn) => listeners.set(method, fn),
    close: () => ws.close(),
  };
}

/**
 * The isolate's memory in MiB after a full collection: `heap`, V8's JavaScript heap, and `buffers`, the memory
 * behind ArrayBuffers and the runtime's own objects (stream chunks, request bodies held by JavaScript). With
 * `snapshot`, also writes the .heapsnapshot there. The collection is the heap snapshot's own: workerd never answers
 * HeapProfiler.collectGarbage.
 */
export async function workerHeapMiB(port, snapshot) {
  const dt = await devtools(port);
  try {
    await dt.send("HeapProfiler.enable");
    const chunks = [];
    dt.on("HeapProfiler.addHeapSnapshotChunk", ({ chunk }) => {
      if (snapshot) chunks.push(chunk);
    });
    await dt.send("HeapProfiler.takeHeapSnapshot", { reportProgress: false });
    if (snapshot) writeFileSync(snapshot, chunks.join(""));
    const { usedSize, embedderHeapUsedSize = 0, backingStorageSize = 0 } = await dt.send("Runtime.getHeapUsage");
    const mib = (bytes) => Math.round((bytes / 2 ** 20) * 10) / 10;
    return { heap: mib(usedSize), buffers: mib(embedderHeapUsedSize + backingStorageSize) };
  } finally {
    dt.close();
  }
}
