/**
 * OAuth 2.1 for /mcp, driven by the official MCP SDK's client auth (`auth()` behind the Streamable HTTP
 * transport): discovery from the 401, dynamic client registration, the authorize redirect, engram's consent
 * (posted as the web app's consent page posts it, with the browser's binding cookie and the user's API key),
 * the code exchange with PKCE, then tool calls. Scopes decide which tools a token reaches; a revoked grant's
 * token is refused; another user's memory is never reachable; API keys keep working on the same origin.
 *
 * OAuth runs on https, or plain http on a loopback host: these tests use http://localhost.
 */
import { env, SELF } from "cloudflare:test";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { describe, expect, it } from "vitest";
import { abandonMove, beginMove } from "../src/account/move";
import { shardBindings } from "../src/db/shards";
import { createUser } from "./helpers";

const ORIGIN = "http://localhost";
const T = 60_000;
type User = { id: string; key: string };

/** An MCP client's OAuth state, kept in memory: what a desktop app would keep on disk. */
class TestClientProvider implements OAuthClientProvider {
  readonly redirectUrl = "http://127.0.0.1:33418/callback";
  authorizationUrl: URL | undefined;
  private info: OAuthClientInformationMixed | undefined;
  private saved: OAuthTokens | undefined;
  private verifier = "";

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "Test Connector",
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  clientInformation = () => this.info;
  saveClientInformation = (info: OAuthClientInformationMixed) => {
    this.info = info;
  };
  tokens = () => this.saved;
  saveTokens = (tokens: OAuthTokens) => {
    this.saved = tokens;
  };
  redirectToAuthorization = (url: URL) => {
    this.authorizationUrl = url;
  };
  saveCodeVerifier = (verifier: string) => {
    this.verifier = verifier;
  };
  codeVerifier = () => this.verifier;
}

const transportFor = (provider: OAuthClientProvider) =>
  new StreamableHTTPClientTransport(new URL(`${ORIGIN}/mcp`), { authProvider: provider, fetch: (url, init) => SELF.fetch(url, init) });

