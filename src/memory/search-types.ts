/** The shapes of fact search, shared by its reads (retrieval-reads.ts) and its ranking (ranking.ts). */
import type { JsonObject } from "../db/schema";
import type { Neighbour } from "./neighbours";
import type { TimeRange } from "./when";

export type SearchMode = "hybrid" | "fulltext" | "vector";
export type SearchOrder = "relevance" | "newest" | "oldest";
export type SearchInput = {
  userId: string;
  query: string;
  k: number;
  /** The connections whose facts count besides the user's own; "active": every active one, read in the same statement. */
  connectionIds: readonly string[] | "active";
  mode?: SearchMode;
  /** Only facts whose event time is at or after / before these (epoch ms). */
  after?: number;
  before?: number;
  order?: SearchOrder;
  /** Superseded statements too (the history of a changing fact), marked by `supersededBy`. */
  history?: boolean;
  /**
   * Of near-equal matches, prefer the latest (a question about the present state of something). Undefined:
   * when the question names the present ("now", "today").
   */
  preferLatest?: boolean;
  /** Attach the turns just before and after each hit in its session (`metadata.session_id`). */
  neighbours?: boolean;
  /**
   * A chat turn's project: that project's facts plus user-level ones (null: user-level only), never
   * another project's. Undefined: every fact of the user's (the API's own search, consolidation).
   */
  projectId?: string | null;
};
export type SearchHit = {
  id: string;
  text: string;
  score: number;
  /** How much of the query's information (rarity-weighted words) the hit contains, 0..1; see `weak`. */
  match: number;
  eventAt: number;
  supersededBy: string | null;
  metadata: JsonObject;
  confidence: number;
  neighbours?: Neighbour[];
};
export type SearchResult = {
  results: SearchHit[];
  degraded: string | null;
  embeddingTokens: number;
  /** The period read from the query, if any, and whether it named the present. */
  when: TimeRange | null;
  current: boolean;
  /** True when even the best hit matches little of the query: likely nothing relevant is stored. */
  weak: boolean;
};

/** A fact row as ranking sees it. */
export type Candidate = {
  id: string;
  rowid: number;
  text: string;
  metadata: string;
  confidence: number;
  recall_count: number;
  last_recalled_at: number | null;
  created_at: number;
  event_at: number | null;
  superseded_by: string | null;
};
/** A full-text candidate with its BM25 relevance (higher is better). */
export type Scored = Candidate & { lexical: number };
/** A vector candidate with its cosine similarity to the query. */
export type VectorCandidate = Candidate & { cosine: number };

/** Every candidate list one search read, before ranking. */
export type Candidates = {
  /** Full-text matches, best first. */
  text: Scored[];
  vector: VectorCandidate[];
  /** How many of the user's facts contain each query word (by stem), capped: the rarity of the word. */
  docFrequency: ReadonlyMap<string, number>;
  /** How many facts the user has (every scope): BM25's collection size. */
  facts: number;
  embeddingTokens: number;
  degraded: string | null;
};
