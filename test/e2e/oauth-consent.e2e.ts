/**
 * Connecting an app through OAuth in a real browser against `wrangler dev`: the app (played by this test, with
 * PKCE) sends the user to /authorize; the user signs in to the web app, reads the consent page, picks read-only
 * memory and allows it; the app exchanges the code and its token reaches only the read tools. Then the Account
 * page lists the app by name and disconnects it, and the token stops working.
 */
import { createHash, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { appSession } from "./session";

const app = appSession("oauth@example.com");
let token = "";
/** The consent page's address (`/#consent/<handle>`), to open it again once answered. */
let consentUrl = "";

/** Where the app listens for the browser coming back: intercepted in the browser, nothing serves it. */
const CALLBACK = "http://127.0.0.1:33418/callback";
const verifier = randomBytes(32).toString("base64url");
const challenge = createHash("sha256").update(verifier).digest("base64url");

const mcpTools = async (bearer: string) => {
  const res = await fetch(`${app.server.origin}/mcp`, {
    method: "POST",
    headers: { authorization: `Bearer ${bearer}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
  });
  return { status: res.status, names: res.ok ? ((await res.json()) as { result: { tools: { name: string }[] } }).result.tools.map((t) => t.name).sort() : [] };
};

const noOverflow = () => app.page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

describe("connecting an app with OAuth", () => {
  it("signs in, shows who asks and what it may do, and sends a code back once allowed", async () => {
    const registered = await fetch(`${app.server.origin}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_name: "Claude", redirect_uris: [CALLBACK], token_endpoint_auth_method: "none" }),
    });
    expect(registered.status).toBe(201);
    const { client_id } = (await registered.json()) as { client_id: string };

    const authorize = new URL("/authorize", app.server.origin);
    for (const [k, v] of Object.entries({
      response_type: "code",
      client_id,
      redirect_uri: CALLBACK,
      code_challenge: challenge,
      code_challenge_method: "S256",
      state: "st-1",
      scope: "memory:write",
      resource: `${app.server.origin}/mcp`,
    }))
      authorize.searchParams.set(k, v);
    await app.page.goto(authorize.href);
    await app.page.getByText("An app asks to connect to your engram").waitFor();
    consentUrl = app.page.url();
    await app.browser.shot("oauth-signin-1280");
    await app.page.getByLabel("API key").fill(app.key);
    await app.page.getByRole("button", { name: "Sign in" }).click();

    await app.page.getByRole("heading", { name: "Connect Claude to your engram?" }).waitFor();
    await app.page.getByText("engram cannot verify its name").waitFor();
    await app.page.getByText("an app on your computer").waitFor();
    // The app asked for read-write: that is the choice selected at first.
    expect(await app.page.getByLabel(/Read and write memory/).isChecked()).toBe(true);
    await app.browser.shot("oauth-consent-1280");
    await app.page.setViewportSize({ width: 390, height: 844 });
    expect(await noOverflow()).toBeLessThanOrEqual(0);
    await app.browser.shot("oauth-consent-390");
    await app.page.setViewportSize({ width: 1280, height: 800 });

    await app.page.getByLabel(/Read-only memory/).check();
    const back = app.page.waitForRequest((r) => r.url().startsWith(CALLBACK));
    await app.page.route(`${CALLBACK}**`, (route) => route.fulfill({ status: 200, contentType: "text/plain", body: "back in the app" }));
    await app.page.getByRole("button", { name: "Allow" }).click();
    const returned = new URL((await back).url());
    expect(returned.searchParams.get("state")).toBe("st-1");

    const exchanged = await fetch(`${app.server.origin}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        code: returned.searchParams.get("code") ?? "",
        redirect_uri: CALLBACK,
        client_id,
        code_verifier: verifier,
        resource: `${app.server.origin}/mcp`,
      }),
    });
    expect(exchanged.status).toBe(200);
    const tokens = (await exchanged.json()) as { access_token: string; scope: string };
    expect(tokens.scope).toBe("memory:read");
    token = tokens.access_token;
    expect(await mcpTools(token)).toEqual({ status: 200, names: ["brain_read", "brain_recall", "memory_search"] });
  });

  it("says so when a consent page already answered is opened again", async () => {
    await app.page.goto(consentUrl);
    await app.page.getByRole("alert").filter({ hasText: "expired or was already answered" }).waitFor();
    await app.browser.shot("oauth-consent-answered");
  });

  it("lists the app on the Account page and disconnects it: its token stops working", async () => {
    await app.page.goto(`${app.server.origin}/#account`);
    const apps = app.page.getByRole("list", { name: "Connected apps" });
    await apps.getByText("Claude").waitFor();
    await apps.getByText(/read-only memory · connected/).waitFor();
    await app.browser.shot("oauth-account-1280");
    await app.page.setViewportSize({ width: 390, height: 844 });
    expect(await noOverflow()).toBeLessThanOrEqual(0);
    await app.browser.shot("oauth-account-390");
    await app.page.setViewportSize({ width: 1280, height: 800 });

    await app.page.getByRole("button", { name: "Disconnect Claude" }).click();
    await app.page.getByText("No apps connected.").waitFor();
    expect((await mcpTools(token)).status).toBe(401);
  });

  it("made no request outside its origin but the way back to the app, and logged no console errors", () => {
    expect(app.browser.foreign.filter((url) => !url.startsWith(CALLBACK))).toEqual([]);
    // The one deliberate refusal: the answered consent page's request (404); Chromium logs it without its URL too.
    expect(app.browser.errors.filter((e) => !/HTTP 404 GET .*\/v1\/oauth\/consent\/[\w-]+$|status of 404/.test(e))).toEqual([]);
  });
});
