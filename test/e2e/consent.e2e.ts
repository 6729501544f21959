/**
 * The "What I may remember" panel in Chromium: the user sets a mode per kind of memory and a phrase never to
 * remember, the API sees it, and what was kept out shows in the context logs without its text.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Browser, openBrowser } from "./browser";
import { createUser, type DevServer, startDevServer } from "./server";

let server: DevServer;
let browser: Browser;
let key: string;

const call = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${server.origin}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

beforeAll(async () => {
  server = await startDevServer();
  key = await createUser(server.origin, "consent@example.com");
  browser = await openBrowser(server.origin);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe("what the assistant may remember", () => {
  it("is changed in the web app, applies to the next write, and the context log says what was kept out", async () => {
    const { page } = browser;
    await page.goto(server.origin);
    await page.getByLabel("API key").fill(key);
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "What engram knows about you" }).waitFor();

    await page.getByRole("link", { name: "Memory", exact: true }).click();
    await page.getByRole("link", { name: "What I may remember" }).click();
    await page.getByRole("heading", { name: "What the assistant may remember" }).waitFor();
    await page.getByLabel("MEMORY entries").selectOption("ask");
    await page.getByLabel("Coding lessons").selectOption("off");
    await page.getByLabel("Never remember").fill("pattern: Clínica Sol\ntopic: health");
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByRole("status").filter({ hasText: "Saved." }).waitFor();
    await browser.shot("consent-1280");
    await page.setViewportSize({ width: 390, height: 844 });
    await browser.shot("consent-390");
    await page.setViewportSize({ width: 1280, height: 800 });

    const settings = await call("GET", "/v1/settings");
    expect(settings.body).toEqual({
      consent: { brain: "auto", memory: "ask", facts: "auto", lessons: "off" },
      sensitive: [
        { kind: "pattern", text: "Clínica Sol" },
        { kind: "topic", text: "health" },
      ],
    });

    const imported = await call("POST", "/v1/memory/facts", { facts: [{ text: "Consulta na CLÍNICA SOL na sexta" }, { text: "Likes trains" }] });
    expect(imported.body).toMatchObject({ withheld: 1 });

    await page.getByRole("link", { name: "Context logs" }).click();
    const entry = page.locator("details.log-entry").first();
    await entry.locator("summary").click();
    await entry.getByText("matched your pattern “Clínica Sol”").waitFor();
    expect(await page.locator("body").textContent()).not.toContain("Consulta");
    await browser.shot("consent-log-1280");
    await page.setViewportSize({ width: 390, height: 844 });
    await browser.shot("consent-log-390");
    expect(browser.errors).toEqual([]);
    expect(browser.foreign).toEqual([]);
  });
});
