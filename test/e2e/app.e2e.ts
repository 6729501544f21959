/**
 * The web app in a real browser against `wrangler dev` (offline model, fresh local D1): what a user does,
 * start to finish. One browser and one server for the file; the scenarios run in order on one account.
 */
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Browser, openBrowser } from "./browser";
import { createUser, type DevServer, startDevServer } from "./server";

let server: DevServer;
let browser: Browser;
let page: Page;
let key: string;
/** The revision of the working-memory edit that the restore case puts back. */
let portoRev = 0;

const api = async <T>(path: string): Promise<T> => {
  const res = await fetch(`${server.origin}${path}`, { headers: { authorization: `Bearer ${key}` } });
  return (await res.json()) as T;
};

/**
 * Imports one statement after another, each said on its date, under one key (the attribute they state, as the caller
 * names it): the later one replaces the earlier. Their ids, in order.
 */
async function statedInOrder(statements: [text: string, date: string][], factKey = "user.statement"): Promise<string[]> {
  const ids: string[] = [];
  for (const [text, date] of statements) {
    const res = await fetch(`${server.origin}/v1/memory/facts`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ facts: [{ text, key: factKey, metadata: { date } }] }),
    });
    expect(res.status).toBe(201);
    const body = (await res.json()) as { facts: { id: string }[]; superseded: string[] };
    ids.push(body.facts[0]?.id ?? "");
    if (ids.length > 1) expect(body.superseded).toEqual([ids.at(-2)]);
  }
  return ids;
}

/** Waits until the conversation is not streaming (the turn ended: reply, prompt or error). */
const turnEnded = () => page.waitForFunction(() => document.querySelector(".log")?.getAttribute("aria-busy") === "false");

async function say(text: string): Promise<void> {
  await page.getByRole("link", { name: "Chat", exact: true }).click();
  await page.getByLabel("Message").fill(text);
  await page.getByLabel("Message").press("Enter");
  await page.locator(".msg.user", { hasText: text }).waitFor();
  await turnEnded();
}

const lastAnswer = () => page.locator(".msg.assistant").last();

