/**
 * What one segment of a turn runs with (`Segment`), and how it is carried across a suspension: a turn's state is
 * stored with its continuation (or kept for a retry) and a later segment is rebuilt from it.
 */
import type { Continuation, TurnState } from "../bridge/continuation";
import { inCallOrder, type TurnTools, turnTools } from "../bridge/toolset";
import type { MessageParam, Progress, Suspension } from "../chat/loop";
import { loadConfig } from "../config/config";
import type { Env } from "../config/env";
import type { Registry } from "../core/capability";
import type { TurnScope } from "../core/context";
import { addUsage, zeroUsage } from "../core/events";
import type { EvidenceBlock } from "../core/evidence";
import type { Db } from "../db/client";
import type { Plan } from "../db/schema";
import type { StoredMessage } from "./history";

/** Who is asking, in which session; `shard` holds the user's rows (src/db/shards.ts), as the key lookup found it. */
export type Caller = { turnId: string; userId: string; plan: Plan; sessionId: string; shard: number };

export type Segment = {
  scope: TurnScope;
  model: string;
  system: string;
  /** The turn's evidence: sent with every request of the turn, never stored in history (sessions/history.ts). */
  evidence: readonly EvidenceBlock[];
  tools: TurnTools;
  /** How far the turn had come before this segment (absent: this is its first). */
  progress?: Progress;
  counters: Map<string, number>;
  /** The prompt's sections and their ids (ToolContext.injected): kept across suspensions, like the prompt. */
  injected: ReadonlyMap<string, string[]>;
  stream: boolean;
  /** The live history, when the segment has read it already (a chat segment, for its prompt); else it is read from storage. */
  rows?: StoredMessage[];
};

export function turnScope(db: Db, env: Env, caller: Caller, siteId: string | null, projectId: string | null): TurnScope {
  const config = loadConfig(env);
  return { db, env, config, userId: caller.userId, plan: caller.plan, sessionId: caller.sessionId, siteId, projectId };
}

/** The segment that carries a turn on from its stored state (a continuation, or a turn kept for its retry). */
export function resumedSegment(db: Db, env: Env, registry: Registry, caller: Caller, s: TurnState): Segment {
  return {
    scope: turnScope(db, env, caller, s.site_id, s.project_id),
    model: s.model,
    system: s.system,
    evidence: s.evidence ?? [],
    tools: turnTools(registry.tools, s.client_tools, s.server_tools),
    progress: { iterations: s.iterations, usage: addUsage(zeroUsage(), s.usage), toolsUsed: s.tools_used },
    counters: new Map(Object.entries(s.counters)),
    injected: new Map(Object.entries(s.injected)),
    stream: s.stream,
  };
}

/** The stored state of a segment that suspended: everything the segment resuming it needs. */
export function continuationOf(seg: Segment, suspended: Suspension & Progress, now: number, expiresAt: number): Continuation {
  const { scope } = seg;
  return {
    v: 2,
    user_id: scope.userId,
    session_id: scope.sessionId,
    site_id: scope.siteId,
    project_id: scope.projectId,
    model: seg.model,
    system: seg.system,
    ...(seg.evidence.length ? { evidence: [...seg.evidence] } : {}),
    messages: suspended.messages,
    results: suspended.results,
    pending: suspended.pending,
    client_tools: [...seg.tools.client],
    server_tools: seg.tools.server.map((t) => t.name),
    tools_used: suspended.toolsUsed,
    iterations: suspended.iterations,
    usage: suspended.usage,
    counters: Object.fromEntries(seg.counters),
    injected: Object.fromEntries(seg.injected),
    stream: seg.stream,
    created_at: now,
    expires_at: expiresAt,
  };
}

/** The suspended assistant message(s), then one user message with every tool_result, in call order. */
export function completed(messages: MessageParam[], results: Parameters<typeof inCallOrder>[1]): MessageParam[] {
  const assistant = messages.at(-1);
  return [...messages, { role: "user", content: assistant ? inCallOrder(assistant, results) : [...results] }];
}
