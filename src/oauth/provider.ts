/**
 * OAuth 2.1 for /mcp on `@cloudflare/workers-oauth-provider`, wrapped around the Worker's HTTP handler. The
 * provider serves the discovery documents (`/.well-known/oauth-protected-resource/mcp`,
 * `/.well-known/oauth-authorization-server`), dynamic client registration (`/oauth/register`) and the token
 * endpoint (`/oauth/token`, PKCE S256, refresh, revocation), keeping clients, grants and hashed tokens in the
 * OAUTH_KV namespace. It checks every bearer token on /mcp: an OAuth token reaches the app with `ctx.auth`
 * (user, client, scopes); an engram API key passes to the app, whose own middleware checks it as before.
 * Everything else (the API, the web app, `/authorize`, which is engram's consent flow) goes to the app as is.
 *
 * The issuer and the protected resource are the origin a request arrived at, so a deployment needs no URL
 * setting and a token is only ever accepted on the origin that issued it. OAuth requires https; plain http is
 * accepted on a loopback host only (`wrangler dev`, tests). On any other origin /mcp takes API keys only.
 */
import { getOAuthApi, type OAuthHelpers, OAuthProvider, type OAuthProviderOptions, type OAuthResourceAuth } from "@cloudflare/workers-oauth-provider";
import { KEY_PREFIX } from "../auth/keys";
import type { Env } from "../config/env";
import { SCOPE_NAMES } from "./scopes";

export const MCP_PATH = "/mcp";
export const AUTHORIZE_PATH = "/authorize";

type FetchHandler = { fetch(request: Request, env: Env, ctx: ExecutionContext): Response | Promise<Response> };

/** The Worker's env as the provider leaves it for the app: its helpers, on the origins where OAuth runs. */
type OAuthEnv = Env & { OAUTH_PROVIDER?: OAuthHelpers };

export const oauthHelpers = (env: Env): OAuthHelpers | undefined => (env as OAuthEnv).OAUTH_PROVIDER;

/** Where a client learns how to get a token for /mcp on this origin (RFC 9728). */
export const resourceMetadataUrl = (origin: string) => `${origin}/.well-known/oauth-protected-resource${MCP_PATH}`;

function options(origin: string, app: FetchHandler): OAuthProviderOptions<Env> {
  return {
    apiRoute: MCP_PATH,
    apiHandler: app,
    defaultHandler: app,
    authorizeEndpoint: AUTHORIZE_PATH,
    tokenEndpoint: "/oauth/token",
    clientRegistrationEndpoint: "/oauth/register",
    // Clients identified by an https URL serving their metadata (MCP's preferred registration) as well as DCR.
    clientIdMetadataDocumentEnabled: true,
    scopesSupported: SCOPE_NAMES,
    // A connection in use stays connected: each refresh moves its expiry 30 days on; one idle that long ends.
    refreshTokenIdleTTL: 30 * 24 * 60 * 60,
    resourceMetadata: { resource: `${origin}${MCP_PATH}`, authorization_servers: [origin], resource_name: "engram memory" },
    // An engram API key is recognised by its shape only: the app's middleware checks it (revoked, unknown)
    // and answers in engram's error shape, exactly as on origins without OAuth.
    resolveExternalToken: async ({ token }) => (token.startsWith(KEY_PREFIX) ? { props: { apiKey: true }, audience: `${origin}${MCP_PATH}` } : null),
  };
}

function newProvider(origin: string, app: FetchHandler): OAuthProvider<Env> | null {
  try {
    return new OAuthProvider<Env>(options(origin, app));
  } catch (err) {
    // The provider refuses an origin OAuth cannot run on (plain http on a public host): API keys only there.
    if (err instanceof TypeError) return null;
    throw err;
  }
}

/**
 * A user's grants, to list and revoke: KV keeps them by user, whichever origin issued them, so any valid
 * configuration reads them (a loopback one here) and no request origin is needed (the Account page, account deletion).
 */
export const grantStore = (env: Env): Pick<OAuthHelpers, "listUserGrants" | "revokeGrant"> =>
  getOAuthApi(options("http://localhost", { fetch: () => new Response(null, { status: 404 }) }), env);

/** Origins seen by this isolate, bounded: a Worker is reached on a handful (custom domains, workers.dev). */
const MAX_ORIGINS = 16;

/** The Worker's fetch with OAuth in front of it (see above). */
export function withOAuth(app: FetchHandler): FetchHandler["fetch"] {
  const providers = new Map<string, OAuthProvider<Env> | null>();
  return (request, env, ctx) => {
    const origin = new URL(request.url).origin;
    if (!providers.has(origin)) {
      if (providers.size >= MAX_ORIGINS) providers.clear();
      providers.set(origin, newProvider(origin, app));
    }
    const provider = providers.get(origin);
    // A copy of env per request: the provider attaches its helpers (bound to this origin) to the env it is given.
    return provider ? provider.fetch(request, { ...env }, ctx) : app.fetch(request, env, ctx);
  };
}

/** The OAuth token this request carried, as the provider verified it; null for an API key or no provider. */
export function verifiedGrant(ctx: object | undefined): { userId: string; clientId: string; scope: readonly string[] } | null {
  const auth = (ctx as { auth?: OAuthResourceAuth } | undefined)?.auth;
  return auth?.userId && auth.clientId ? { userId: auth.userId, clientId: auth.clientId, scope: auth.scope } : null;
}
