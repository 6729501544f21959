/**
 * The web app as a person meets it (issue 35): the chat keeps up with the conversation and keeps what failed to
 * send; a reopened conversation looks as it did live; forgetting reaches working memory and a restore asks before
 * bringing it back; offline calls cost nothing; every screen fits 360 to 1280 px, passes axe with no serious or
 * critical violation, and is screenshot at 390 and 1280 px (test/e2e/artifacts/ux-*).
 */

import path from "node:path";
import AxeBuilder from "@axe-core/playwright";
import type { Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderDashboard } from "../../cli/src/dashboard";
import { ARTIFACTS, type Browser, openBrowser } from "./browser";
import { createUser, type DevServer, startDevServer } from "./server";

let server: DevServer;
let browser: Browser;
let page: Page;
let key: string;

const WIDTHS = [360, 390, 768, 1280];

const api = async <T>(path: string, init: RequestInit = {}): Promise<T> => {
  const res = await fetch(`${server.origin}${path}`, { ...init, headers: { authorization: `Bearer ${key}`, "content-type": "application/json" } });
  return (await res.json()) as T;
};

const turnEnded = () => page.waitForFunction(() => document.querySelector(".log")?.getAttribute("aria-busy") === "false");
const lastAnswer = () => page.locator(".msg.assistant").last();

async function say(text: string): Promise<void> {
  await page.getByRole("link", { name: "Chat", exact: true }).click();
  await page.getByLabel("Message").fill(text);
  await page.getByLabel("Message").press("Enter");
  await page.locator(".msg.user", { hasText: text }).last().waitFor();
  await turnEnded();
}

/** How far the page scrolls sideways at this width (0 when it fits), and the first element past the edge. */
const overflow = () =>
  page.evaluate(() => {
    const over = document.documentElement.scrollWidth - window.innerWidth;
    if (over <= 0) return "0";
    const wide = Array.from(document.querySelectorAll("body *")).find((e) => e.getBoundingClientRect().right > window.innerWidth + 1);
    return `${over} (${wide?.tagName.toLowerCase()}.${wide?.className} ${wide?.textContent?.slice(0, 40)})`;
  });

/** Axe's serious and critical violations of the page as it is, each as "rule: selector". */
async function axeProblems(): Promise<string[]> {
  const result = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
  return result.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .flatMap((v) => v.nodes.map((n) => `${v.id}: ${n.target.join(" ")}`));
}

/**
 * One screen, as every test of it wants it: no sideways scroll at any width, nothing serious for axe, and a
 * screenshot at phone and desktop width. `ready` waits for the screen's content after each resize.
 */
async function checkScreen(name: string, ready: () => Promise<unknown>): Promise<void> {
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: width < 700 ? 844 : 860 });
    await ready();
    expect(`${name} at ${width}: ${await overflow()}`).toBe(`${name} at ${width}: 0`);
    if (width === 390 || width === 1280) await page.screenshot({ path: path.join(ARTIFACTS, `ux-${name}-${width}.png`), fullPage: true });
  }
  expect(await axeProblems()).toEqual([]);
  await page.setViewportSize({ width: 1280, height: 860 });
}

/** Whether the element is wholly inside the viewport and not under the sticky message box. */
async function inSight(el: Locator): Promise<boolean> {
  const box = await el.boundingBox();
  const composer = (await page.locator(".composer").isVisible()) ? await page.locator(".composer").boundingBox() : null;
  const height = page.viewportSize()?.height ?? 0;
  if (!box) return false;
  const bottom = composer ? Math.min(height, composer.y) : height;
  return box.y >= 0 && box.y + box.height <= bottom + 0.5;
}

