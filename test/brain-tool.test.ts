/**
 * The tool against real D1 with a hand-made ToolContext: `injected` is what the session passes from
 * BuiltPrompt.injected, so a whole-document replacement is checked against the version the model saw.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { brainContextProvider } from "../src/brain/context";
import { updateCustomerBrain } from "../src/brain/tool";
import { buildSystemPrompt } from "../src/chat/prompt";
import { loadConfig } from "../src/config/config";
import type { ChatEvent } from "../src/core/events";
import { runTool, type ToolContext } from "../src/core/tool";
import { brainRows, call, type Doc, soul, testDb } from "./brain-helpers";
import { createUser } from "./helpers";

type User = { id: string; key: string };

/** A turn's tool context, with `injected` taken from a real system prompt built now (or given). */
async function turn(u: User, opts: { siteId?: string; injected?: Map<string, string[]> } = {}) {
  const scope = {
    db: await testDb(u.id),
    env,
    config: loadConfig(env),
    userId: u.id,
    plan: "free" as const,
    sessionId: "ses_tool",
    siteId: opts.siteId ?? null,
    projectId: null,
  };
  const events: ChatEvent[] = [];
  let injected = opts.injected;
  if (!injected) {
    const prompt = await buildSystemPrompt({ ...scope, query: "hello", now: Date.now() }, [brainContextProvider]);
    injected = new Map(prompt.injected.map((s) => [s.name, s.ids]));
  }
  const ctx: ToolContext = { ...scope, emit: (e) => events.push(e), turn: new Map(), injected };
  return { ctx, events, save: (target: string, content: string) => runTool(updateCustomerBrain, ctx, { target, content }) };
}

describe("update_customer_brain against the version the model saw", () => {
  it("refuses a SOUL rewrite based on a version the user has since replaced, shows the current text, and accepts the redo", async () => {
    const u = await createUser();
    await call(u.key, "PUT", "/v1/brain/soul", { content: "Ana, baker." });
    const t = await turn(u);
    await call(u.key, "PUT", "/v1/brain/soul", { content: "Ana, baker in Porto. Vegan." });

    const stale = await t.save("soul", "Ana, baker. Likes tea.");
    expect(stale.isError).toBe(true);
    expect(stale.content).toMatch(/you saw version 1; it is now version 2/);
    expect(stale.content).toContain("<current_soul>\nAna, baker in Porto. Vegan.\n</current_soul>");
    expect(await soul(u.key)).toMatchObject({ content: "Ana, baker in Porto. Vegan.", version: 2 });
    expect(t.events).toEqual([]);

    const redo = await t.save("soul", "Ana, baker in Porto. Vegan. Likes tea.");
    expect(redo).toEqual({ content: expect.stringContaining("Saved SOUL as version 3") });
    expect(await soul(u.key)).toMatchObject({ content: "Ana, baker in Porto. Vegan. Likes tea.", version: 3 });
  });

  it("lets the model write twice in one turn: its own save is the version it has seen", async () => {
    const u = await createUser();
    await call(u.key, "PUT", "/v1/brain/soul", { content: "Ana." });
    const t = await turn(u);
    expect((await t.save("soul", "Ana, baker.")).isError).toBeUndefined();
    expect((await t.save("soul", "Ana, baker in Porto.")).isError).toBeUndefined();
    expect(await soul(u.key)).toMatchObject({ content: "Ana, baker in Porto.", version: 3 });
  });

  it("treats a SOUL shown as empty as version 0: a SOUL written since is not overwritten", async () => {
    const u = await createUser();
    const t = await turn(u);
    await call(u.key, "PUT", "/v1/brain/soul", { content: "Written by the user meanwhile." });
    const res = await t.save("soul", "The model's first SOUL.");
    expect(res).toMatchObject({ isError: true, content: expect.stringMatching(/you saw version 0; it is now version 1/) });
    expect(await soul(u.key)).toMatchObject({ content: "Written by the user meanwhile.", version: 1 });
  });

  it("refuses to replace a document left out of the prompt, but may create one that does not exist", async () => {
    const u = await createUser();
    const dropped = new Map([["brain.instructions", []]]);
    const fresh = await turn(u, { injected: dropped });
    expect((await fresh.save("soul", "Ana.")).isError).toBeUndefined();

    const t = await turn(u, { injected: new Map(dropped) });
    const res = await t.save("soul", "Something else entirely.");
    expect(res).toMatchObject({
      isError: true,
      content: expect.stringMatching(/left out of your context this turn[\s\S]*<current_soul>\nAna\.\n<\/current_soul>/),
    });
    expect(await soul(u.key)).toMatchObject({ content: "Ana.", version: 1 });
  });

  it("guards BIBLE the same way, per active site", async () => {
    const u = await createUser();
    await call(u.key, "PUT", "/v1/sites/shop/bible", { content: "A shop." });
    const t = await turn(u, { siteId: "shop" });
    await call(u.key, "PUT", "/v1/sites/shop/bible", { content: "A shop on Shopify." });
    expect((await t.save("bible", "A shop. Ships to the EU.")).isError).toBe(true);
    expect((await call<Doc>(u.key, "GET", "/v1/sites/shop/bible")).body).toMatchObject({ content: "A shop on Shopify.", version: 2 });
  });

  it("in review mode, does not propose over a version the model has not seen", async () => {
    const u = await createUser();
    await call(u.key, "PUT", "/v1/brain/settings", { review_mode: true });
    await call(u.key, "PUT", "/v1/brain/soul", { content: "Ana." });
    const t = await turn(u);
    await call(u.key, "PUT", "/v1/brain/soul", { content: "Ana, vegan." });
    expect((await t.save("soul", "Ana, baker.")).isError).toBe(true);
    expect((await brainRows(u.id)).proposals).toBe(0);
  });
});
