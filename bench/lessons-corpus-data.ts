/**
 * The lessons corpora's words and draws, without the Worker: bench/lessons-corpus.ts seeds them into D1, and the same
 * lessons and queries can be rebuilt outside workerd (e.g. in Node's SQLite) to time statements precisely.
 */
import { weightedDraw } from "./draw";
export const USERS = 10;
export const PER_USER = 10_000;

const TECH = `postgres mysql sqlite redis kafka docker kubernetes helm terraform nginx node deno bun python django flask fastapi rails
  react vue svelte nextjs vite webpack esbuild typescript eslint biome prettier jest vitest pytest playwright cypress graphql grpc rest
  oauth jwt cors csrf retry backoff jitter timeout cache ttl index migration schema transaction deadlock lock mutex queue worker cron
  webhook stripe s3 lambda workers d1 durable objects fts5 bm25 embeddings vector logging tracing metrics sentry prometheus grafana
  ci github actions pnpm npm yarn monorepo lockfile semver zod pydantic orm drizzle prisma sqlalchemy alembic pagination cursor
  keyset uuid ulid utf8 encoding json yaml toml env secrets vault ssh tls certificate dns http2 websocket sse stream buffer memory
  leak gc profiling flamegraph benchmark race condition idempotency dedupe hash checksum compression gzip brotli image upload`
  .split(/\s+/)
  .filter(Boolean);
const VERBS = ["use", "avoid", "prefer", "never mock", "always pin", "configure", "validate", "retry", "cache", "index", "quote", "escape", "batch", "stream"];
const WHY = [
  "because it broke production",
  "to keep tests honest",
  "or the build fails",
  "since the API rate-limits",
  "to avoid a deadlock",
  "for idempotent re-syncs",
];

export function rng(seed: number) {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}
/** Zipf-like draw: P(rank r) proportional to 1 / (r + 5). */
export function zipf(words: readonly string[]) {
  return weightedDraw(
    words,
    words.map((_, i) => 1 / (i + 5)),
    "",
  );
}
const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;

const TYPES = ["lesson", "antipattern", "decision", "pattern", "snippet"];
const SIGNALS = ["HIGH", "MED", "LOW"];

export function makeLesson(r: () => number, draw: (r: () => number) => string, i: number) {
  const a = draw(r);
  const b = draw(r);
  const c = draw(r);
  return {
    title: `${pick(r, VERBS)} ${a} with ${b} (${i.toString(36)})`,
    content: `When working on ${c}, ${pick(r, VERBS)} ${a} and ${b}; ${pick(r, WHY)}. Check ${draw(r)} and ${draw(r)} first.`,
    tags: [a, b],
    type: pick(r, TYPES),
    signal: pick(r, SIGNALS),
    project: r() < 0.3 ? `proj-${Math.floor(r() * 5)}` : null,
  };
}

/** 5,000 words: the coding words first, then pseudo-identifiers. */
export function wideVocabulary(): string[] {
  const syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "de", "po", "an", "el", "or", "us", "im"];
  const r = rng(7);
  const extra = Array.from({ length: 5000 - TECH.length }, () => Array.from({ length: 2 + Math.floor(r() * 3) }, () => pick(r, syllables)).join(""));
  return [...TECH, ...extra];
}

/** The lesson draw of one corpus. */
export const corpusDraw = (corpus: "dense" | "zipf") => zipf(corpus === "dense" ? TECH : wideVocabulary());

/** User `u`'s lessons (the bench asks user 3), 1,000 at a time as the seeding inserts them. */
export function lessonsOf(corpus: "dense" | "zipf", u: number, draw = corpusDraw(corpus)) {
  const r = rng(u + 1);
  const out: (ReturnType<typeof makeLesson> & { id: string })[] = [];
  for (let i = 0; i < PER_USER; i++) out.push({ id: `les_${u}_${i}`, ...makeLesson(r, draw, i) });
  return out;
}

/** The 60 queries of a corpus (2-4 drawn words each). */
export function corpusQueries(corpus: "dense" | "zipf", draw = corpusDraw(corpus)): string[] {
  const qr = rng(999);
  return Array.from({ length: 60 }, () => Array.from({ length: 2 + Math.floor(qr() * 3) }, () => draw(qr)).join(" "));
}
