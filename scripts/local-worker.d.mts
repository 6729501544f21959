export type LocalWorkerOptions = {
  /** The Worker to run; wrangler.toml's `main` (src/index.ts) when left out. */
  entry?: "src/index.ts" | "test/worker.ts" | "bench/worker.ts";
  /** `--var NAME:VALUE` for each entry: they win over the env file. */
  vars?: Record<string, string>;
  /** Instead of .dev.vars (e.g. a file with only ADMIN_TOKEN, so the offline model answers). */
  envFile?: string;
  /** `--test-scheduled`: cron triggers through GET /__scheduled?cron=... */
  testScheduled?: boolean;
  /** How long start-up (bundling included) may take before it fails; 240 s by default. */
  readyTimeoutMs?: number;
};

export type LocalWorker = {
  /** http://127.0.0.1:<port> */
  origin: string;
  port: number;
  /** The port of the Worker's DevTools inspector (scripts/worker-memory.mjs reads the heap through it). */
  inspector: number;
  /** wrangler's pid, which is also its process group (workerd is in it). */
  pid: number;
  /** The local state folder (D1, Durable Objects), removed by stop(). */
  persist: string;
  /** Ends wrangler and workerd (the whole process group) and removes the state folder. Safe to call twice. */
  stop(): Promise<void>;
  /** wrangler's process id, also its process group's (workerd is in that group). */
  pid: number;
  /** What wrangler printed (the last 256 KiB). */
  output(): string;
};

export declare function startLocalWorker(options?: LocalWorkerOptions): Promise<LocalWorker>;
export declare function freePort(): Promise<number>;