beforeAll(async () => {
  server = await startDevServer();
  key = await createUser(server.origin, "ux@example.com");
  browser = await openBrowser(server.origin);
  page = browser.page;
  await page.setViewportSize({ width: 1280, height: 860 });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe("the web app people enjoy using", () => {
  it("says in words what is wrong with a mistyped key, and signs in", async () => {
    await page.goto(server.origin);
    await checkScreen("signin", () => page.getByLabel("API key").waitFor());
    await page.getByLabel("API key").fill("not-a-key");
    await page.keyboard.press("Enter");
    const alert = page.getByRole("alert").filter({ hasText: "That API key was not accepted" });
    await alert.waitFor();
    expect(await alert.textContent()).not.toContain("Sign out");
    // Focus stays in the field to correct it.
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("api-key");
    await page.getByLabel("API key").fill(key);
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "What engram knows about you" }).waitFor();
  });

  it("words the overview's counts alike, and fits every width", async () => {
    await checkScreen("overview", () => page.locator('[data-count="sessions"]').waitFor());
    const labels = await page.locator(".card dt").allTextContents();
    expect(labels).toContain("Archived projects");
    // Every label a capitalised phrase, none a raw key.
    expect(labels.filter((l) => /_|^[a-z]/.test(l))).toEqual([]);
  });

  it("keeps a message that could not be sent in the box, saying why in words", async () => {
    await page.getByRole("link", { name: "Chat", exact: true }).click();
    const long = `Please read this: ${"very long text ".repeat(19_000)}end.`;
    await page.getByLabel("Message").fill(long);
    await page.getByLabel("Message").press("Enter");
    const alert = lastAnswer().getByRole("alert");
    await alert.filter({ hasText: "too long to send" }).waitFor();
    expect(await alert.textContent()).not.toMatch(/bytes|262144/);
    expect(await page.getByLabel("Message").inputValue()).toBe(long);
    await page.locator(".msg.user.unsent").getByText("Not sent. Your message is back in the box.").waitFor();
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("message");
    await page.getByLabel("Message").fill("");
    await page.getByRole("button", { name: "New chat" }).click();
  });

  it("brings an approval into sight above the message box, focuses it and announces it", async () => {
    // Enough conversation that the page scrolls.
    for (const n of [1, 2, 3, 4]) await say(`Remember that my lucky number is ${n}`);
    await page.getByLabel("Message").fill("Where am I?");
    await page.getByLabel("Message").press("Enter");
    const allow = page.getByRole("group", { name: "Approve get_location" }).getByRole("button", { name: "Allow", exact: true });
    await allow.waitFor();
    await page.waitForFunction(() => document.activeElement?.textContent === "Allow");
    expect(await inSight(allow)).toBe(true);
    await page.getByRole("status").filter({ hasText: "Waiting for your answer: get_location" }).waitFor();
    // Visible focus: the focused button draws an outline.
    await page.keyboard.press("Shift+Tab");
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => getComputedStyle(document.activeElement as Element).outlineStyle)).not.toBe("none");
    await browser.shot("ux-chat-approval-1280");
    await checkScreen("chat-approval", () => allow.waitFor());
  });

  it("offers New messages when the reader scrolled up, and follows the conversation otherwise", async () => {
    // The reply to the approval is held back until the reader has scrolled up to read.
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route("**/v1/sessions/*/tool_result", async (route) => {
      const response = await route.fetch();
      await held;
      await route.fulfill({ response });
    });
    await page.getByRole("group", { name: "Approve get_location" }).getByRole("button", { name: "Allow", exact: true }).press("Enter");
    await page.evaluate(() => window.scrollTo({ top: 0 }));
    await page.waitForFunction(() => window.scrollY === 0);
    release();
    await lastAnswer().getByText("48.8584").waitFor();
    await turnEnded();
    await page.unroute("**/v1/sessions/*/tool_result");
    const jump = page.getByRole("button", { name: "New messages" });
    await jump.waitFor();
    // The page stayed where the reader was.
    expect(await page.evaluate(() => window.scrollY)).toBe(0);
    await browser.shot("ux-chat-new-messages-1280");
    await jump.click();
    await jump.waitFor({ state: "hidden" });
    expect(await inSight(lastAnswer().getByText("48.8584"))).toBe(true);
    // At the bottom, the next reply is followed without a button.
    await say("Remember that I like long walks");
    expect(await jump.isHidden()).toBe(true);
    expect(await inSight(lastAnswer())).toBe(true);
  });

  it("shows a reopened conversation as it looked live: one answer per turn, the same lines", async () => {
    await say("Remember that I love green tea");
    const live = lastAnswer();
    await live.getByText("Saved to MEMORY").waitFor();
    const lines = async (answer: Locator) => answer.locator(".text, .tool, .saved").allInnerTexts();
    const before = await lines(live);
    expect(before.some((l) => l.startsWith("Remembering this for later"))).toBe(true);
    const answers = await page.locator(".msg.assistant").count();
    const shown = await page.getByRole("button", { name: "What it was shown" }).count();
    await page.locator(".sessions li.current .session-open").click();
    await page
      .locator(".msg.assistant")
      .nth(answers - 1)
      .waitFor();
    const reopened = lastAnswer();
    expect(await lines(reopened)).toEqual(before);
    expect(await page.locator(".msg.assistant").count()).toBe(answers);
    expect(await page.getByRole("button", { name: "What it was shown" }).count()).toBe(shown);
    expect(await reopened.textContent()).not.toContain("Used update_customer_brain");
  });

  it("shows the words of a turn waiting on a tool when the conversation is reopened", async () => {
    await say("Where am I now?");
    const waiting = (await lastAnswer().locator(".text").allInnerTexts()).join(" ");
    expect(waiting).not.toBe("");
    await page.locator(".sessions li.current .session-open").click();
    await page.getByRole("group", { name: "Approve get_location" }).waitFor();
    expect((await lastAnswer().locator(".text").allInnerTexts()).join(" ")).toBe(waiting);
    await page.getByRole("group", { name: "Approve get_location" }).getByRole("button", { name: "Deny" }).click();
    await expect.poll(async () => (await api<{ sessions: { pending: boolean }[] }>("/v1/sessions")).sessions.some((s) => s.pending)).toBe(false);
    // The turn is over once its answer offers what it was shown.
    await lastAnswer().getByRole("button", { name: "What it was shown" }).waitFor();
    await turnEnded();
  });

  it("forgets from working memory too, says what went from where, and a restore asks before bringing it back", async () => {
    await say("I live in Lisbon");
    await expect
      .poll(async () => (await api<{ working_memory: string; pending_events: number }>("/v1/memory/working")).working_memory, {
        timeout: 60_000,
        interval: 500,
      })
      .toMatch(/Lisbon/);
    await expect.poll(async () => (await api<{ pending_events: number }>("/v1/memory/working")).pending_events, { timeout: 60_000, interval: 500 }).toBe(0);
    const beforeForget = (await api<{ runs: { rev: number }[] }>("/v1/memory/runs?limit=1")).runs[0]?.rev ?? 0;
    // A fact that also holds the user's name would go whole: it is not offered, and the reply says it was left.
    const mixed = "My name is Ana, I translate novels and I live in Lisbon";
    await api("/v1/memory/facts", { method: "POST", body: JSON.stringify({ facts: [{ text: mixed }] }) });
    await say("Please forget that I live in Lisbon");
    const prompt = page.getByRole("group", { name: "Approve forget_memory" });
    await lastAnswer().getByText(`(“${mixed}”): I left it`).waitFor();
    expect(await prompt.getByRole("list", { name: "What would be forgotten" }).textContent()).not.toContain("Ana");
    await prompt
      .getByRole("list", { name: "What would be forgotten" })
      .getByText(/^From working memory: .*Lisbon/)
      .waitFor();
    await browser.shot("ux-forget-prompt-1280");
    await prompt.getByRole("button", { name: "Allow", exact: true }).click();
    await lastAnswer()
      .getByText(/Removed from working memory: “.*Lisbon/)
      .waitFor();
    await turnEnded();
    expect((await api<{ working_memory: string }>("/v1/memory/working")).working_memory).not.toMatch(/Lisbon/);

    await page.getByRole("link", { name: "Memory", exact: true }).click();
    await page.getByRole("link", { name: "Working memory & scaffold" }).click();
    const history = page.getByRole("list", { name: "Memory revisions" });
    await history
      .getByText(/forgotten at your request: .*Lisbon/)
      .first()
      .waitFor();
    await history.getByRole("button", { name: `Restore revision ${beforeForget}`, exact: true }).click();
    await history.getByText(`Revision ${beforeForget} is from before you asked to forget`).waitFor();
    await browser.shot("ux-restore-forgotten-1280");
    // Nothing is restored before the answer; "No" leaves it forgotten.
    expect((await api<{ working_memory: string }>("/v1/memory/working")).working_memory).not.toMatch(/Lisbon/);
    await history.getByRole("button", { name: "No" }).click();
    expect((await api<{ working_memory: string }>("/v1/memory/working")).working_memory).not.toMatch(/Lisbon/);
  });

  it("refuses broken JSON in Add key with a clear message, and shows the confirmation where the reader is", async () => {
    const panel = page.getByRole("region", { name: "Working memory and scaffold" });
    await panel.getByLabel("New scaffold key").fill("Pets");
    await panel.getByLabel("Value of the new key").fill('["cat", "dog"');
    await panel.getByRole("button", { name: "Add key" }).click();
    await panel.getByRole("alert").filter({ hasText: "not valid JSON" }).waitFor();
    expect(Object.keys((await api<{ scaffold: Record<string, unknown> }>("/v1/memory/scaffold")).scaffold)).not.toContain("Pets");
    await panel.getByLabel("Value of the new key").fill('["cat", "dog"]');
    await panel.getByRole("button", { name: "Add key" }).click();
    const done = panel.getByRole("status").filter({ hasText: "Added Pets." });
    await done.waitFor();
    expect(await inSight(done)).toBe(true);
    expect((await api<{ scaffold: Record<string, unknown> }>("/v1/memory/scaffold")).scaffold.Pets).toEqual(["cat", "dog"]);
  });

  it("opens every memory screen with a sentence saying what it is, and each fits and passes axe", async () => {
    const tabs: [string, RegExp][] = [
      ["SOUL", /^SOUL is who the assistant is for you/],
      ["BIBLE & HEARTBEAT", /^BIBLE holds the facts of a site/],
      ["MEMORY & review", /^MEMORY is/],
      ["Working memory & scaffold", /^Working memory is/],
      ["Facts", /^Facts are/],
      ["Observations", /^Observations are/],
      ["Context logs", /^Context logs show/],
    ];
    for (const [tab, intro] of tabs) {
      await page.getByRole("link", { name: "Memory", exact: true }).click();
      await page.getByRole("link", { name: tab, exact: true }).click();
      await page.locator(".intro").filter({ hasText: intro }).waitFor();
      await page.waitForFunction(() => !document.querySelector('[aria-busy="true"]'));
      await checkScreen(`memory-${tab.replace(/\W+/g, "-").toLowerCase()}`, () => page.locator(".intro").waitFor());
    }
    for (const tab of ["Projects", "Lessons"]) {
      await page.getByRole("link", { name: tab, exact: true }).click();
      await page.waitForFunction(() => !document.querySelector('[aria-busy="true"]'));
      await checkScreen(`memory-${tab.toLowerCase()}`, () => page.locator("main section, main .panel").first().waitFor());
    }
  });

  it("names conversations in the context logs by title, never by id", async () => {
    await page.getByRole("link", { name: "Memory", exact: true }).click();
    await page.getByRole("link", { name: "Context logs", exact: true }).click();
    const summaries = page.locator("details.log-entry summary");
    await summaries.first().waitFor();
    const texts = await summaries.allTextContents();
    expect(texts.filter((t) => /ses_/.test(t))).toEqual([]);
    expect(texts.some((t) => t.includes("in “"))).toBe(true);
  });

  it("shows offline-model calls as offline, at no cost", async () => {
    await page.getByRole("link", { name: "Usage", exact: true }).click();
    await page.getByText(/answered by the offline model .*: no cost\./).waitFor();
    await page.getByText(/^\$0\.0000 estimated/).waitFor();
    await checkScreen("usage", () => page.getByRole("img", { name: /Estimated cost per day/ }).waitFor());
    await page.getByRole("link", { name: "Overview", exact: true }).click();
    await page.getByText(/Today: \d+ model calls, \$0\.0000 estimated/).waitFor();
  });

  it("keeps the header to one compact block on a phone and every section reachable by keyboard", async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole("link", { name: "Chat", exact: true }).click();
    const header = await page.locator("header").boundingBox();
    expect(header?.height ?? 999).toBeLessThan(100);
    // Keyboard: from the top of the page, Tab reaches the skip link, then every section link in turn.
    // The skip link is the first stop on the page.
    await page.locator(".skip").focus();
    expect(await page.evaluate(() => document.activeElement === document.querySelector("body *:is(a, button, input, textarea, select)"))).toBe(true);
    const reached: string[] = [];
    for (let i = 0; i < 8; i++) {
      await page.keyboard.press("Tab");
      reached.push((await page.evaluate(() => document.activeElement?.textContent)) ?? "");
    }
    for (const section of ["Overview", "Chat", "Memory", "Usage", "Account", "Theme", "Sign out"]) expect(reached).toContain(section);
    await checkScreen("chat", () => page.getByLabel("Message").waitFor());
    // The placeholder fits the phone's message box.
    await page.setViewportSize({ width: 360, height: 800 });
    expect(await page.getByLabel("Message").evaluate((el: HTMLTextAreaElement) => el.scrollWidth <= el.clientWidth)).toBe(true);
    await page.setViewportSize({ width: 1280, height: 860 });
  });

  it("keeps a long conversation title and its waiting badge within a phone's width", async () => {
    // The test Worker's wipe_cache always asks first: the conversation waits.
    await say("Please wipe the cache");
    await page.getByRole("group", { name: "Approve wipe_cache" }).waitFor();
    const [current] = (await api<{ sessions: { id: string }[] }>("/v1/sessions")).sessions;
    await api(`/v1/sessions/${current?.id}`, {
      method: "PATCH",
      body: JSON.stringify({ title: "A very long conversation title about planning the summer holidays" }),
    });
    await page.reload();
    await page.locator(".sessions .badge", { hasText: "waiting" }).first().waitFor();
    await checkScreen("chat-waiting", () => page.locator(".sessions .badge").first().waitFor());
  });

  it("speaks the erase receipt in the memory screens' words, never table names", async () => {
    await page.getByRole("link", { name: "Account", exact: true }).click();
    await checkScreen("account", () => page.getByLabel("Confirmation").waitFor());
    await page.getByLabel("Confirmation").fill("erase everything");
    await page.getByRole("button", { name: "Erase everything" }).click();
    await page.getByRole("heading", { name: /Receipt/ }).waitFor();
    const names = await page.locator(".receipt th").allTextContents();
    expect(names).toContain("working-memory history");
    expect(names.filter((n) => /_/.test(n))).toEqual([]);
    expect((await page.locator(".danger-zone li").allTextContents()).filter((n) => /_/.test(n))).toEqual([]);
    await checkScreen("erase-receipt", () => page.locator(".receipt").waitFor());
  });

  it("renders the CLI's HTML dashboard within a phone's width, passing axe", async () => {
    const long = "retry webhook deliveries with exponential backoff and jitter, and log every attempt with its status";
    const html = renderDashboard(
      {
        byType: [["lesson", 12]],
        bySignal: [["HIGH", 7]],
        recallsPerDay: [{ day: "2026-11-27", count: 3 }],
        topRecalled: [{ id: "les_0123456789abcdefghijklmnopqrstuvwxyz", title: long, recalls: 4 }],
        projects: [{ project: "/home/someone/src/a-project-with-a-rather-long-directory-name", lessons: 12 }],
        sync: { transcripts: 5, pending: 0, failed: 0, lastSyncedAt: "2026-11-27T10:00:00.000Z" },
      },
      { server: "http://127.0.0.1:8787", generatedAt: "2026-11-28T10:00:00.000Z" },
    );
    // A page of its own: the app's Content-Security-Policy (no inline style) must not apply to it.
    page = await browser.context.newPage();
    await page.setContent(html);
    await checkScreen("cli-dashboard", () => page.getByRole("heading", { name: "engram" }).waitFor());
  });

  it("made no request outside its origin and logged no unexpected console errors", () => {
    expect(browser.foreign).toEqual([]);
    // Deliberate refusals: the wrong key (401) and the message too long to send (413).
    const expected = [/HTTP 401 GET .*\/v1\/overview$/, /HTTP 413 POST .*\/v1\/chat$/, /status of (401|413)/];
    expect(browser.errors.filter((e) => !expected.some((re) => re.test(e)))).toEqual([]);
  });
});
