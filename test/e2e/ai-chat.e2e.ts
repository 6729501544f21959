/**
 * The AI SDK in a real browser: a small page built on the `ai` package's Chat state machine and DefaultChatTransport
 * (test/e2e/ai-chat/), served on engram's origin, chats through POST /v1/chat/ui with the offline model: a memory
 * save, a tool the browser runs, and an approval, with no error anywhere.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { build } from "esbuild";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Browser, openBrowser } from "./browser";
import { createUser, type DevServer, startDevServer } from "./server";

const here = path.join(import.meta.dirname, "ai-chat");
let server: DevServer;
let browser: Browser;
let page: Page;
let key: string;

/** The page's script, bundled the way scripts/build-web.mjs bundles the web app. */
async function bundle(): Promise<string> {
  const out = await build({
    entryPoints: [path.join(here, "page.ts")],
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    write: false,
    logLevel: "warning",
  });
  return out.outputFiles[0]?.text ?? "";
}

async function say(text: string): Promise<void> {
  await page.getByLabel("Message").fill(text);
  await page.getByLabel("Message").press("Enter");
  await page.locator(".msg.user", { hasText: text }).waitFor();
}

/** Waits until the chat is idle again (a turn, and any turn it sent on its own, ended). */
const idle = () => page.waitForFunction(() => document.getElementById("status")?.textContent === "ready");

beforeAll(async () => {
  server = await startDevServer();
  key = await createUser(server.origin, "ai-sdk@example.com");
  browser = await openBrowser(server.origin);
  page = browser.page;
  const script = await bundle();
  const html = readFileSync(path.join(here, "index.html"), "utf8");
  // Served as if from engram's origin (the page calls /v1/chat/ui on it): the browser sees one origin.
  await page.route(`${server.origin}/ai-chat.html`, (route) => route.fulfill({ contentType: "text/html", body: html }));
  await page.route(`${server.origin}/ai-chat.js`, (route) => route.fulfill({ contentType: "text/javascript", body: script }));
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe("a page on the AI SDK's Chat against engram", () => {
  it("saves a memory, runs the browser's tool, asks for an approval, with zero errors", async () => {
    await page.goto(`${server.origin}/ai-chat.html`);
    await page.getByLabel("API key").fill(key);
    await page.getByLabel("API key").press("Enter");
    await page.locator("#status", { hasText: "ready" }).waitFor();

    await say("Remember that I prefer tea over coffee");
    await page.locator(".msg.assistant .memory", { hasText: "Saved to memory" }).first().waitFor();
    await idle();

    await say("Where am I?");
    // The browser ran get_location (onToolCall + addToolOutput), and the turn went on without being asked twice.
    await page.locator(".msg.assistant .tool[data-state='output-available']", { hasText: "get_location" }).waitFor();
    await page.locator(".msg.assistant", { hasText: "48.8584" }).waitFor();
    await idle();

    await say("Please wipe the cache");
    await page.getByRole("button", { name: "Allow" }).click();
    await page.locator(".msg.assistant", { hasText: "wipe_cache says: wiped" }).waitFor();
    await idle();

    expect(await page.locator("#errors").textContent()).toBe("");
    expect(browser.errors).toEqual([]);
    expect(browser.foreign).toEqual([]);
    // One engram session holds the whole chat: the chat id is its id.
    const sessions = (await (await fetch(`${server.origin}/v1/sessions`, { headers: { authorization: `Bearer ${key}` } })).json()) as {
      sessions: { message_count: number }[];
    };
    expect(sessions.sessions).toHaveLength(1);
    for (const width of [390, 1280]) {
      await page.setViewportSize({ width, height: 900 });
      await browser.shot(`ai-sdk-chat-${width}`);
    }
  });
});
