/** Debian's Chromium (scripts/chromium.mjs) on a fresh profile, every request and console error recorded. */
import { mkdirSync } from "node:fs";
import path from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { launchChromiumProfile } from "../../scripts/chromium.mjs";

export const ARTIFACTS = path.join(import.meta.dirname, "artifacts");

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
  mkdirSync(ARTIFACTS, { recursive: true });
  const { context, close } = await launchChromiumProfile({
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
    close,
  };
}
