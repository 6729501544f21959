import { startLocalWorker } from "./local-worker.mjs";
import { workerdRssMiB, workerHeapMiB } from "./worker-memory.mjs";

const t0 = Date.now();
const log = (...a) => console.log(((Date.now() - t0) / 1000).toFixed(1), ...a);
const w = await startLocalWorker({ vars: { ADMIN_TOKEN: "x".repeat(30) } });
try {
  log("rss", workerdRssMiB(w.pid));
  log("heap+snap", await workerHeapMiB(w.inspector, "/tmp/h0.heapsnapshot"));
  log("heap", await workerHeapMiB(w.inspector));
} catch (e) {
  log("ERR", e);
} finally {
  await w.stop();
}
