/** One local server, one user and one browser for a browser test file: started before its tests, stopped after. */
import type { Page } from "playwright-core";
import { afterAll, beforeAll } from "vitest";
import { type Browser, openBrowser } from "./browser";
import { createUser, type DevServer, startDevServer } from "./server";

export type AppSession = { server: DevServer; browser: Browser; page: Page; key: string };

export function appSession(email: string): AppSession {
  const session = {} as AppSession;
  beforeAll(async () => {
    session.server = await startDevServer();
    session.key = await createUser(session.server.origin, email);
    session.browser = await openBrowser(session.server.origin);
    session.page = session.browser.page;
  }, 180_000);
  afterAll(async () => {
    await session.browser?.close();
    await session.server?.stop();
  });
  return session;
}
