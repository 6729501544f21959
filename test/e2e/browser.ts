/** Debian's Chromium driven by playwright-core: a fresh profile, offline-safe flags, every request and console error recorded. */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";

export const ARTIFACTS = path.join(import.meta.dirname, "artifacts");
const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export type Browser = {
  context: BrowserContext;
  page: Page;
  /** Requests to anywhere but the app's origin (must stay empty). */
  foreign: string[];
  /** console.error messages and uncaught page errors (must stay empty). */
  errors: string[];
  shot: (name: string) => Promise<void>;
  close: () => Promise<void>;
};

export async function openBrowser(origin: string): Promise<Browser> {
  const profile = mkdtempSync(path.join(tmpdir(), "engram-chromium-"));
  mkdirSync(ARTIFACTS, { recursive: true });
  // launchPersistentContext is how playwright takes --user-data-dir: a new, empty profile every run.
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    headless: true,
    args: FLAGS,
    viewport: { width: 1280, height: 800 },
    geolocation: { latitude: 48.8584, longitude: 2.2945, accuracy: 10 },
    permissions: ["geolocation"],
    locale: "en-US",
    timezoneId: "Europe/Paris",
  });
  const foreign: string[] = [];
  const errors: string[] = [];
  context.on("request", (req) => {
    const url = req.url();
    if (!url.startsWith(`${origin}/`) && !url.startsWith("data:")) foreign.push(url);
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.on("console", (msg) => {
    if (msg.type() === "error") errors.push(msg.text());
  });
  page.on("pageerror", (err) => errors.push(err.message));
  // Chromium's console line for a failed load has no URL: record which request it was.
  page.on("response", (res) => {
    if (res.status() >= 400) errors.push(`HTTP ${res.status()} ${res.request().method()} ${res.url()}`);
  });
  page.setDefaultTimeout(30_000);
  return {
    context,
    page,
    foreign,
    errors,
    shot: async (name) => {
      await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
    },
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
