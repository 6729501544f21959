/**
 * A real cross-origin fetch from Chromium: a page served on another local port calls engram (`wrangler dev`)
 * with the user's key. The page's origin is in CORS_ORIGINS, a second page's is not.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../../scripts/chromium.mjs";
import { freePort, type LocalWorker, startLocalWorker } from "../../scripts/local-worker.mjs";
import { ADMIN_TOKEN, createUser } from "./server";

/** A static page on its own port: the origin a browser app would be served from. */
async function servePage(port: number): Promise<{ origin: string; server: Server }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>other origin</title><p>a page on another origin</p>");
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

let worker: LocalWorker;
let browser: Browser;
let allowed: { origin: string; server: Server };
let other: { origin: string; server: Server };
let key: string;
const dir = mkdtempSync(path.join(tmpdir(), "engram-cors-e2e-"));

beforeAll(async () => {
  [allowed, other] = [await servePage(await freePort()), await servePage(await freePort())];
  // Only the admin token: the offline model answers.
  const envFile = path.join(dir, "e2e.env");
  writeFileSync(envFile, `ADMIN_TOKEN=${ADMIN_TOKEN}\n`);
  worker = await startLocalWorker({ entry: "test/worker.ts", envFile, vars: { CORS_ORIGINS: allowed.origin } });
  key = await createUser(worker.origin, "cors@example.com");
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await worker?.stop();
  allowed?.server.close();
  other?.server.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A page at `origin`, with the console errors it logs. */
async function pageAt(origin: string): Promise<{ page: Page; errors: string[] }> {
  const page = await (await browser.newContext()).newPage();
  const errors: string[] = [];
  page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
  await page.goto(origin);
  expect(await page.evaluate(() => location.origin)).toBe(origin);
  return { page, errors };
}

describe("a browser page on another origin", () => {
  it("reads JSON, the request id and errors from engram when its origin is allowed", async () => {
    const { page, errors } = await pageAt(allowed.origin);
    const out = await page.evaluate(
      async ({ api, key }) => {
        const auth = { authorization: `Bearer ${key}` };
        // Preflighted: a JSON body and the Authorization header.
        const saved = await fetch(`${api}/v1/memory/facts`, {
          method: "POST",
          headers: { ...auth, "content-type": "application/json" },
          body: JSON.stringify({ facts: [{ text: "Prefers tea to coffee" }] }),
        });
        const list = await fetch(`${api}/v1/memory/facts?limit=5`, { headers: auth });
        const denied = await fetch(`${api}/v1/sessions`, { headers: { authorization: "Bearer wrong" } });
        return {
          saved: saved.status,
          facts: ((await list.json()) as { facts: { text: string }[] }).facts.map((f) => f.text),
          requestId: list.headers.get("x-request-id"),
          denied: denied.status,
          deniedCode: ((await denied.json()) as { error: { code: string } }).error.code,
        };
      },
      { api: worker.origin, key },
    );
    expect(out).toMatchObject({ saved: 201, facts: ["Prefers tea to coffee"], denied: 401, deniedCode: "unauthorized" });
    expect(out.requestId).toMatch(/^[\w.-]+$/);
    expect(errors.filter((e) => !e.includes("401"))).toEqual([]);
  });

  it("streams a chat turn across origins", async () => {
    const { page } = await pageAt(allowed.origin);
    const text = await page.evaluate(
      async ({ api, key }) => {
        const res = await fetch(`${api}/v1/chat`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify({ message: "hello from another origin" }),
        });
        return await res.text();
      },
      { api: worker.origin, key },
    );
    expect(text).toContain("event: session");
    expect(text).toContain("event: done");
  });

  it("is refused when its origin is not allowed, and when it asks to send credentials", async () => {
    const { page } = await pageAt(other.origin);
    const refused = await page.evaluate(
      async ({ api, key }) =>
        fetch(`${api}/v1/sessions`, { headers: { authorization: `Bearer ${key}` } }).then(
          () => "read",
          (e: Error) => e.name,
        ),
      { api: worker.origin, key },
    );
    expect(refused).toBe("TypeError");
    const { page: allowedPage } = await pageAt(allowed.origin);
    const withCredentials = await allowedPage.evaluate(
      async ({ api, key }) =>
        fetch(`${api}/v1/sessions`, { headers: { authorization: `Bearer ${key}` }, credentials: "include" }).then(
          () => "read",
          (e: Error) => e.name,
        ),
      { api: worker.origin, key },
    );
    expect(withCredentials).toBe("TypeError");
  });
});
