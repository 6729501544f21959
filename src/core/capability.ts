/**
 * A capability (brain, memory, projects, lessons...) is one value saying what it adds to engram: tools
 * the model can call, context providers for the system prompt, HTTP routes, queue message kinds, cron
 * jobs, its part of erasing a user and the offline model's rules for its tools. The composition root
 * lists the capabilities; the chat core (loop, sessions, prompt assembly, events) only ever sees the
 * registry built from them.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Config } from "../config/config";
import type { Env } from "../config/env";
import type { Statement } from "../db/batch";
import type { Db } from "../db/client";
import type { AppEnv } from "../http/context";
import { composeOfflineRules, type OfflineRules } from "../model/offline-rule";
import type { ContextProvider, TurnScope } from "./context";
import type { CronJob } from "./cron";
import type { McpPrompt } from "./mcp-prompt";
import type { McpResource } from "./mcp-resource";
import type { McpTool } from "./mcp-tool";
import type { QueueKind } from "./queue";
import type { Tool } from "./tool";

export type EraseContext = { env: Env; config: Config; db: Db; userId: string; now: number };

/** The ids the erase batch deleted, by receipt key (each counted statement's RETURNING `id`s). */
export type ErasedIds = Readonly<Record<string, readonly string[]>>;

/** One capability's part of erasing a user. */
export type ErasePlan = {
  /**
   * Statements that run in the one erase batch (one D1 transaction) with every other capability's.
   * A statement with a `count` key adds its RETURNING rows to the receipt under that key.
   */
  statements: { count?: string; statement: Statement }[];
  /** Receipt entries that are true once the batch commits (e.g. working memory cleared). */
  cleared?: string[];
  /** Runs after the batch: cleanup outside D1. Returns counts, or a warning when it could not finish. */
  after?: (erased: ErasedIds) => Promise<{ counts?: Record<string, number>; warning?: string }>;
  /** What of this capability's data is deliberately kept, in words. */
  kept?: string[];
};

/** Prepares the plan; may read (ids to clean outside D1) or act before the batch (e.g. destroy session objects). */
export type EraseHook = (ctx: EraseContext) => Promise<ErasePlan>;

/** The id an archived row takes in the importing account when its id derives from its content (docs/account.md). */
export type ContentId = (userId: string, row: Readonly<Record<string, unknown>>) => Promise<string>;

/** One capability's part of an account import (src/account/import.ts). */
export type ArchivePart = {
  /** Record kinds whose rows are matched by content, and how their id is made. */
  contentIds?: Readonly<Record<string, ContentId>>;
  /** After the import committed (and answered): work on the new rows, by kind (e.g. index imported facts). */
  imported?: (ctx: EraseContext, ids: ErasedIds) => Promise<void>;
};

export type OverviewContext = { db: Db; config: Config; userId: string; now: number };

/**
 * One capability's part of `GET /v1/overview`, the first screen of a client: counts under stable keys
 * and a few recent items, all read for the caller only.
 */
export type OverviewPart = {
  counts: Record<string, number>;
  recent?: { kind: string; id: string; title: string; at: number }[];
};
export type OverviewSource = (ctx: OverviewContext) => Promise<OverviewPart>;

/** Durable facts about the user the chat core noticed (e.g. while summarising old turns), handed to memory. */
export type ObservationSink = (scope: TurnScope, observations: readonly { content: string; category: string }[]) => Promise<void>;

export interface Capability {
  name: string;
  /** Receives observations found by the core; memory records them on its observation bus. */
  observe?: ObservationSink;
  tools?: readonly Tool[];
  /** Tools offered to MCP clients at /mcp (they run outside any chat session: sessionId "mcp"). */
  mcpTools?: readonly McpTool[];
  /** What MCP clients may read at /mcp (`resources/list`, `resources/read`), the caller's own only. */
  mcpResources?: readonly McpResource[];
  /** Prompts MCP clients offer their user in a menu (`prompts/list`, `prompts/get`). */
  mcpPrompts?: readonly McpPrompt[];
  /** Injected into the system prompt in ascending `priority` (ties: registry order). */
  contextProviders?: readonly (ContextProvider & { priority: number })[];
  routes?: OpenAPIHono<AppEnv>;
  queueKinds?: readonly QueueKind[];
  cronJobs?: readonly CronJob[];
  erase?: EraseHook;
  /** Request-body limits above the default for some exact paths (bytes), e.g. transcript uploads. */
  bodyLimits?: Readonly<Record<string, number>>;
  /** Its section of the overview; a capability without one is simply absent from it. */
  overview?: OverviewSource;
  /** How the offline model (no ANTHROPIC_API_KEY) uses its tools: English rules standing in for Claude. */
  offline?: OfflineRules;
  archive?: ArchivePart;
}

