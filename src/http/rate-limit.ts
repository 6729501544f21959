/**
 * Request rate limits on Cloudflare's Workers rate limiting bindings (wrangler.toml `[[ratelimits]]`): a
 * counter kept in the Cloudflare location serving the request, consulted without a database round trip
 * or a hop to another object, so it adds nothing sequential to a chat turn's path to the model. Every
 * authenticated request is charged to its API key and to its user (all their keys together); admin
 * routes, which mint users and keys, to the client's address before the token is even checked. A
 * binding left out of the configuration limits nothing (a deployment can opt out of one limit), and
 * RATE_LIMITS=off turns them all off (a local load test).
 */
import type { Context, MiddlewareHandler } from "hono";
import { createMiddleware } from "hono/factory";
import type { RequestCosts } from "../config/limits";
import { AppError } from "../lib/errors";
import type { AppEnv } from "./context";

/** The shape of a rate limiting binding (`RateLimit` in the runtime types). */
export type Limiter = { limit(options: { key: string }): Promise<{ success: boolean }> };

/**
 * Seconds until a refused caller may try again. The binding reports no reset time, so this is the
 * whole period of its window (10 s for the key and user limits, 60 s for admin routes): by then the
 * window that refused the caller has surely ended. Keep these in step with the periods in wrangler.toml.
 */
export const LIMIT_PERIOD_SECONDS = { key: 10, user: 10, admin: 60 } as const;

/** Requests that do the work of several (a model call, a bulk write) are charged by their cost. */
const TURNS = [/^\/v1\/chat(\/ui)?$/, /^\/v1\/sessions\/[^/]+\/tool_result$/];
const IMPORTS = [/^\/v1\/memory\/facts$/, /^\/v1\/observations$/, /^\/v1\/transcripts$/];

export function requestCost(method: string, path: string, costs: RequestCosts): number {
  if (method !== "POST") return 1;
  if (TURNS.some((re) => re.test(path))) return costs.turn;
  if (IMPORTS.some((re) => re.test(path))) return costs.import;
  return 1;
}

/**
 * Charges `cost` units to `key`. The binding counts one per call, so a request costing n makes n calls,
 * concurrently (each is local to the location). False when any unit was refused.
 */
export async function charge(limiter: Limiter | undefined, key: string, cost: number): Promise<boolean> {
  if (!limiter) return true;
  const outcomes = await Promise.all(Array.from({ length: cost }, () => limiter.limit({ key })));
  return outcomes.every((o) => o.success);
}

const refused = (who: string, seconds: number) =>
  new AppError("rate_limited", `too many requests for this ${who}; try again in ${seconds} seconds`, undefined, seconds);

/** After authentication: the request is charged to its key and its user; over either limit is 429 with Retry-After. */
export const rateLimitUser: MiddlewareHandler<AppEnv> = createMiddleware<AppEnv>(async (c, next) => {
  const { user, config } = c.var;
  if (!config.rateLimits) return next();
  const cost = requestCost(c.req.method, c.req.path, config.requestCosts);
  const [byKey, byUser] = await Promise.all([charge(c.env.KEY_RATE_LIMIT, `key:${user.keyId}`, cost), charge(c.env.USER_RATE_LIMIT, `user:${user.id}`, cost)]);
  if (!byKey) throw refused("API key", LIMIT_PERIOD_SECONDS.key);
  if (!byUser) throw refused("user", LIMIT_PERIOD_SECONDS.user);
  await next();
});

/** The caller's address as Cloudflare reports it; one shared bucket when there is none (local development). */
export const clientAddress = (c: Context<AppEnv>) => c.req.header("cf-connecting-ip") ?? "unknown";

/** Before the admin token is checked: guessing the token and minting users are limited per client address. */
export const rateLimitAdmin: MiddlewareHandler<AppEnv> = createMiddleware<AppEnv>(async (c, next) => {
  if (!c.var.config.rateLimits) return next();
  if (!(await charge(c.env.ADMIN_RATE_LIMIT, `ip:${clientAddress(c)}`, 1))) throw refused("client address", LIMIT_PERIOD_SECONDS.admin);
  await next();
});
