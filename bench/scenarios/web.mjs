// The web app's first paint in Debian's Chromium (headless) against `wrangler dev`, and its page weight.
// Cold: a new browser context (empty cache) per sample; warm: the same page reloaded from cache.
import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import { launchChromium } from "../../scripts/chromium.mjs";

/** The whole app a signed-in user loads, gzipped, stays at or under this (issue 35's target). */
const WEIGHT_KIB = 25;
/** Scripts loaded after sign-in, if a build splits any out (scripts/build-web.mjs writes one module today). */
const CHUNKS = path.join(import.meta.dirname, "../../web/dist/chunks");

/**
 * The page's first-contentful-paint and load times. On a busy machine the paint entry can be queued after `load`:
 * wait for it (a buffered observer sees one already recorded) rather than record a hole; none in 5 s fails the run.
 */
async function paint(page) {
  return page.evaluate(
    () =>
      new Promise((resolve, reject) => {
        const nav = performance.getEntriesByType("navigation")[0];
        const observer = new PerformanceObserver((list) => {
          const fcp = list.getEntriesByName("first-contentful-paint")[0];
          if (!fcp) return;
          observer.disconnect();
          resolve({ fcp: fcp.startTime, load: nav ? nav.loadEventEnd : Number.NaN });
        });
        observer.observe({ type: "paint", buffered: true });
        setTimeout(() => reject(new Error("no first-contentful-paint within 5 s")), 5000);
      }),
  );
}

export default {
  name: "Web app: first paint and page weight",
  target: "first contentful paint p95 < 1000 ms on wrangler dev; no framework, the whole app at most 25 KiB gzipped",
  targets: { first_paint_cold_ms: { p95: 1000 }, first_paint_warm_ms: { p95: 1000 } },
  description:
    "Headless Chromium (/usr/bin/chromium) loads `/` (the sign-in screen: HTML, then app.js and app.css). `first_paint_cold_ms`: first-contentful-paint in a new browser context (empty cache); `load_cold_ms`: its load event; `first_paint_warm_ms`: the same page reloaded (cached assets). Times are from navigation start, as the browser reports them.",
  runs: 30,
  warmup: 3,
  async setup() {
    const browser = await launchChromium();
    return { browser };
  },
  async sample(h, state) {
    const context = await state.browser.newContext();
    const page = await context.newPage();
    await page.goto(h.url, { waitUntil: "load" });
    await page.getByLabel("API key").waitFor();
    const cold = await paint(page);
    await page.reload({ waitUntil: "load" });
    await page.getByLabel("API key").waitFor();
    const warm = await paint(page);
    await context.close();
    return { first_paint_cold_ms: cold.fcp, load_cold_ms: cold.load, first_paint_warm_ms: warm.fcp };
  },
  async report(h, state) {
    // What the sign-in screen loads, as the browser saw it: the page and every script and style it fetched.
    const context = await state.browser.newContext();
    const page = await context.newPage();
    await page.goto(h.url, { waitUntil: "load" });
    await page.getByLabel("API key").waitFor();
    const fetched = await page.evaluate(() => performance.getEntriesByType("resource").map((e) => new URL(e.name).pathname));
    await context.close();
    await state.browser.close();
    const signIn = ["/", ...new Set(fetched)];
    const later = (existsSync(CHUNKS) ? readdirSync(CHUNKS) : []).map((f) => `/chunks/${f}`).filter((p) => !signIn.includes(p));
    const rows = [];
    const total = { raw: 0, gz: 0, br: 0 };
    const kib = (n) => (n / 1024).toFixed(1);
    const add = async (assetPath, into) => {
      const body = Buffer.from(await (await fetch(`${h.url}${assetPath}`)).arrayBuffer());
      const zipped = gzipSync(body, { level: 9 }).length;
      const brotli = brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length;
      into.raw += body.length;
      into.gz += zipped;
      into.br += brotli;
      rows.push(`| \`${assetPath}\` | ${kib(body.length)} | ${kib(zipped)} | ${kib(brotli)} |`);
    };
    const sum = (label, t) => `| **${label}** | **${kib(t.raw)}** | **${kib(t.gz)}** | **${kib(t.br)}** |`;
    for (const p of signIn) await add(p, total);
    rows.push(sum("sign-in page", total));
    const whole = { ...total };
    for (const p of later) await add(p, whole);
    rows.push(sum("whole app, after sign-in", whole));
    const within = whole.gz / 1024 <= WEIGHT_KIB;
    return [
      "Page weight (every byte the sign-in screen loads, as the browser fetched it, then any script the signed-in app loads after it; screens load nothing more but API JSON; gzip -9 as an estimate of transfer size, each file compressed on its own; brotli at quality 11, for clients that accept it, as context):",
      "",
      "| asset | KiB | KiB gzipped | KiB brotli |",
      "|---|---|---|---|",
      ...rows,
      "",
      `Weight target: the whole app at most ${WEIGHT_KIB} KiB gzipped: ${within ? "met" : "MISSED"} (${(whole.gz / 1024).toFixed(2)} KiB, ${whole.gz} bytes).`,
    ].join("\n");
  },
};
