/**
 * The request as the API sees it for caching and for thinking signatures: one flat sequence of blocks
 * in the order tools, system, messages, each with a chained hash of everything up to it (its prefix)
 * and the running token count. `cache_control` markers are not content: they never change a prefix.
 */
import { approxTokens } from "../../src/lib/text";

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export type Block = { [k: string]: Json };
export type ApiMessage = { role: "user" | "assistant"; content: string | Block[] };
export type ApiRequest = {
  model: string;
  max_tokens?: number;
  stream?: boolean;
  system?: string | Block[];
  tools?: Block[];
  messages: ApiMessage[];
  metadata?: { user_id?: string };
  thinking?: { type?: string; display?: string; budget_tokens?: number };
  output_config?: { effort?: string; format?: { type?: string; schema?: Json } };
  tool_choice?: { type?: string; name?: string };
  temperature?: number;
  top_p?: number;
  top_k?: number;
};

/** Stable JSON: sorted keys, no cache_control, no null or undefined fields. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([k, v]) => k !== "cache_control" && v !== null && v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value ?? null);
}

/** A 106-bit string hash (two 53-bit lanes), hex. Not cryptographic: the fake only needs to notice change. */
export function hash(s: string, seed = 0): string {
  const lane = (salt: number) => {
    let h1 = 0xdeadbeef ^ salt;
    let h2 = 0x41c6ce57 ^ salt;
    for (let i = 0; i < s.length; i++) {
      const ch = s.charCodeAt(i);
      h1 = Math.imul(h1 ^ ch, 2654435761);
      h2 = Math.imul(h2 ^ ch, 1597334677);
    }
    h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
    h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
    return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(16);
  };
  return `${lane(seed)}${lane(seed + 7919)}`;
}

export const blocksOf = (content: string | Block[]): Block[] => (typeof content === "string" ? [{ type: "text", text: content }] : content);

export type SeqItem = {
  block: Block;
  /** Where it sits: `tools.i`, `system.i` or `messages.i.content.j`. */
  path: string;
  message?: number;
  index: number;
  /** Hash of the prefix *before* this block, and including it. */
  before: string;
  after: string;
  /** Tokens up to and including this block. */
  tokens: number;
};

export class Sequence {
  readonly items: SeqItem[] = [];
  private head: string;
  private tokens = 0;

  constructor(scope: string) {
    this.head = hash(scope);
  }

  push(block: Block, path: string, index: number, tag: string, message?: number): SeqItem {
    const body = canonical(block);
    const before = this.head;
    this.head = hash(`${before}|${tag}|${body}`);
    this.tokens += approxTokens(body);
    const item: SeqItem = { block, path, index, before, after: this.head, tokens: this.tokens, ...(message === undefined ? {} : { message }) };
    this.items.push(item);
    return item;
  }

  get hash(): string {
    return this.head;
  }
}

/** The request's blocks in prefix order. `scope` keys caches and signatures (model + account). */
export function sequence(req: ApiRequest, scope: string): Sequence {
  const seq = new Sequence(scope);
  (req.tools ?? []).forEach((t, i) => seq.push(t, `tools.${i}`, i, "tool"));
  if (req.system !== undefined) blocksOf(req.system).forEach((b, i) => seq.push(b, `system.${i}`, i, "system"));
  req.messages.forEach((m, mi) => {
    blocksOf(m.content).forEach((b, bi) => seq.push(b, `messages.${mi}.content.${bi}`, bi, bi === 0 ? `msg:${m.role}` : "blk", mi));
  });
  return seq;
}

/** Signature of a thinking (or redacted_thinking) block: binds model, account, prefix and the block itself. */
export function sign(scope: string, before: string, block: Block): string {
  const { signature: _s, data: _d, ...rest } = block;
  return `sig_${hash(`${scope}|${before}|${canonical(rest)}`, 11)}`;
}