const post = (path: string, key: string, body: unknown, cookie?: string) =>
  SELF.fetch(`${ORIGIN}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...(cookie ? { cookie } : {}) },
    body: JSON.stringify(body),
  });

const get = (path: string, key: string) => SELF.fetch(`${ORIGIN}${path}`, { headers: { authorization: `Bearer ${key}` } });

/** The browser opens the authorization URL: engram answers with a redirect to its consent page and a binding cookie. */
async function openConsent(url: URL) {
  const res = await SELF.fetch(url, { redirect: "manual" });
  expect(res.status).toBe(302);
  const location = res.headers.get("location") ?? "";
  const handle = /^\/#consent\/([\w-]+)$/.exec(location)?.[1];
  expect(handle).toBeTruthy();
  const cookie = res.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ");
  expect(cookie).toMatch(/^__Host-/);
  expect(res.headers.get("x-frame-options")).toBe("DENY");
  return { handle: handle as string, cookie };
}

/**
 * The whole flow: the SDK's first connect fails with 401 and registers, the user approves `scope` on the consent
 * page, the SDK exchanges the code; returns a connected client and the provider holding its tokens.
 */
async function connectWithOAuth(user: User, scope: string) {
  const provider = new TestClientProvider();
  const first = transportFor(provider);
  await expect(new Client({ name: "oauth-test", version: "1.0.0" }).connect(first)).rejects.toThrow(UnauthorizedError);
  expect(provider.authorizationUrl?.pathname).toBe("/authorize");
  expect(provider.authorizationUrl?.searchParams.get("code_challenge_method")).toBe("S256");
  const { handle, cookie } = await openConsent(provider.authorizationUrl as URL);

  const consent = await get(`/v1/oauth/consent/${handle}`, user.key);
  expect(consent.status).toBe(200);
  expect(await consent.json()).toMatchObject({ client_name: "Test Connector", redirect_host: "127.0.0.1", redirect_is_loopback: true });

  const answer = await post(`/v1/oauth/consent/${handle}`, user.key, { decision: "approve", scope }, cookie);
  expect(answer.status).toBe(200);
  const redirectTo = new URL(((await answer.json()) as { redirect_to: string }).redirect_to);
  expect(`${redirectTo.origin}${redirectTo.pathname}`).toBe(provider.redirectUrl);
  await first.finishAuth(redirectTo.searchParams.get("code") ?? "");
  expect(provider.tokens()?.scope).toBe(scope);

  const client = new Client({ name: "oauth-test", version: "1.0.0" });
  await client.connect(transportFor(provider));
  return { client, provider, token: provider.tokens()?.access_token as string };
}

type TextResult = { content: { type: string; text: string }[]; isError?: boolean };
async function call(client: Client, name: string, args: Record<string, unknown>) {
  const result = (await client.callTool({ name, arguments: args })) as TextResult;
  return { text: result.content.map((c) => c.text).join("\n"), isError: result.isError === true };
}

const mcpPost = (token: string, body: unknown) =>
  SELF.fetch(`${ORIGIN}/mcp`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify(body),
  });
const listTools = { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} };

const countOf = async (user: User, path: string, field: string) =>
  (((await (await get(path, user.key)).json()) as Record<string, unknown[]>)[field] ?? []).length;

describe("OAuth for /mcp", () => {
  // With one shard (npm run test:one-shard) there is nowhere to move a user.
  it.skipIf(shardBindings(env).length < 2)(
    "a token's calls wait with 503 user_moving while an admin moves its user, and go on after",
    async () => {
      const u = await createUser("free", 0);
      const { token } = await connectWithOAuth(u, "memory:read");
      const { move } = await beginMove(env, u.id, 1);
      const paused = await mcpPost(token, listTools);
      expect(paused.status).toBe(503);
      expect(paused.headers.get("retry-after")).toBe("5");
      expect(await paused.json()).toMatchObject({ error: { code: "user_moving" } });
      await abandonMove(move);
      expect((await mcpPost(token, listTools)).status).toBe(200);
    },
    T,
  );

  it(
    "advertises itself from the 401: protected-resource and authorization-server metadata",
    async () => {
      const res = await SELF.fetch(`${ORIGIN}/mcp`, { method: "POST", body: JSON.stringify(listTools), headers: { "content-type": "application/json" } });
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toContain(`resource_metadata="${ORIGIN}/.well-known/oauth-protected-resource/mcp"`);

      const resource = (await (await SELF.fetch(`${ORIGIN}/.well-known/oauth-protected-resource/mcp`)).json()) as Record<string, unknown>;
      expect(resource).toMatchObject({ resource: `${ORIGIN}/mcp`, authorization_servers: [ORIGIN] });

      const server = (await (await SELF.fetch(`${ORIGIN}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
      expect(server).toMatchObject({
        issuer: ORIGIN,
        authorization_endpoint: `${ORIGIN}/authorize`,
        token_endpoint: `${ORIGIN}/oauth/token`,
        registration_endpoint: `${ORIGIN}/oauth/register`,
        code_challenge_methods_supported: ["S256"],
        scopes_supported: ["memory:read", "memory:write", "lessons"],
        client_id_metadata_document_supported: true,
      });
    },
    T,
  );

  it(
    "the SDK's flow completes with read-write memory and the token calls tools for its user",
    async () => {
      const u = await createUser();
      const { client } = await connectWithOAuth(u, "memory:write");
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(["brain_extract", "brain_read", "brain_recall", "brain_remember", "memory_remember", "memory_search"]);
      const saved = await call(client, "memory_remember", { content: "Prefers pnpm over npm" });
      expect(saved.isError).toBe(false);
      expect(await countOf(u, "/v1/memory/events", "events")).toBe(1);

      // The Account page's list: the app by name, with its scope; the user's own API key still works on /mcp.
      const { grants } = (await (await get("/v1/oauth/grants", u.key)).json()) as { grants: { client_name: string; scope: string[] }[] };
      expect(grants).toEqual([expect.objectContaining({ client_name: "Test Connector", scope: ["memory:write"] })]);
      expect((await mcpPost(u.key, listTools)).status).toBe(200);
      await client.close();
    },
    T,
  );

  it(
    "a read-only token sees and runs only reads: a write tool is refused and nothing is written",
    async () => {
      const u = await createUser();
      const { client } = await connectWithOAuth(u, "memory:read");
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(["brain_read", "brain_recall", "memory_search"]);
      expect((await call(client, "memory_search", { query: "tea" })).isError).toBe(false);
      for (const [name, args] of [
        ["memory_remember", { content: "Prefers tea" }],
        ["brain_remember", { title: "Use pnpm", content: "Use pnpm, not npm, in this repository." }],
        ["brain_extract", {}],
      ] as const) {
        // A tool the token does not reach is not there at all: unknown, as the spec answers (JSON-RPC -32602).
        await expect(call(client, name, args), name).rejects.toMatchObject({ code: -32602, message: expect.stringContaining("Unknown tool") });
      }
      expect(await countOf(u, "/v1/memory/events", "events")).toBe(0);
      expect(await countOf(u, "/v1/lessons", "lessons")).toBe(0);
      await client.close();
    },
    T,
  );

  it(
    "a lessons-only token reaches lessons and nothing else of the user's memory",
    async () => {
      const u = await createUser();
      const { client } = await connectWithOAuth(u, "lessons");
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(["brain_extract", "brain_recall", "brain_remember"]);
      expect((await call(client, "brain_remember", { title: "Use pnpm", content: "Use pnpm, not npm, in this repository." })).isError).toBe(false);
      for (const [name, args] of [
        ["brain_read", { document: "soul" }],
        ["memory_remember", { content: "Prefers tea" }],
      ] as const)
        await expect(call(client, name, args), name).rejects.toMatchObject({ code: -32602 });
      // Nor its resources and the prompt built on them: only the lessons prompt is offered.
      expect((await client.listResources()).resources).toEqual([]);
      await expect(client.readResource({ uri: "engram://brain/soul" })).rejects.toMatchObject({ code: -32002 });
      expect((await client.listPrompts()).prompts.map((p) => p.name)).toEqual(["recall_lessons"]);
      expect(await countOf(u, "/v1/lessons", "lessons")).toBe(1);
      expect(await countOf(u, "/v1/memory/events", "events")).toBe(0);
      await client.close();
    },
    T,
  );

  it(
    "a revoked grant's token gets 401, at once",
    async () => {
      const u = await createUser();
      const { token } = await connectWithOAuth(u, "memory:write");
      expect((await mcpPost(token, listTools)).status).toBe(200);
      const { grants } = (await (await get("/v1/oauth/grants", u.key)).json()) as { grants: { id: string }[] };
      const revoke = await SELF.fetch(`${ORIGIN}/v1/oauth/grants/${grants[0]?.id}`, { method: "DELETE", headers: { authorization: `Bearer ${u.key}` } });
      expect(revoke.status).toBe(200);
      const after = await mcpPost(token, listTools);
      expect(after.status).toBe(401);
      expect(after.headers.get("www-authenticate")).toContain('error="invalid_token"');
      expect(await countOf(u, "/v1/oauth/grants", "grants")).toBe(0);
    },
    T,
  );

  it(
    "deleting an account revokes its apps' grants: the token gets 401 and its refresh token no longer works",
    async () => {
      const u = await createUser();
      const { token, provider } = await connectWithOAuth(u, "memory:read");
      // Deleted over another origin than the one that issued the grant: grants are the user's, wherever issued.
      const deleted = await SELF.fetch(`http://engram.test/v1/admin/users/${u.id}`, {
        method: "DELETE",
        headers: { authorization: `Bearer ${env.ADMIN_TOKEN}` },
      });
      expect(deleted.status).toBe(200);
      const refused = await mcpPost(token, listTools);
      expect(refused.status).toBe(401);
      expect(refused.headers.get("www-authenticate")).toContain('error="invalid_token"');
      const refresh = await SELF.fetch(`${ORIGIN}/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          grant_type: "refresh_token",
          refresh_token: provider.tokens()?.refresh_token ?? "",
          client_id: provider.clientInformation()?.client_id ?? "",
        }),
      });
      expect(refresh.status).toBe(400);
    },
    T,
  );

  it(
    "tenancy: a token reaches its user's memory only, and another user can neither list nor revoke it",
    async () => {
      const a = await createUser();
      const b = await createUser();
      await post("/v1/memory/facts", b.key, { facts: [{ text: "B's locker code is zebra-4471" }] });
      const { client, token } = await connectWithOAuth(a, "memory:write");
      const found = await call(client, "memory_search", { query: "locker code zebra", k: 20 });
      expect(found.text).not.toContain("zebra-4471");
      await call(client, "memory_remember", { content: "A prefers green tea" });
      expect(await countOf(b, "/v1/memory/events", "events")).toBe(0);

      const { grants } = (await (await get("/v1/oauth/grants", a.key)).json()) as { grants: { id: string }[] };
      expect(await countOf(b, "/v1/oauth/grants", "grants")).toBe(0);
      const foreign = await SELF.fetch(`${ORIGIN}/v1/oauth/grants/${grants[0]?.id}`, { method: "DELETE", headers: { authorization: `Bearer ${b.key}` } });
      expect(foreign.status).toBe(404);
      expect((await mcpPost(token, listTools)).status).toBe(200);

      // An OAuth token is for /mcp only: the REST API does not take it.
      expect((await get("/v1/memory/facts", token)).status).toBe(401);
      await client.close();
    },
    T,
  );

  it(
    "deny sends access_denied back to the app; a consent answer works once, from the browser that opened it",
    async () => {
      const u = await createUser();
      const provider = new TestClientProvider();
      await expect(new Client({ name: "oauth-test", version: "1.0.0" }).connect(transportFor(provider))).rejects.toThrow(UnauthorizedError);
      const { handle, cookie } = await openConsent(provider.authorizationUrl as URL);

      expect((await get(`/v1/oauth/consent/${handle}`, u.key)).status).toBe(200);
      expect((await get("/v1/oauth/consent/not*a*handle", u.key)).status).toBe(400);
      expect((await get(`/v1/oauth/consent/${"x".repeat(43)}`, u.key)).status).toBe(404);
      expect((await post(`/v1/oauth/consent/${handle}`, u.key, { decision: "approve" }, cookie)).status).toBe(400);
      expect((await post(`/v1/oauth/consent/${handle}`, u.key, { decision: "approve", scope: "admin" }, cookie)).status).toBe(400);
      const otherBrowser = await post(`/v1/oauth/consent/${handle}`, u.key, { decision: "approve", scope: "memory:read" });
      expect(otherBrowser.status).toBe(400);
      expect(((await otherBrowser.json()) as { error: { message: string } }).error.message).toMatch(/browser/);

      const denied = await post(`/v1/oauth/consent/${handle}`, u.key, { decision: "deny" }, cookie);
      expect(denied.status).toBe(200);
      const back = new URL(((await denied.json()) as { redirect_to: string }).redirect_to);
      expect(back.searchParams.get("error")).toBe("access_denied");
      expect((await post(`/v1/oauth/consent/${handle}`, u.key, { decision: "approve", scope: "memory:read" }, cookie)).status).toBe(400);
      expect(await countOf(u, "/v1/oauth/grants", "grants")).toBe(0);
    },
    T,
  );

  it(
    "never redirects to an address it has not validated: an unknown client or a foreign redirect URI is answered here",
    async () => {
      const provider = new TestClientProvider();
      await expect(new Client({ name: "oauth-test", version: "1.0.0" }).connect(transportFor(provider))).rejects.toThrow(UnauthorizedError);
      const genuine = provider.authorizationUrl as URL;
      const unknownClient = new URL(genuine);
      unknownClient.searchParams.set("client_id", "no-such-client");
      const foreignRedirect = new URL(genuine);
      foreignRedirect.searchParams.set("redirect_uri", "https://attacker.example/callback");
      for (const url of [unknownClient, foreignRedirect]) {
        const res = await SELF.fetch(url, { redirect: "manual" });
        expect(res.status, url.search).toBe(400);
        expect(res.headers.get("location")).toBeNull();
        expect(res.headers.getSetCookie()).toEqual([]);
      }
    },
    T,
  );

  it(
    "bearer API keys keep working on an OAuth origin; a wrong key is 401 with the OAuth challenge",
    async () => {
      const u = await createUser();
      const ok = await mcpPost(u.key, listTools);
      expect(ok.status).toBe(200);
      expect(((await ok.json()) as { result: { tools: unknown[] } }).result.tools).toHaveLength(6);
      const wrong = await mcpPost("egm_not-a-real-key", listTools);
      expect(wrong.status).toBe(401);
      expect(((await wrong.json()) as { error: { code: string } }).error.code).toBe("unauthorized");
      expect(wrong.headers.get("www-authenticate")).toContain("resource_metadata=");
      expect((await get("/v1/overview", u.key)).status).toBe(200);
    },
    T,
  );
});
