#!/usr/bin/env node
// The `engram` command. The TypeScript sources (and the typed client they use, client/) compile to ../dist
// (`npm run build:cli`, run by `prepare`).
import { existsSync } from "node:fs";

const main = new URL("../dist/cli/src/main.js", import.meta.url);
if (!existsSync(main)) {
  console.error("engram: the CLI is not built yet; run `npm run build:cli` in the engram repository");
  process.exit(70);
}
await import(main.href);
