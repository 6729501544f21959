/**
 * Prompt-cache accounting as documented: a block with `cache_control` is a breakpoint; the prefix up
 * to it (tools, system, messages, in that order) is the cache key. A breakpoint reads the longest
 * cached prefix found at it or up to 20 blocks before it; every breakpoint past what was read, and at
 * least the model's minimum long, is written. `input_tokens` is what follows the last read or write.
 * Entries live 5 minutes and are refreshed by a hit. Scope: model and account (the request's user).
 */
import { modelInfo } from "../../src/config/models";
import type { Sequence } from "./prefix";

const LOOKBACK = 20;
const TTL_MS = 5 * 60 * 1000;
const entries = new Map<string, number>();

export type CacheUsage = { input_tokens: number; cache_creation_input_tokens: number; cache_read_input_tokens: number };

export function account(seq: Sequence, model: string, now = Date.now()): CacheUsage {
  const total = seq.items.at(-1)?.tokens ?? 0;
  const breakpoints = seq.items.map((item, pos) => ({ item, pos })).filter(({ item }) => Boolean(item.block.cache_control));
  const live = (key: string) => (entries.get(key) ?? 0) > now;

  let read = 0;
  search: for (const { pos } of [...breakpoints].reverse()) {
    for (let back = 0; back < LOOKBACK && pos - back >= 0; back++) {
      const item = seq.items[pos - back];
      if (item && live(item.after)) {
        read = item.tokens;
        entries.set(item.after, now + TTL_MS);
        break search;
      }
    }
  }

  let written = read;
  for (const { item } of breakpoints) {
    if (item.tokens <= read || item.tokens < modelInfo(model).minCacheTokens) continue;
    entries.set(item.after, now + TTL_MS);
    written = Math.max(written, item.tokens);
  }
  return { input_tokens: Math.max(0, total - written), cache_creation_input_tokens: written - read, cache_read_input_tokens: read };
}
