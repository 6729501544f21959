/**
 * A resumed turn the model failed after the client's answer (docs/bridge.md, "When the model fails after an
 * answer"). The answered round is already in history and stays there: no answer is lost, and history is valid as
 * it stands (a new message simply follows it). What the turn needs to go on is kept beside it until its deadline,
 * so the same answer sent again continues the turn: the model is sent again what the failed call was sent, and
 * no tool runs again. Another call id, a different answer or a late retry is refused; a new message drops it.
 */
import { z } from "@hono/zod-openapi";
import { PendingCall } from "../core/events";
import type { Answer, Refusal } from "./answer";
import { TurnState } from "./continuation";

/** How the client answered the call, to be compared with what a retry sends. */
const AnsweredWith = z.object({
  action: z.enum(["allow", "deny", "always"]).nullable(),
  content: z.json().nullable(),
  is_error: z.boolean(),
});

export const RetryableTurn = TurnState.extend({
  /** The call whose answer the model failed after. */
  call: PendingCall,
  answered: AnsweredWith,
  /** Whether that call's result was a success (the retry's `tool_result` event says so again). */
  ok: z.boolean(),
});
export type RetryableTurn = z.infer<typeof RetryableTurn>;

export const answeredWith = (a: Answer): z.infer<typeof AnsweredWith> => ({
  action: a.action ?? null,
  content: a.content ?? null,
  is_error: a.is_error === true,
});

/** Null (and a log line) for a stored value this format does not describe: the turn is then not retryable, its history stays. */
export function decodeRetryable(value: unknown): RetryableTurn | null {
  const parsed = RetryableTurn.safeParse(value);
  if (parsed.success) return parsed.data;
  console.error(JSON.stringify({ retryable_turn: "unreadable", issues: parsed.error.issues.slice(0, 3) }));
  return null;
}

/** What the failed answer's error adds to the model's failure: what the client can do now. */
export const retryHint = (callId: string, sessionId: string) =>
  `the answer to ${callId} is kept: send it again (POST /v1/sessions/${sessionId}/tool_result) to continue ` +
  `the turn without running the tool again, or send a new message`;

/** Why a retry is refused, or null when it may go on. Decided on arrival, before anything is written. */
export function retryRefusal(kept: RetryableTurn, answer: Answer, now: number): Refusal | null {
  const { call_id, tool_name } = kept.call;
  if (kept.expires_at <= now) {
    return {
      code: "continuation_expired",
      message:
        `the turn that stopped after the answer to ${call_id} can no longer be continued (the answer is kept ` +
        `in the conversation): send a new message to go on`,
    };
  }
  if (answer.call_id !== call_id) {
    return {
      code: "conflict",
      message:
        `call_id ${answer.call_id} is not pending; the turn stopped after the answer to ${call_id}: send that ` +
        `answer again to continue it, or send a new message`,
    };
  }
  if (answer.tool_name !== undefined && answer.tool_name !== tool_name) {
    return { code: "conflict", message: `tool_name ${answer.tool_name} does not match the answered call's tool (${tool_name})` };
  }
  const was = kept.answered;
  const is = answeredWith(answer);
  // Both went through the request schema, which writes an answer's keys in one order.
  if (was.action !== is.action || was.is_error !== is.is_error || JSON.stringify(was.content) !== JSON.stringify(is.content)) {
    return {
      code: "conflict",
      message:
        `call ${call_id} was already answered and this answer differs: the first one is kept in the conversation ` +
        `(a tool it approved has run); send the same answer again to continue the turn, or send a new message`,
    };
  }
  return null;
}