beforeAll(async () => {
  server = await startDevServer();
  key = await createUser(server.origin, "e2e@example.com");
  browser = await openBrowser(server.origin);
  page = browser.page;
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe("engram web app", () => {
  it("is served with a strict Content-Security-Policy", async () => {
    const res = await fetch(`${server.origin}/`);
    expect(res.status).toBe(200);
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
  });

  it("refuses a wrong key, then signs in with the right one", async () => {
    await page.goto(server.origin);
    await page.getByLabel("API key").fill("not-a-key");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("alert").filter({ hasText: "That API key was not accepted" }).waitFor();
    // Keyboard only: the key field has focus; Enter submits.
    await page.getByLabel("API key").fill(key);
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "What engram knows about you" }).waitFor();
    expect(await page.locator('[data-count="sessions"] dd').textContent()).toBe("0");
    await browser.shot("01-overview");
  });

  it("streams a reply and shows the memory it saved", async () => {
    await say("Remember that I love green tea");
    await lastAnswer().getByText("Saved to MEMORY").waitFor();
    await lastAnswer().getByText("I've saved that to my memory.").waitFor();
    await browser.shot("02-chat-memory-saved");
  });

  it("shows what the answer was shown: the exact injected text", async () => {
    await lastAnswer().getByRole("button", { name: "What it was shown" }).click();
    await lastAnswer().locator(".system-text").first().waitFor();
    expect(await lastAnswer().locator(".system-text").first().textContent()).not.toBe("");
  });

  it("finds the saved memory in the inspector", async () => {
    await page.getByRole("link", { name: "Memory", exact: true }).click();
    await page.getByRole("link", { name: "MEMORY & review" }).click();
    await page.locator(".items li", { hasText: "green tea" }).waitFor();
    await browser.shot("03-inspector-memory");
  });

  it("edits SOUL and rolls it back", async () => {
    await page.getByRole("link", { name: "SOUL", exact: true }).click();
    const text = page.getByLabel("SOUL text");
    await text.fill("Answer briefly.");
    await page.getByRole("button", { name: "Save SOUL" }).click();
    await page.getByRole("status").filter({ hasText: "Saved SOUL v1" }).waitFor();
    await text.fill("Answer at great length.");
    await page.getByRole("button", { name: "Save SOUL" }).click();
    await page.getByRole("status").filter({ hasText: "Saved SOUL v2" }).waitFor();
    await page.getByRole("button", { name: "Diff version 1 with current" }).click();
    await page.locator(".diff .add", { hasText: "great length" }).waitFor();
    await page.getByRole("button", { name: "Roll back to version 1" }).click();
    await page.getByRole("status").filter({ hasText: "Rolled back to v1 (now v3)" }).waitFor();
    expect(await text.inputValue()).toBe("Answer briefly.");
    const soul = await api<{ content: string; version: number }>("/v1/brain/soul");
    expect(soul).toMatchObject({ content: "Answer briefly.", version: 3 });
    await browser.shot("04-soul-rolled-back");
  });

  it("asks before a tool that needs approval, and runs it once allowed", async () => {
    await say("Please wipe the cache");
    const prompt = page.getByRole("group", { name: "Approve wipe_cache" });
    await prompt.waitFor();
    await browser.shot("05-approval-prompt");
    // A new message while the tool waits is refused; the page says why and what to do.
    await page.getByLabel("Message").fill("hello?");
    await page.getByLabel("Message").press("Enter");
    await lastAnswer().getByRole("alert").filter({ hasText: "waiting for a tool answer" }).waitFor();
    await prompt.getByRole("button", { name: "Always allow" }).click();
    await page.locator(".msg.assistant", { hasText: "wipe_cache says: wiped" }).waitFor();
    await turnEnded();
  });

  it("runs a client tool in the browser and resumes the turn", async () => {
    await say("Where am I?");
    const prompt = page.getByRole("group", { name: "Approve get_location" });
    await prompt.getByRole("button", { name: "Allow", exact: true }).click();
    await lastAnswer().getByText("48.8584").waitFor();
    await turnEnded();
    await browser.shot("06-client-tool");
  });

  it("offers to send the answer again when the model fails after it, and the turn goes on", async () => {
    await say("Where am I right now?");
    const prompt = page.getByRole("group", { name: "Approve get_location" }).last();
    // The first answer meets a model failure (as the server streams it); the next one goes through.
    const bodies: string[] = [];
    await page.route("**/v1/sessions/*/tool_result", async (route) => {
      bodies.push(route.request().postData() ?? "");
      if (bodies.length > 1) return route.fallback();
      const failure = { code: "model_overloaded", message: "the model is overloaded; the answer to get_location is kept: send it again" };
      return route.fulfill({ status: 200, contentType: "text/event-stream", body: `event: error\ndata: ${JSON.stringify(failure)}\n\n` });
    });
    await prompt.getByRole("button", { name: "Allow", exact: true }).click();
    await lastAnswer().getByRole("alert").filter({ hasText: "overloaded" }).waitFor();
    await lastAnswer().getByRole("button", { name: "Send the answer again" }).click();
    await lastAnswer().getByText("48.8584").waitFor();
    await turnEnded();
    await page.unroute("**/v1/sessions/*/tool_result");
    // What was sent again is the same answer.
    expect(bodies).toHaveLength(2);
    expect(bodies[1]).toBe(bodies[0]);
    expect(await lastAnswer().getByRole("button", { name: "Send the answer again" }).count()).toBe(0);
  });

  it("stops a turn mid-stream: the reply stops, the page says so, and the conversation carries on", async () => {
    await page.getByRole("link", { name: "Chat", exact: true }).click();
    await page.getByLabel("Message").fill("Start a filibuster");
    await page.getByLabel("Message").press("Enter");
    // The test Worker's `filibuster` tool holds the turn open until it is stopped: the reply is still streaming.
    await lastAnswer().getByText("Talking until stopped").waitFor();
    const stopped = page.locator(".msg.assistant").nth((await page.locator(".msg.assistant").count()) - 1);
    const stop = page.getByRole("button", { name: "Stop", exact: true });
    expect(await stop.isEnabled()).toBe(true);
    expect(await page.getByRole("button", { name: "Send", exact: true }).isDisabled()).toBe(true);
    await browser.shot("12-streaming");
    // Keyboard: focus Stop and press Enter.
    await stop.focus();
    await page.keyboard.press("Enter");
    await stopped.getByText("Stopped. What was written so far is kept.").waitFor();
    await turnEnded();
    expect(await stop.isDisabled()).toBe(true);
    // Focus is back in the message box: the next message can be typed straight away.
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("message");
    await browser.shot("13-stopped");

    await page.keyboard.type("Are you still there?");
    await page.keyboard.press("Enter");
    await page.locator(".msg.user", { hasText: "Are you still there?" }).waitFor();
    await turnEnded();
    await lastAnswer().getByText('You said: "Are you still there?"').waitFor();
    // Nothing reached the stopped answer after Stop: not the tool's result, not a reply to it.
    expect(await stopped.locator(".text").allTextContents()).toEqual(["Let me use filibuster."]);
    expect(await stopped.textContent()).not.toContain("filibuster says");

    // History keeps what was written before Stop (the words, the call and its result) and no answer to it.
    const [current] = (await api<{ sessions: { id: string }[] }>("/v1/sessions")).sessions;
    type Row = { role: string; content: string | { type: string; text?: string; name?: string }[] };
    const { messages } = await api<{ messages: Row[] }>(`/v1/sessions/${current?.id}`);
    const blocks = (m: Row | undefined) => (typeof m?.content === "string" ? [{ type: "text", text: m.content }] : (m?.content ?? []));
    const at = messages.findIndex((m) => blocks(m).some((b) => b.text === "Start a filibuster"));
    expect(at).toBeGreaterThanOrEqual(0);
    expect(messages.slice(at + 1, at + 4).map((m) => [m.role, blocks(m).map((b) => b.name ?? b.type)])).toEqual([
      ["assistant", ["text", "filibuster"]],
      ["user", ["tool_result"]],
      ["user", ["text", "text"]],
    ]);
    expect(blocks(messages[at + 1])[0]?.text).toBe("Let me use filibuster.");

    // Reopened from the list, the conversation shows the stopped turn as it was kept.
    await page
      .locator(".sessions li")
      .first()
      .getByRole("button", { name: /^Open conversation/ })
      .click();
    // The tool line reads as it did live (its reason), not "Used filibuster".
    await page.locator(".msg.assistant", { hasText: "Let me use filibuster." }).getByText("Talking until stopped (filibuster)").waitFor();
    // The user's bubbles hold their words only, not the context block stored ahead of each message.
    const bubbles = await page.locator(".msg.user").allTextContents();
    expect(bubbles).toContain("Start a filibuster");
    expect(bubbles.filter((t) => t.includes("turn_context"))).toEqual([]);
  });

  it("renames a conversation", async () => {
    const first = page.locator(".sessions li").first();
    await first.getByRole("button", { name: /^Rename / }).click();
    await page.getByLabel("New title").fill("Tea and travel");
    await page.getByLabel("New title").press("Enter");
    const renamed = page.getByRole("button", { name: "Open conversation Tea and travel" });
    await renamed.waitFor();
    // The list shows the whole of a short title, not its first few letters and an ellipsis.
    expect(await renamed.evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
  });

  it("deletes a conversation after asking", async () => {
    await page.getByRole("button", { name: "Delete Tea and travel" }).click();
    await page.getByRole("button", { name: "Yes, delete" }).click();
    await page.getByText("No conversations yet.").waitFor();
    expect((await api<{ sessions: unknown[] }>("/v1/sessions")).sessions).toEqual([]);
  });

  it("forgets from the chat only once allowed, after showing what would go", async () => {
    const ids = await statedInOrder(
      [
        ["My favourite tree is the oak", "2023-01-01"],
        ["My favourite tree is the birch", "2024-01-01"],
      ],
      "user.favourite_tree",
    );
    await say("Please forget my favourite tree");
    const prompt = page.getByRole("group", { name: "Approve forget_memory" });
    // The model names ids; the prompt shows the user the fact itself and what it had replaced.
    await prompt
      .getByRole("list", { name: "What would be forgotten" })
      .getByText("My favourite tree is the birch (and 1 earlier statement it replaced)")
      .waitFor();
    expect(await prompt.getByRole("button", { name: "Always allow" }).count()).toBe(0);
    await browser.shot("07-forget-approval");
    expect((await fetch(`${server.origin}/v1/memory/facts/${ids[1]}`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
    await prompt.getByRole("button", { name: "Allow", exact: true }).click();
    await page.locator(".msg.assistant", { hasText: "Done. Forgot 1 fact" }).waitFor();
    await turnEnded();
    for (const id of ids) {
      const res = await fetch(`${server.origin}/v1/memory/facts/${id}`, { headers: { authorization: `Bearer ${key}` } });
      expect(res.status).toBe(404);
    }
  });

  it("forgets a fact learnt from chat", async () => {
    await say("I live in Lisbon");
    // Facts are consolidated from observations in the background (the queue): wait until one exists.
    await expect
      .poll(async () => (await api<{ facts: { text: string }[] }>("/v1/memory/facts")).facts.some((f) => /lisbon/i.test(f.text)), {
        timeout: 60_000,
        interval: 500,
      })
      .toBe(true);
    await page.getByRole("link", { name: "Memory", exact: true }).click();
    await page.getByRole("link", { name: "Facts" }).click();
    await page.getByLabel("Search facts").fill("where do I live");
    await page.getByRole("button", { name: "Search", exact: true }).click();
    // The first listing also shows Lisbon: wait for the search answer, or the row is replaced under the click.
    await page.locator('section[aria-label="Facts"] [aria-busy="false"]').waitFor();
    const fact = page.locator(".items li", { hasText: /Lisbon/i }).first();
    await fact.waitFor();
    await browser.shot("07-facts");
    // Pin the row by its id: more than one fact may mention Lisbon, and `first()` re-resolves on every use.
    const id = await fact.getAttribute("data-id");
    await page
      .locator(`.items li[data-id="${id}"]`)
      .getByRole("button", { name: /^Forget fact/ })
      .click();
    await page.locator(`.items li[data-id="${id}"]`).waitFor({ state: "detached" });
    const res = await fetch(`${server.origin}/v1/memory/facts/${id}`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(404);
  });

  it("says when forgetting a fact also forgot the earlier statement it had replaced", async () => {
    // The second statement replaces the first: the same attribute, stated later.
    const ids = await statedInOrder(
      [
        ["My favourite board game is Catan", "2023-01-01"],
        ["My favourite board game is Azul", "2024-01-01"],
      ],
      "user.favourite_board_game",
    );
    await page.getByLabel("Search facts").fill("favourite board game");
    await page.getByRole("button", { name: "Search", exact: true }).click();
    const azul = page.locator(`.items li[data-id="${ids[1]}"]`);
    await azul.getByRole("button", { name: /^Forget fact/ }).click();
    await page.getByRole("status").filter({ hasText: "Forgotten, with 1 earlier statement it had replaced." }).waitFor();
    await azul.waitFor({ state: "detached" });
    for (const id of ids) {
      const res = await fetch(`${server.origin}/v1/memory/facts/${id}`, { headers: { authorization: `Bearer ${key}` } });
      expect(res.status).toBe(404);
    }
  });

  it("shows which memory an answer used, opens that fact from it, and shows it again after a reload", async () => {
    const [lyon] = await statedInOrder([["I live in Lyon by the river Saône", "2025-01-01"]], "user.home_city");
    await say("where do I live?");
    // The offline model cites the recalled fact the question shares words with, as Claude cites a search result.
    const used = lastAnswer().locator("details.used-memory");
    await used.getByText(/^Used memory \(\d+ facts?\)$/).click();
    const link = used.getByRole("link", { name: "I live in Lyon by the river Saône" });
    expect(await link.getAttribute("href")).toBe(`#memory/facts/${lyon}`);
    await browser.shot("22-used-memory");
    // What it was shown lists the recalled fact as the search result it was given.
    await lastAnswer().getByRole("button", { name: "What it was shown" }).click();
    await lastAnswer().getByText(`engram:fact:${lyon}`).waitFor();

    // Read back from the stored history: the reply kept its citations.
    await page.locator(".sessions li.current .session-open").click();
    const reloaded = lastAnswer().locator("details.used-memory");
    await reloaded.getByText(/^Used memory/).click();
    await reloaded.getByRole("link", { name: "I live in Lyon by the river Saône" }).waitFor();

    await page.setViewportSize({ width: 390, height: 844 });
    await reloaded.scrollIntoViewIfNeeded();
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
    await browser.shot("23-phone-used-memory");
    await page.setViewportSize({ width: 1280, height: 800 });

    await reloaded.getByRole("link", { name: "I live in Lyon by the river Saône" }).click();
    const focused = page.locator(".fact-focus");
    await focused.getByRole("heading", { name: "The fact an answer used" }).waitFor();
    await focused.locator(`li[data-id="${lyon}"]`).waitFor();
    await browser.shot("24-fact-from-answer");
    // Forgotten from there, the fact is gone and the panel says so; later answers do not name it.
    await focused.getByRole("button", { name: /^Forget fact: I live in Lyon/ }).click();
    await focused.getByText("That fact is no longer in memory: it was forgotten.").waitFor();
    expect((await fetch(`${server.origin}/v1/memory/facts/${lyon}`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(404);
  });

  it("shows observations with their status, working memory and the scaffold", async () => {
    await page.getByRole("link", { name: "Observations" }).click();
    await page
      .locator("tr", { hasText: /Lisbon/i })
      .locator(".status-processed")
      .first()
      .waitFor();
    await page.getByRole("link", { name: "Working memory & scaffold" }).click();
    await page.getByRole("heading", { name: "Scaffold" }).waitFor();
    await page.locator(".tree", { hasText: "Lisbon" }).waitFor();
  });

  it("edits the working memory and shows the edit after a reload", async () => {
    // Nothing left to consolidate: a run committing after the edit would rewrite the narrative under the test.
    await expect.poll(async () => (await api<{ pending_events: number }>("/v1/memory/working")).pending_events, { timeout: 60_000, interval: 500 }).toBe(0);
    const panel = page.getByRole("region", { name: "Working memory and scaffold" });
    await panel.getByRole("button", { name: "Edit working memory" }).click();
    await panel.getByLabel("Working memory text").fill("User is planning a trip to Porto in March.");
    await panel.getByRole("button", { name: "Save", exact: true }).click();
    await panel.getByRole("status").filter({ hasText: "Saved working memory." }).waitFor();
    await panel.locator(".system-text", { hasText: "trip to Porto" }).waitFor();
    expect((await api<{ working_memory: string }>("/v1/memory/working")).working_memory).toBe("User is planning a trip to Porto in March.");
    portoRev = (await api<{ runs: { rev: number; kind: string }[] }>("/v1/memory/runs?limit=1")).runs[0]?.rev ?? 0;
    await page.reload();
    await page.getByRole("region", { name: "Working memory and scaffold" }).locator(".system-text").waitFor();
    expect(await panel.locator(".system-text").textContent()).toBe("User is planning a trip to Porto in March.");
    await panel.getByRole("list", { name: "Memory revisions" }).getByText(`Revision ${portoRev} · edit`).waitFor();
    await browser.shot("14-working-memory-edited");
  });

  it("refuses a narrative over 500 words in words, keeping what was typed", async () => {
    const panel = page.getByRole("region", { name: "Working memory and scaffold" });
    const long = Array.from({ length: 501 }, (_, i) => `word${i}`).join(" ");
    await panel.getByRole("button", { name: "Edit working memory" }).click();
    await panel.getByLabel("Working memory text").fill(long);
    await panel.getByRole("button", { name: "Save", exact: true }).click();
    await panel.getByRole("alert").filter({ hasText: "Not saved: working_memory is 501 words; at most 500. Shorten it and save again." }).waitFor();
    expect(await panel.getByLabel("Working memory text").inputValue()).toBe(long);
    await browser.shot("15-working-memory-too-long");
    await panel.getByRole("button", { name: "Cancel" }).click();
    expect(await panel.locator(".system-text").textContent()).toBe("User is planning a trip to Porto in March.");
    expect((await api<{ working_memory: string }>("/v1/memory/working")).working_memory).toBe("User is planning a trip to Porto in March.");
  });

  it("says so when a save clashes with a consolidation, keeping the text, and saves it on the next try", async () => {
    // A consolidation committing between the server's read and write cannot be timed from a browser: the
    // server's answer for it (409 conflict, as src/memory/edit.ts words it) is played to the page once.
    const clash = { error: { code: "conflict", message: "memory is being consolidated right now; try again in a moment", request_id: "req_e2e" } };
    await page.route("**/v1/memory/working", (route) => (route.request().method() === "PUT" ? route.fulfill({ status: 409, json: clash }) : route.fallback()), {
      times: 1,
    });
    const panel = page.getByRole("region", { name: "Working memory and scaffold" });
    await panel.getByRole("button", { name: "Edit working memory" }).click();
    await panel.getByLabel("Working memory text").fill("User is planning a trip to Porto in April.");
    await panel.getByRole("button", { name: "Save", exact: true }).click();
    await panel
      .getByRole("alert")
      .filter({ hasText: "Not saved: memory is being consolidated right now; try again in a moment. What you typed is still here; save it again." })
      .waitFor();
    expect(await panel.getByLabel("Working memory text").inputValue()).toBe("User is planning a trip to Porto in April.");
    await panel.getByRole("button", { name: "Save", exact: true }).click();
    await panel.locator(".system-text", { hasText: "Porto in April" }).waitFor();
    expect((await api<{ working_memory: string }>("/v1/memory/working")).working_memory).toBe("User is planning a trip to Porto in April.");
  });

  it("adds a scaffold key, changes its value and removes it", async () => {
    type Profile = { scaffold: Record<string, unknown>; confidence: Record<string, { by?: string }> };
    const panel = page.getByRole("region", { name: "Working memory and scaffold" });
    await panel.getByLabel("New scaffold key").fill("Pets");
    await panel.getByLabel("Value of the new key").fill('{"cat": "Miso", "age": 3}');
    await panel.getByRole("button", { name: "Add key" }).click();
    const row = panel.locator('li[data-key="Pets"]');
    await row.getByText("Miso").waitFor();
    // Keyboard: focus lands on the new key's row, not back at the top of the page.
    const focused = () => page.evaluate(() => document.activeElement?.getAttribute("aria-label"));
    expect(await focused()).toBe("Edit scaffold key Pets");
    let profile = await api<Profile>("/v1/memory/scaffold");
    expect(profile.scaffold.Pets).toEqual({ cat: "Miso", age: 3 });
    expect(profile.confidence.Pets?.by).toBe("user");
    // Text that is not JSON is stored as a string.
    await row.getByRole("button", { name: "Edit scaffold key Pets" }).click();
    await row.getByLabel("Value of Pets").fill("a cat called Miso");
    await row.getByRole("button", { name: "Save Pets" }).click();
    await row.getByText("a cat called Miso").waitFor();
    expect((await api<Profile>("/v1/memory/scaffold")).scaffold.Pets).toBe("a cat called Miso");
    await browser.shot("16-scaffold-key-set");
    await row.getByRole("button", { name: "Remove scaffold key Pets" }).click();
    await row.getByRole("button", { name: "Yes, remove" }).click();
    await row.waitFor({ state: "detached" });
    await panel.getByRole("status").filter({ hasText: "Removed Pets." }).waitFor();
    expect(await focused()).toBe("New scaffold key");
    profile = await api<Profile>("/v1/memory/scaffold");
    expect(Object.keys(profile.scaffold)).not.toContain("Pets");
    // Lisbon, which consolidation put there, is still shown.
    await panel.locator(".tree", { hasText: "Lisbon" }).waitFor();
  });

  it("restores an earlier revision of working memory and the scaffold after asking", async () => {
    type Profile = { scaffold: Record<string, unknown> };
    const panel = page.getByRole("region", { name: "Working memory and scaffold" });
    // Two changes after the Porto revision: the narrative (in the panel) and a scaffold key (through the API).
    await panel.getByRole("button", { name: "Edit working memory" }).click();
    await panel.getByLabel("Working memory text").fill("User has given up on travel.");
    await panel.getByRole("button", { name: "Save", exact: true }).click();
    await panel.locator(".system-text", { hasText: "given up on travel" }).waitFor();
    const patched = await fetch(`${server.origin}/v1/memory/scaffold`, {
      method: "PATCH",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ scaffold: { Mood: "restless" } }),
    });
    expect(patched.status).toBe(200);
    const history = panel.getByRole("list", { name: "Memory revisions" });
    await history.getByRole("button", { name: `Restore revision ${portoRev}`, exact: true }).click();
    // Nothing happens before the confirmation.
    await history.getByRole("button", { name: "Yes, restore" }).waitFor();
    expect((await api<{ working_memory: string }>("/v1/memory/working")).working_memory).toBe("User has given up on travel.");
    await history.getByRole("button", { name: "Yes, restore" }).click();
    await panel
      .getByRole("status")
      .filter({ hasText: `Restored revision ${portoRev} (now revision` })
      .waitFor();
    expect(await panel.locator(".system-text").textContent()).toBe("User is planning a trip to Porto in March.");
    expect((await api<{ working_memory: string }>("/v1/memory/working")).working_memory).toBe("User is planning a trip to Porto in March.");
    const profile = await api<Profile>("/v1/memory/scaffold");
    expect(Object.keys(profile.scaffold)).not.toContain("Mood");
    expect(profile.scaffold.Location).toMatch(/Lisbon/);
    expect(await panel.locator('li[data-key="Mood"]').count()).toBe(0);
    await history.getByText(`restore · `).first().waitFor();
    await history.getByText(`restored revision ${portoRev}`).waitFor();
    await browser.shot("17-memory-restored");
  });

  it("offers no Restore on the newest revision, and shows older revisions a page at a time", async () => {
    const panel = page.getByRole("region", { name: "Working memory and scaffold" });
    // Enough revisions (scaffold changes through the API, a key set and removed again) to push Porto's off the first page of 20.
    for (let i = 0; i < 22; i++) {
      const res = await fetch(`${server.origin}/v1/memory/scaffold`, {
        method: "PATCH",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ scaffold: { Counter: i % 2 ? null : i } }),
      });
      expect(res.status).toBe(200);
    }
    const newest = (await api<{ runs: { rev: number }[] }>("/v1/memory/runs?limit=1")).runs[0]?.rev ?? 0;
    expect(newest - portoRev).toBeGreaterThan(20);
    const total = (await api<{ runs: unknown[] }>("/v1/memory/runs?limit=200")).runs.length;
    await page.reload();
    const history = panel.getByRole("list", { name: "Memory revisions" });
    await history.locator(`li[data-rev="${newest}"]`).waitFor();
    expect(await history.locator("li").count()).toBe(20);
    // The newest revision is the memory as it is: no Restore there; the one before it has one.
    const first = history.locator(`li[data-rev="${newest}"]`);
    expect(await first.textContent()).toContain("(current)");
    expect(await first.getByRole("button").count()).toBe(0);
    await history.getByRole("button", { name: `Restore revision ${newest - 1}`, exact: true }).waitFor();
    expect(await history.locator(`li[data-rev="${portoRev}"]`).count()).toBe(0);
    await panel.getByRole("button", { name: "Show older revisions" }).click();
    await history.getByRole("button", { name: `Restore revision ${portoRev}`, exact: true }).waitFor();
    expect(await history.locator("li").count()).toBe(Math.min(40, total));
    // Keyboard: focus moves to the first revision added, just below the 20 already shown.
    expect(await page.evaluate(() => document.activeElement?.getAttribute("data-rev"))).toBe(String(newest - 20));
    await browser.shot("19-memory-history-older");
  });

  it("forgets earlier versions after asking: no Restore is left anywhere in History, and the memory stays", async () => {
    type Runs = { runs: { rev: number; restorable: boolean }[] };
    const panel = page.getByRole("region", { name: "Working memory and scaffold" });
    const history = panel.getByRole("list", { name: "Memory revisions" });
    const runs = (await api<Runs>("/v1/memory/runs?limit=200")).runs;
    // Every copy but the newest's (the memory as it is now) is forgotten.
    const earlier = runs.filter((r) => r.restorable).length - 1;
    expect(earlier).toBeGreaterThan(20);
    const working = (await api<{ working_memory: string }>("/v1/memory/working")).working_memory;
    await panel.getByRole("button", { name: "Forget earlier versions" }).click();
    await panel.getByText("Afterwards nothing can be restored; the current memory stays as it is").waitFor();
    // Nothing happens before the confirmation.
    expect((await api<Runs>("/v1/memory/runs?limit=200")).runs.filter((r) => r.restorable)).toHaveLength(earlier + 1);
    await browser.shot("20-memory-forget-asks");
    await panel.getByRole("button", { name: "Yes, forget" }).click();
    await panel
      .getByRole("status")
      .filter({ hasText: `Forgot ${earlier} earlier versions.` })
      .waitFor();
    expect(await history.getByRole("button", { name: /^Restore revision/ }).count()).toBe(0);
    await panel.getByRole("button", { name: "Show older revisions" }).click();
    await history.locator(`li[data-rev="${portoRev}"]`).waitFor();
    expect(await history.getByRole("button", { name: /^Restore revision/ }).count()).toBe(0);
    expect(await history.locator(`li[data-rev="${portoRev}"]`).textContent()).toContain("(no copy kept)");
    expect((await api<{ working_memory: string }>("/v1/memory/working")).working_memory).toBe(working);
    const restore = await fetch(`${server.origin}/v1/memory/runs/${portoRev}/restore`, { method: "POST", headers: { authorization: `Bearer ${key}` } });
    expect(restore.status).toBe(409);
    await browser.shot("21-memory-versions-forgotten");
  });

  it("holds a change for review in review mode until it is approved", async () => {
    await page.getByRole("link", { name: "MEMORY & review" }).click();
    await page.getByLabel(/Review mode/).check();
    await expect.poll(async () => (await api<{ review_mode: boolean }>("/v1/brain/settings")).review_mode).toBe(true);
    await say("Remember that I play the cello");
    await lastAnswer()
      .getByText(/Proposed a change to MEMORY/)
      .waitFor();
    await page.getByRole("link", { name: "Memory", exact: true }).click();
    await page.getByRole("link", { name: "MEMORY & review" }).click();
    await page.getByRole("button", { name: "Approve proposal to memory" }).click();
    await page.locator(".items li", { hasText: "cello" }).first().waitFor();
    await page.getByText("No proposals waiting.").waitFor();
  });

  it("creates a project from chat, shows why in the Projects panel, and undoes it", async () => {
    await say("I'm starting a podcast about true crime");
    await turnEnded();
    await page.getByRole("link", { name: "Memory", exact: true }).click();
    await page.getByRole("link", { name: "Projects", exact: true }).click();
    const projects = page.getByRole("list", { name: "Your projects" });
    await projects.locator("li", { hasText: /podcast/i }).waitFor();
    const action = page
      .getByRole("list", { name: "Project activity" })
      .locator("li", { hasText: /podcast/i })
      .first();
    await action.getByText(/Reason: .*starting a podcast/).waitFor();
    await browser.shot("10-projects-activity");
    // Keyboard: focus the Undo button and press Enter.
    await action.getByRole("button", { name: /^Undo/ }).focus();
    await page.keyboard.press("Enter");
    await page.getByText("No projects yet.").waitFor();
    expect((await api<{ projects: unknown[] }>("/v1/projects?include_archived=true")).projects).toEqual([]);
  });

  it("finds a lesson by search in the Lessons panel, unlearns and restores it", async () => {
    const res = await fetch(`${server.origin}/v1/lessons`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({
        title: "Apply migrations before tests",
        content: "Run the D1 migrations before the test suite, or every query fails.",
        type: "lesson",
        signal: "HIGH",
      }),
    });
    expect(res.status).toBe(201);
    const { lesson } = (await res.json()) as { lesson: { id: string } };
    // The search answer is held back until the lesson has been unlearnt from the first listing: a search sent
    // before a change and answered after it must not bring the old state back.
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route(/\/v1\/lessons\?.*q=migrations/, async (route) => {
      const response = await route.fetch();
      await held;
      await route.fulfill({ response });
    });
    await page.getByRole("link", { name: "Lessons", exact: true }).click();
    const row = page.locator(`.items li[data-id="${lesson.id}"]`);
    await row.getByText(/lesson · HIGH signal/).waitFor();
    await page.getByLabel("Search lessons").fill("migrations");
    await page.getByLabel("Search lessons").press("Enter");
    await row.getByRole("button", { name: /^Unlearn lesson/ }).click();
    await row.getByRole("button", { name: /^Restore lesson/ }).waitFor();
    release();
    await page.locator('section[aria-label="Lessons"] [aria-busy="false"]').waitFor();
    await page.unroute(/\/v1\/lessons\?.*q=migrations/);
    await row.getByRole("button", { name: /^Restore lesson/ }).waitFor();
    expect((await api<{ lesson: { unlearned: boolean } }>(`/v1/lessons/${lesson.id}`)).lesson.unlearned).toBe(true);
    await browser.shot("11-lessons-unlearned");
    await row.getByRole("button", { name: /^Restore lesson/ }).click();
    await row.getByRole("button", { name: /^Unlearn lesson/ }).waitFor();
    expect((await api<{ lesson: { unlearned: boolean } }>(`/v1/lessons/${lesson.id}`)).lesson.unlearned).toBe(false);
  });

  it("shows usage per day as a chart", async () => {
    await page.getByRole("link", { name: "Usage", exact: true }).click();
    await page.getByRole("img", { name: /Estimated cost per day/ }).waitFor();
  });

  it("is readable at phone width in dark mode", async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.emulateMedia({ colorScheme: "dark" });
    await page.getByRole("link", { name: "Chat", exact: true }).click();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await browser.shot("08-phone-dark");
    // The panel with the most controls side by side: scaffold rows with Edit and Remove, the revision list.
    await page.getByRole("link", { name: "Memory", exact: true }).click();
    await page.getByRole("link", { name: "Working memory & scaffold" }).click();
    await page.getByRole("list", { name: "Memory revisions" }).waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
    await browser.shot("18-phone-working-memory");
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.emulateMedia({ colorScheme: "light" });
  });

  it("erases everything after a typed confirmation and shows the receipt", async () => {
    await page.getByRole("link", { name: "Account", exact: true }).click();
    const erase = page.getByRole("button", { name: "Erase everything" });
    expect(await erase.isDisabled()).toBe(true);
    await page.getByLabel("Confirmation").fill("erase everything");
    await erase.click();
    await page.getByRole("heading", { name: /Erased at .* Receipt/ }).waitFor();
    await browser.shot("09-erase-receipt");
    const overview = await api<{ counts: Record<string, number> }>("/v1/overview");
    expect(overview.counts).toMatchObject({ sessions: 0, memory_entries: 0, facts: 0 });
    // The erase shows in History: the revisions before it are gone, and it is the memory as it is now.
    await page.getByRole("link", { name: "Memory", exact: true }).click();
    await page.getByRole("link", { name: "Working memory & scaffold" }).click();
    const history = page.getByRole("list", { name: "Memory revisions" });
    await history.getByText(/· erase · .* · everything erased \(current\)$/).waitFor();
    expect(await history.locator("li").count()).toBe(1);
  });

  it("signs out and forgets the key", async () => {
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByLabel("API key").waitFor();
    expect(await page.evaluate(() => [sessionStorage.length, localStorage.getItem("engram.key")])).toEqual([0, null]);
  });

  it("signs out by itself when its key is revoked elsewhere", async () => {
    await page.getByLabel("API key").fill(key);
    await page.getByLabel("Remember me on this device").check();
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "What engram knows about you" }).waitFor();
    const rotated = await fetch(`${server.origin}/v1/keys/rotate`, { method: "POST", headers: { authorization: `Bearer ${key}` } });
    expect(rotated.status).toBe(201);
    await page.getByRole("link", { name: "Usage", exact: true }).click();
    await page.getByRole("alert").filter({ hasText: "no longer accepted" }).waitFor();
    expect(await page.evaluate(() => [sessionStorage.length, localStorage.getItem("engram.key")])).toEqual([0, null]);
  });

  it("made no request outside its origin and logged no console errors", () => {
    expect(browser.foreign).toEqual([]);
    // The wrong-key sign-in answers 401 on purpose: Chromium logs that failed load; nothing else may appear.
    // Refusals that are deliberate: the wrong and the revoked key (401), the message sent while a tool waited (409),
    // the narrative over 500 words (413) and the save played a clash (409). Chromium logs each failed load without its URL; the response log names them.
    const expected = [
      /HTTP 401 GET .*\/v1\/(overview|usage\?days=30)$/,
      /HTTP 409 POST .*\/v1\/chat$/,
      /HTTP (409|413) PUT .*\/v1\/memory\/working$/,
      /status of (401|409|413)/,
    ];
    expect(browser.errors.filter((e) => !expected.some((re) => re.test(e)))).toEqual([]);
  });
});
