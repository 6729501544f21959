/**
 * The Account page's export in a real browser against `wrangler dev`: the button downloads the archive of
 * GET /v1/export as a file, with the user's memory in it; the page fits a phone.
 */
import { readFile } from "node:fs/promises";
import { beforeAll, describe, expect, it } from "vitest";
import { appSession } from "./session";

const app = appSession("export@example.com");

beforeAll(async () => {
  const res = await fetch(`${app.server.origin}/v1/memory/facts`, {
    method: "POST",
    headers: { authorization: `Bearer ${app.key}`, "content-type": "application/json" },
    body: JSON.stringify({ facts: [{ text: "User grows tomatoes on the balcony" }] }),
  });
  expect(res.status).toBe(201);
});

describe("Account: export", () => {
  it("downloads the archive as a file", async () => {
    await app.page.goto(app.server.origin);
    await app.page.getByLabel("API key").fill(app.key);
    await app.page.getByRole("button", { name: "Sign in" }).click();
    await app.page.getByRole("link", { name: "Account", exact: true }).click();
    const button = app.page.getByRole("button", { name: "Download my data" });
    const [download] = await Promise.all([app.page.waitForEvent("download"), button.click()]);
    expect(download.suggestedFilename()).toMatch(/^engram-export-\d{4}-\d{2}-\d{2}\.jsonl$/);
    const file = await download.path();
    const lines = (await readFile(file, "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { kind?: string; format?: string; data?: { text?: string } });
    expect(lines[0]?.format).toBe("engram.archive");
    expect(lines.filter((l) => l.kind === "fact").map((l) => l.data?.text)).toEqual(["User grows tomatoes on the balcony"]);
    await app.page
      .getByRole("status")
      .filter({ hasText: /Downloaded \d+ KB/ })
      .waitFor();
    await app.browser.shot("40-account-export");
  });

  it("fits a phone", async () => {
    await app.page.setViewportSize({ width: 390, height: 844 });
    await app.page.getByRole("heading", { name: "Export your data" }).waitFor();
    expect(await app.page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
    await app.browser.shot("41-phone-account-export");
    await app.page.setViewportSize({ width: 1280, height: 800 });
  });

  it("made no request outside its origin (the download is a blob of the page) and logged no errors", () => {
    expect(app.browser.foreign.filter((u) => !u.startsWith("blob:"))).toEqual([]);
    expect(app.browser.errors).toEqual([]);
  });
});
