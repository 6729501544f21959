/**
 * The Account page's export in a real browser against `wrangler dev`: the button downloads the archive of
 * GET /v1/export as a file, with the user's memory in it; the page fits a phone.
 */
import { readFile } from "node:fs/promises";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Browser, openBrowser } from "./browser";
import { createUser, type DevServer, startDevServer } from "./server";

let server: DevServer;
let browser: Browser;
let page: Page;
let key: string;

beforeAll(async () => {
  server = await startDevServer();
  key = await createUser(server.origin, "export@example.com");
  const res = await fetch(`${server.origin}/v1/memory/facts`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ facts: [{ text: "User grows tomatoes on the balcony" }] }),
  });
  expect(res.status).toBe(201);
  browser = await openBrowser(server.origin);
  page = browser.page;
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe("Account: export", () => {
  it("downloads the archive as a file", async () => {
    await page.goto(server.origin);
    await page.getByLabel("API key").fill(key);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("link", { name: "Account", exact: true }).click();
    const button = page.getByRole("button", { name: "Download my data" });
    const [download] = await Promise.all([page.waitForEvent("download"), button.click()]);
    expect(download.suggestedFilename()).toMatch(/^engram-export-\d{4}-\d{2}-\d{2}\.jsonl$/);
    const file = await download.path();
    const lines = (await readFile(file, "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { kind?: string; format?: string; data?: { text?: string } });
    expect(lines[0]?.format).toBe("engram.archive");
    expect(lines.filter((l) => l.kind === "fact").map((l) => l.data?.text)).toEqual(["User grows tomatoes on the balcony"]);
    await page
      .getByRole("status")
      .filter({ hasText: /Downloaded \d+ KB/ })
      .waitFor();
    await browser.shot("40-account-export");
  });

  it("fits a phone", async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole("heading", { name: "Export your data" }).waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
    await browser.shot("41-phone-account-export");
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it("made no request outside its origin (the download is a blob of the page) and logged no errors", () => {
    expect(browser.foreign.filter((u) => !u.startsWith("blob:"))).toEqual([]);
    expect(browser.errors).toEqual([]);
  });
});
