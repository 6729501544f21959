/**
 * engram's side of the OAuth flow. `GET /authorize` validates the client's request, starts a consent transaction
 * bound to this browser (a `__Host-` cookie) and sends the browser to the web app's consent page
 * (`/#consent/<handle>`). The page, signed in with the user's API key as everywhere else in the web app, reads
 * what to show from `GET /v1/oauth/consent/{handle}` and answers with `POST` (approve with one scope, or deny),
 * which returns where to send the browser back to the client. The user's grants (one per connected app) are
 * listed and revoked under `/v1/oauth/grants`.
 */

import { AuthorizationError, CimdFetchError, type ConsentDescription, type OAuthHelpers } from "@cloudflare/workers-oauth-provider";
import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { Env } from "../config/env";
import type { AppEnv } from "../http/context";
import { errors, json, jsonBody, newRouter, Ok, security } from "../http/openapi";
import { AppError, notFound } from "../lib/errors";
import { sha256Hex } from "../lib/hash";
import { revokeUserGrant, userGrants } from "./grants";
import { AUTHORIZE_PATH, oauthHelpers } from "./provider";
import { SCOPE_NAMES, SCOPES } from "./scopes";

/** How long the consent page can be answered: the provider's consent transaction lives as long. */
const CONSENT_TTL_SECONDS = 600;

const Handle = z
  .string()
  .regex(/^[\w-]{20,100}$/, "is not a consent handle")
  .openapi({ param: { name: "handle", in: "path" }, description: "From the consent page's address, `/#consent/<handle>`" });

const ConsentView = z
  .object({
    client_id: z.string(),
    client_name: z.string().describe("As the client registered it: self-asserted unless client_domain is set"),
    client_domain: z.string().nullable().describe("For a client identified by a metadata document URL: that URL's host"),
    redirect_host: z.string().describe("Where the token goes once approved"),
    redirect_is_loopback: z.boolean().describe("The token goes to an app on this computer (localhost)"),
    requested_scope: z.array(z.string()),
    scopes: z.array(z.object({ scope: z.enum(SCOPE_NAMES), description: z.string() })).describe("What the user can grant, one of them"),
  })
  .openapi("OAuthConsent");

const ConsentAnswer = z
  .strictObject({
    decision: z.enum(["approve", "deny"]),
    scope: z.enum(SCOPE_NAMES).optional().describe("Required to approve: what the app may do"),
  })
  .refine((a) => a.decision === "deny" || a.scope !== undefined, { message: "scope is required to approve", path: ["scope"] })
  .openapi("OAuthConsentAnswer");

const Grant = z
  .object({
    id: z.string(),
    client_id: z.string(),
    client_name: z.string(),
    scope: z.array(z.string()),
    created_at: z.number(),
    expires_at: z.number().nullable().describe("When its refresh token stops working, unless revoked before"),
  })
  .openapi("OAuthGrant");

const tags = ["oauth"];

const consentRoute = createRoute({
  method: "get",
  path: "/v1/oauth/consent/{handle}",
  operationId: "getOAuthConsent",
  tags,
  summary: "What an app asking to connect wants (the consent page's content)",
  security,
  request: { params: z.object({ handle: Handle }) },
  responses: { 200: json(ConsentView, "The request to show"), ...errors },
});

const answerRoute = createRoute({
  method: "post",
  path: "/v1/oauth/consent/{handle}",
  operationId: "answerOAuthConsent",
  tags,
  summary: "Approve (with one scope) or deny an app's request to connect",
  description:
    "Works once, within ten minutes, from the browser that opened the consent page (its cookie is checked). " +
    "Approving grants the app a token for /mcp with the chosen scope, for the signed-in user. Either way the answer " +
    "says where to send the browser: back to the app, with a code or with access_denied.",
  security,
  request: { params: z.object({ handle: Handle }), ...jsonBody(ConsentAnswer) },
  responses: { 200: json(z.object({ redirect_to: z.string() }), "Where to send the browser"), ...errors },
});

const listRoute = createRoute({
  method: "get",
  path: "/v1/oauth/grants",
  operationId: "listOAuthGrants",
  tags,
  summary: "The apps connected to your memory through OAuth, with their scopes",
  security,
  responses: { 200: json(z.object({ grants: z.array(Grant) }), "Grants, newest first"), ...errors },
});

const revokeRoute = createRoute({
  method: "delete",
  path: "/v1/oauth/grants/{id}",
  operationId: "revokeOAuthGrant",
  tags,
  summary: "Disconnect an app: its tokens stop working at once",
  security,
  request: { params: z.object({ id: z.string().regex(/^[\w-]{1,100}$/, "is not a grant id") }) },
  responses: { 200: json(Ok, "Revoked"), ...errors },
});

