/**
 * Per-plan quotas on stored objects and the request costs the rate limiter charges. Quotas are counted
 * inside the write that would cross them (a guarded INSERT), so they hold under concurrent writers;
 * request rates are limited by the Workers rate limiting bindings (wrangler.toml `[[ratelimits]]`).
 */
import { z } from "zod";
import { PLANS, type Plan } from "../db/schema";
import { AppError } from "../lib/errors";

/** Stored objects a plan caps. A quota counts what the user holds now (deleting frees room). */
export const QUOTA_KINDS = ["facts", "api_keys", "connections", "sessions", "projects", "transcripts", "lessons"] as const;
export type QuotaKind = (typeof QUOTA_KINDS)[number];
export type Quotas = Readonly<Record<QuotaKind, number>>;
export type PlanQuotas = Readonly<Record<Plan, Quotas>>;

export const DEFAULT_QUOTAS: PlanQuotas = {
  free: { facts: 10_000, api_keys: 10, connections: 20, sessions: 2_000, projects: 200, transcripts: 1_000, lessons: 20_000 },
  pro: { facts: 250_000, api_keys: 50, connections: 200, sessions: 100_000, projects: 1_000, transcripts: 50_000, lessons: 500_000 },
};

/** What a request counts as against its key's and its user's rate limit (plain requests count 1). */
export type RequestCosts = { turn: number; import: number };
export const DEFAULT_COSTS: RequestCosts = { turn: 5, import: 10 };

const Count = z.number().int().min(0).max(100_000_000);
const Override = z.partialRecord(z.enum(PLANS), z.partialRecord(z.enum(QUOTA_KINDS), Count));

/** PLAN_QUOTAS (JSON, e.g. `{"free": {"facts": 5000}}`) over the defaults; anything left out keeps its default. */
export function parsePlanQuotas(raw: string | undefined): PlanQuotas | string {
  if (raw === undefined) return DEFAULT_QUOTAS;
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return 'PLAN_QUOTAS must be JSON like {"free": {"facts": 5000, "api_keys": 10}}';
  }
  const parsed = Override.safeParse(json);
  if (!parsed.success) return `PLAN_QUOTAS: plans are ${PLANS.join(", ")}; kinds are ${QUOTA_KINDS.join(", ")}; values are whole numbers >= 0`;
  const out = {} as Record<Plan, Quotas>;
  for (const plan of PLANS) out[plan] = { ...DEFAULT_QUOTAS[plan], ...parsed.data[plan] };
  return out;
}

const LABEL: Readonly<Record<QuotaKind, string>> = {
  facts: "facts",
  api_keys: "active API keys",
  connections: "connections",
  sessions: "sessions",
  projects: "projects",
  transcripts: "synced transcripts",
  lessons: "lessons (unlearned ones do not count)",
};

/** The user-facing sentence of a `quota_exceeded` error. */
export function quotaMessage(kind: QuotaKind, plan: Plan, limit: number, extra = ""): string {
  return `the ${plan} plan allows ${limit} ${LABEL[kind]}${extra}; nothing was written. Delete some first or move to a larger plan.`;
}

/** One plan's cap on one kind of stored object, as a write path needs it (the limit and what to say). */
export type Quota = { kind: QuotaKind; plan: Plan; limit: number };

export const quotaOf = (quotas: PlanQuotas, plan: Plan, kind: QuotaKind): Quota => ({ kind, plan, limit: quotas[plan][kind] });

/** 403 `quota_exceeded`: the write was refused whole. */
export const quotaExceeded = (q: Quota, extra = "") => new AppError("quota_exceeded", quotaMessage(q.kind, q.plan, q.limit, extra));
