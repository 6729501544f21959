#!/usr/bin/env node
// Builds the web app (web/) into web/dist, the static assets the Worker serves at `/`: the TypeScript
// client bundled and minified by esbuild into one ES module, the stylesheet minified by esbuild, and the HTML and
// response headers (`_headers`: the Content-Security-Policy) copied as they are. What the sign-in page does not
// need is split into chunks/ and loaded after sign-in. Run by wrangler's [build] step (dev and
// deploy) and by the test configs; `node scripts/build-web.mjs` on its own works too.
import { cpSync, mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), "..");

export async function buildWeb(outdir = path.join(root, "web/dist")) {
  rmSync(outdir, { recursive: true, force: true });
  mkdirSync(outdir, { recursive: true });
  const css = path.join(root, "web/public/app.css");
  cpSync(path.join(root, "web/public"), outdir, { recursive: true, filter: (from) => from !== css });
  await build({
    // app.css is an entry of its own, written minified beside app.js (the es2022 target names no browser, so no CSS
    // feature is rewritten).
    entryPoints: [path.join(root, "web/src/main.ts"), css],
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    minify: true,
    legalComments: "none",
    // The signed-in app is a chunk of its own (web/src/screens.ts, imported when needed): the sign-in page loads
    // app.js alone.
    splitting: true,
    outdir,
    entryNames: "app",
    chunkNames: "chunks/[name]-[hash]",
    logLevel: "warning",
  });
  return outdir;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await buildWeb();
