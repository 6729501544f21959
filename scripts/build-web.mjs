#!/usr/bin/env node
// Builds the web app (web/) into web/dist, the static assets the Worker serves at `/`: the TypeScript client
// bundled and minified by esbuild into one ES module (app.js, then minified again by terser), the stylesheet
// minified by esbuild (app.css), and the HTML and response headers (`_headers`: the Content-Security-Policy) copied
// as they are. Run by wrangler's [build] step (dev and deploy) and by the test configs; `node scripts/build-web.mjs`
// on its own works too.
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { minify } from "terser";

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
    // One module, not a sign-in module and a chunk of screens: split, the whole app weighed 0.9 KiB more gzipped
    // (each file compressed apart, and the imports between them), and a returning user waited for three scripts
    // one after another.
    // `process` is Node's: openapi-fetch asks for it to tune fetch under Node; in a browser there is none.
    define: { process: "undefined" },
    outdir,
    entryNames: "app",
    logLevel: "warning",
  });
  // A second pass by terser over esbuild's output: its mangling names by frequency and its compression goes
  // further, which gzip rewards (measured: 23.1 -> 22.0 KiB gzipped for app.js; three passes gain nothing more).
  const js = path.join(outdir, "app.js");
  const { code } = await minify(readFileSync(js, "utf8"), { module: true, ecma: 2020, compress: { passes: 2 }, format: { comments: false } });
  writeFileSync(js, code);
  return outdir;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await buildWeb();
