/** A user's OAuth grants (one per connected app): listed on the Account page, revoked there or with the account. */
import type { GrantSummary } from "@cloudflare/workers-oauth-provider";
import type { Env } from "../config/env";
import { grantStore } from "./provider";

export async function userGrants(env: Env, userId: string): Promise<GrantSummary[]> {
  const store = grantStore(env);
  const grants: GrantSummary[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.listUserGrants(userId, { limit: 1000, cursor });
    grants.push(...page.items);
    cursor = page.cursor;
  } while (cursor);
  return grants;
}

/** Revokes one of the user's grants: false when the user holds none by that id (another user's is not theirs). */
export async function revokeUserGrant(env: Env, userId: string, grantId: string): Promise<boolean> {
  if (!(await userGrants(env, userId)).some((g) => g.id === grantId)) return false;
  await grantStore(env).revokeGrant(grantId, userId);
  return true;
}

/** Disconnects every app of a user (the account is being deleted): their tokens stop working at once. */
export async function revokeAllUserGrants(env: Env, userId: string): Promise<void> {
  const store = grantStore(env);
  for (const g of await userGrants(env, userId)) await store.revokeGrant(g.id, userId);
}
