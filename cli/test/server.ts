// Global setup of the CLI tests: a real engram server (scripts/local-worker.mjs: `wrangler dev`, a fresh
// migrated local D1, the offline model) on a free port; stopped when the run ends.
import type { TestProject } from "vitest/node";
import { startLocalWorker } from "../../scripts/local-worker.mjs";

const ADMIN_TOKEN = "cli-test-admin-token-0123456789";

declare module "vitest" {
  export interface ProvidedContext {
    serverUrl: string;
    adminToken: string;
  }
}

export default async function setup(project: TestProject) {
  const worker = await startLocalWorker({ vars: { ADMIN_TOKEN } });
  project.provide("serverUrl", worker.origin);
  project.provide("adminToken", ADMIN_TOKEN);
  return () => worker.stop();
}