/** What the core runs with: every capability's contributions, merged once. */
export type Registry = {
  capabilities: readonly Capability[];
  tools: readonly Tool[];
  mcpTools: readonly McpTool[];
  mcpResources: readonly McpResource[];
  mcpPrompts: readonly McpPrompt[];
  contextProviders: readonly ContextProvider[];
  queueKinds: ReadonlyMap<string, QueueKind>;
  cronJobs: readonly CronJob[];
  eraseHooks: readonly EraseHook[];
  /** Every capability's import parts: content ids by record kind, and the hooks run after an import. */
  contentIds: ReadonlyMap<string, ContentId>;
  importedHooks: readonly NonNullable<ArchivePart["imported"]>[];
  observers: readonly ObservationSink[];
  bodyLimits: ReadonlyMap<string, number>;
  /** Every capability's offline-model rules, for the chat model client (one object: clients are kept per set). */
  offline: OfflineRules;
};

/** Merges capabilities; two contributions under one name (tool, queue kind, cron job) are a wiring bug. */
export function composeRegistry(capabilities: readonly Capability[]): Registry {
  const unique = <T>(what: string, items: T[], name: (t: T) => string): T[] => {
    const seen = new Set<string>();
    for (const item of items) {
      if (seen.has(name(item))) throw new Error(`two capabilities contribute the ${what} ${name(item)}`);
      seen.add(name(item));
    }
    return items;
  };
  const tools = unique(
    "tool",
    capabilities.flatMap((c) => c.tools ?? []),
    (t) => t.name,
  );
  const providers = capabilities
    .flatMap((c) => c.contextProviders ?? [])
    .map((p, order) => ({ p, order }))
    .sort((a, b) => a.p.priority - b.p.priority || a.order - b.order)
    .map(({ p }) => p);
  const kinds = unique(
    "queue kind",
    capabilities.flatMap((c) => c.queueKinds ?? []),
    (k) => k.kind,
  );
  return {
    capabilities,
    tools,
    mcpTools: unique(
      "MCP tool",
      capabilities.flatMap((c) => c.mcpTools ?? []),
      (t) => t.name,
    ),
    mcpResources: unique(
      "MCP resource",
      capabilities.flatMap((c) => c.mcpResources ?? []),
      (r) => r.uriTemplate,
    ),
    mcpPrompts: unique(
      "MCP prompt",
      capabilities.flatMap((c) => c.mcpPrompts ?? []),
      (p) => p.name,
    ),
    contextProviders: unique("context provider", providers, (p) => p.name),
    queueKinds: new Map(kinds.map((k) => [k.kind, k])),
    cronJobs: unique(
      "cron job",
      capabilities.flatMap((c) => c.cronJobs ?? []),
      (j) => j.name,
    ),
    eraseHooks: capabilities.flatMap((c) => (c.erase ? [c.erase] : [])),
    contentIds: new Map(capabilities.flatMap((c) => Object.entries(c.archive?.contentIds ?? {}))),
    importedHooks: capabilities.flatMap((c) => (c.archive?.imported ? [c.archive.imported] : [])),
    observers: capabilities.flatMap((c) => (c.observe ? [c.observe] : [])),
    bodyLimits: new Map(capabilities.flatMap((c) => Object.entries(c.bodyLimits ?? {}))),
    offline: composeOfflineRules(capabilities.flatMap((c) => (c.offline ? [c.offline] : []))),
  };
}

export const toolByName = (tools: readonly Tool[], name: string) => tools.find((t) => t.name === name);