function helpers(env: Env): OAuthHelpers {
  const oauth = oauthHelpers(env);
  if (!oauth) throw new AppError("not_found", "OAuth is not offered at this address: engram serves it over https, or over http on localhost");
  return oauth;
}

const viewKey = async (handle: string) => `engram-consent:${await sha256Hex(handle)}`;

/** The provider's own errors for a consent answer say what happened (expired, used, another browser). */
function asAppError(err: unknown): unknown {
  if (err instanceof AuthorizationError)
    return new AppError("invalid_request", err.description || "this authorization request is not valid; start again from the app");
  if (err instanceof CimdFetchError) return new AppError("invalid_request", "the app's metadata document could not be fetched; try again later");
  return err;
}

function view(d: ConsentDescription) {
  return {
    client_id: d.clientId,
    client_name: d.clientName,
    client_domain: d.clientDomain ?? null,
    redirect_host: d.redirectHost,
    redirect_is_loopback: d.redirectIsLoopback,
    requested_scope: d.scope,
    scopes: SCOPE_NAMES.map((scope) => ({ scope, description: SCOPES[scope] })),
  };
}

/** Sends the provider's cookies (the consent binding, cleared once answered) with the JSON answer. */
function withHeaders(c: Context<AppEnv>, headers: Headers) {
  for (const cookie of headers.getSetCookie()) c.header("Set-Cookie", cookie, { append: true });
  c.header("Cache-Control", "no-store");
}

export const oauthRoutes = newRouter()
  .openapi(consentRoute, async (c) => {
    const stored = await c.env.OAUTH_KV.get(await viewKey(c.req.valid("param").handle));
    if (!stored) throw new AppError("not_found", "this request to connect expired or was already answered; start again from the app");
    return c.json(ConsentView.parse(JSON.parse(stored)), 200);
  })
  .openapi(answerRoute, async (c) => {
    const oauth = helpers(c.env);
    const { handle } = c.req.valid("param");
    const answer = c.req.valid("json");
    try {
      if (answer.decision === "deny") {
        const denied = await oauth.denyConsent(c.req.raw, handle);
        denied.headers.delete("Location");
        withHeaders(c, denied.headers);
        await c.env.OAUTH_KV.delete(await viewKey(handle));
        return c.json({ redirect_to: denied.redirectTo }, 200);
      }
      const approved = await oauth.approveConsent(c.req.raw, handle, { scope: answer.scope ? [answer.scope] : [] });
      const { clientName } = await oauth.describeConsent(approved.request);
      const { redirectTo } = await oauth.completeAuthorization({
        request: approved.request,
        userId: c.var.user.id,
        metadata: { client_name: clientName },
        scope: approved.request.scope,
        props: { userId: c.var.user.id },
      });
      withHeaders(c, approved.headers);
      await c.env.OAUTH_KV.delete(await viewKey(handle));
      return c.json({ redirect_to: redirectTo }, 200);
    } catch (err) {
      throw asAppError(err);
    }
  })
  .openapi(listRoute, async (c) => {
    const grants = await userGrants(c.env, c.var.user.id);
    grants.sort((a, b) => b.createdAt - a.createdAt);
    return c.json(
      {
        grants: grants.map((g) => ({
          id: g.id,
          client_id: g.clientId,
          client_name: typeof g.metadata?.client_name === "string" ? g.metadata.client_name : g.clientId,
          scope: g.scope,
          created_at: g.createdAt * 1000,
          expires_at: g.expiresAt ? g.expiresAt * 1000 : null,
        })),
      },
      200,
    );
  })
  .openapi(revokeRoute, async (c) => {
    if (!(await revokeUserGrant(c.env, c.var.user.id, c.req.valid("param").id))) throw notFound("grant");
    return c.json({ ok: true as const }, 200);
  })
  .get(AUTHORIZE_PATH, async (c) => {
    const oauth = helpers(c.env);
    try {
      const request = await oauth.parseAuthRequest(c.req.raw);
      const details = await oauth.describeConsent(request);
      const consent = await oauth.beginConsent(request);
      await c.env.OAUTH_KV.put(await viewKey(consent.handle), JSON.stringify(view(details)), { expirationTtl: CONSENT_TTL_SECONDS });
      consent.headers.set("Location", `/#consent/${consent.handle}`);
      return new Response(null, { status: 302, headers: consent.headers });
    } catch (err) {
      // Only a request whose client and exact redirect URI were validated may be sent back to the client.
      if (err instanceof AuthorizationError && err.redirectTo) return c.redirect(err.redirectTo, 302);
      throw asAppError(err);
    }
  });
