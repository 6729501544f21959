// Debian's Chromium driven by playwright-core, for the browser tests and the web benchmark: one executable,
// one set of flags that keep it offline-safe (no background traffic, no QUIC, no sandbox in containers).
// Never `npx playwright install`: it downloads. Types: chromium.d.mts.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { chromium } from "playwright-core";

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
export const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** A headless browser; each newContext() of it starts with an empty cache. */
export function launchChromium() {
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_FLAGS });
}

/** A browser context on a new, empty profile folder (how playwright takes --user-data-dir); close() removes it. */
export async function launchChromiumProfile(options = {}) {
  const profile = mkdtempSync(path.join(tmpdir(), "engram-chromium-"));
  const context = await chromium.launchPersistentContext(profile, { ...options, executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_FLAGS });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
