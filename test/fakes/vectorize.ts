/**
 * A fake Vectorize (V2) index for tests: Vectorize cannot run offline. It rejects what Cloudflare's Vectorize
 * documentation says the real binding rejects (Vectorize API reference and Limits pages, read November 2026), and
 * otherwise behaves like it where engram depends on it: cosine scores over the stored vectors, namespaces as
 * isolated partitions, metadata filters only on declared metadata indexes, and writes that become visible only
 * when the index catches up (`flush`), as the real one is eventually consistent.
 */
const encoder = new TextEncoder();
const bytes = (s: string) => encoder.encode(s).length;

/** Documented limits of a V2 index on Workers Paid. */
export const VECTORIZE_LIMITS = {
  maxIdBytes: 64,
  maxNamespaceBytes: 64,
  maxNamespaces: 50_000,
  maxUpsertBatch: 1000,
  maxMetadataBytes: 10 * 1024,
  /** `topK` ceiling without values or all metadata, and with either. */
  maxTopK: 100,
  maxTopKWithValuesOrMetadata: 20,
  maxFilterBytes: 2048,
} as const;

export class VectorizeError extends Error {
  override name = "VectorizeError";
}

type Stored = { id: string; values: number[]; namespace?: string; metadata?: Record<string, VectorizeVectorMetadata> };
type Options = { dimensions: number; maxNamespaces?: number; metadataIndexes?: string[]; lagging?: boolean };

export class FakeVectorize implements Vectorize {
  readonly dimensions: number;
  /** Every query's options, for assertions on what the code under test asked for. */
  readonly queries: VectorizeQueryOptions[] = [];
  private readonly visible = new Map<string, Stored>();
  private pending: (() => void)[] = [];
  private mutations = 0;
  private readonly maxNamespaces: number;
  private readonly metadataIndexes: ReadonlySet<string>;
  private readonly lagging: boolean;

  constructor(options: Options) {
    this.dimensions = options.dimensions;
    this.maxNamespaces = options.maxNamespaces ?? VECTORIZE_LIMITS.maxNamespaces;
    this.metadataIndexes = new Set(options.metadataIndexes ?? []);
    this.lagging = options.lagging ?? true;
  }

  /**
   * The fake as the Worker's binding type: `wrangler types` names it `VectorizeIndex` (the beta's type), while a
   * V2 index's binding is `Vectorize`, which this class implements.
   */
  get binding(): VectorizeIndex {
    return this as unknown as VectorizeIndex;
  }

  /** The index catches up: every accepted write and delete becomes visible to queries. */
  flush(): void {
    for (const apply of this.pending) apply();
    this.pending = [];
  }

  /** The stored vectors' ids in a namespace (the real binding cannot list them; tests can). */
  idsIn(namespace: string | undefined): string[] {
    return [...this.visible.values()].filter((v) => v.namespace === namespace).map((v) => v.id);
  }

  async describe(): Promise<VectorizeIndexInfo> {
    return { vectorCount: this.visible.size, dimensions: this.dimensions, processedUpToDatetime: Date.now(), processedUpToMutation: this.mutations };
  }

  async query(vector: VectorFloatArray | number[], options: VectorizeQueryOptions = {}): Promise<VectorizeMatches> {
    this.queries.push(options);
    const q = this.checkValues("query", [...vector]);
    const topK = options.topK ?? 5;
    const returnMetadata = options.returnMetadata ?? "none";
    if (returnMetadata !== "none" && returnMetadata !== "indexed" && returnMetadata !== "all") {
      throw new VectorizeError(`VECTOR_QUERY_ERROR: returnMetadata must be "none", "indexed" or "all", got ${JSON.stringify(returnMetadata)}`);
    }
    const heavy = options.returnValues === true || returnMetadata === "all";
    const maxTopK = heavy ? VECTORIZE_LIMITS.maxTopKWithValuesOrMetadata : VECTORIZE_LIMITS.maxTopK;
    if (!Number.isInteger(topK) || topK < 1 || topK > maxTopK) {
      throw new VectorizeError(
        `VECTOR_QUERY_ERROR: topK must be an integer from 1 to ${maxTopK}${heavy ? " with returnValues or returnMetadata=all" : ""}, got ${topK}`,
      );
    }
    if (options.namespace !== undefined) this.checkNamespace("query", options.namespace);
    const filter = options.filter;
    if (filter !== undefined && (Object.keys(filter).length === 0 || bytes(JSON.stringify(filter)) >= VECTORIZE_LIMITS.maxFilterBytes)) {
      throw new VectorizeError(`VECTOR_QUERY_ERROR: filter must be a non-empty object under ${VECTORIZE_LIMITS.maxFilterBytes} bytes`);
    }
    const matches = [...this.visible.values()]
      .filter((v) => options.namespace === undefined || v.namespace === options.namespace)
      .filter((v) => filter === undefined || this.matchesFilter(v, filter))
      .map((v) => ({ v, score: cosine(q, v.values) }))
      .sort((a, b) => b.score - a.score)
      .slice(0, topK)
      .map(({ v, score }): VectorizeMatch => {
        const m: VectorizeMatch = { id: v.id, score };
        if (options.returnValues) m.values = [...v.values];
        if (returnMetadata === "all" && v.metadata) m.metadata = { ...v.metadata };
        if (returnMetadata === "indexed" && v.metadata) {
          m.metadata = Object.fromEntries(Object.entries(v.metadata).filter(([k]) => this.metadataIndexes.has(k)));
        }
        return m;
      });
    return { count: matches.length, matches };
  }

  async queryById(vectorId: string, options?: VectorizeQueryOptions): Promise<VectorizeMatches> {
    const v = this.visible.get(vectorId);
    return v ? this.query(v.values, options) : { count: 0, matches: [] };
  }

  async insert(vectors: VectorizeVector[]): Promise<VectorizeAsyncMutation> {
    return this.write("insert", vectors, (v) => !this.visible.has(v.id));
  }

  async upsert(vectors: VectorizeVector[]): Promise<VectorizeAsyncMutation> {
    return this.write("upsert", vectors, () => true);
  }

  async deleteByIds(ids: string[]): Promise<VectorizeAsyncMutation> {
    for (const id of ids) this.checkId("delete", id);
    return this.mutate(() => {
      for (const id of ids) this.visible.delete(id);
    });
  }

  async getByIds(ids: string[]): Promise<VectorizeVector[]> {
    return ids.flatMap((id) => {
      const v = this.visible.get(id);
      return v ? [{ ...v, values: [...v.values] }] : [];
    });
  }

  private async write(op: string, vectors: VectorizeVector[], accept: (v: Stored) => boolean): Promise<VectorizeAsyncMutation> {
    const upper = op.toUpperCase();
    if (vectors.length > VECTORIZE_LIMITS.maxUpsertBatch) {
      throw new VectorizeError(`VECTOR_${upper}_ERROR: at most ${VECTORIZE_LIMITS.maxUpsertBatch} vectors a call from a Worker, got ${vectors.length}`);
    }
    const checked = vectors.map((v): Stored => {
      this.checkId(op, v.id);
      if (v.namespace !== undefined) this.checkNamespace(op, v.namespace);
      if (v.metadata !== undefined) this.checkMetadata(op, v.id, v.metadata);
      return { id: v.id, values: this.checkValues(op, [...v.values], v.id), namespace: v.namespace, metadata: v.metadata };
    });
    const namespaces = new Set([...this.visible.values()].map((v) => v.namespace).filter((n): n is string => n !== undefined));
    for (const v of checked) if (v.namespace !== undefined) namespaces.add(v.namespace);
    if (namespaces.size > this.maxNamespaces) {
      throw new VectorizeError(`VECTOR_${upper}_ERROR: an index holds at most ${this.maxNamespaces} namespaces`);
    }
    return this.mutate(() => {
      for (const v of checked) if (accept(v)) this.visible.set(v.id, v);
    });
  }

  private mutate(apply: () => void): VectorizeAsyncMutation {
    this.mutations++;
    if (this.lagging) this.pending.push(apply);
    else apply();
    return { mutationId: `mutation-${this.mutations}` };
  }

  private checkValues(op: string, values: unknown[], id?: string): number[] {
    const what = id === undefined ? "the query vector" : `vector ${JSON.stringify(id)}`;
    if (values.length !== this.dimensions) {
      throw new VectorizeError(`VECTOR_${op.toUpperCase()}_ERROR: ${what} has ${values.length} dimensions, the index has ${this.dimensions}`);
    }
    if (!values.every((x): x is number => typeof x === "number" && Number.isFinite(x))) {
      throw new VectorizeError(`VECTOR_${op.toUpperCase()}_ERROR: ${what} has a value that is not a finite number`);
    }
    return values;
  }

  private checkId(op: string, id: string): void {
    if (typeof id !== "string" || id.length === 0 || bytes(id) > VECTORIZE_LIMITS.maxIdBytes) {
      throw new VectorizeError(`VECTOR_${op.toUpperCase()}_ERROR: a vector id must be 1 to ${VECTORIZE_LIMITS.maxIdBytes} bytes, got ${JSON.stringify(id)}`);
    }
  }

  private checkNamespace(op: string, namespace: string): void {
    if (typeof namespace !== "string" || bytes(namespace) > VECTORIZE_LIMITS.maxNamespaceBytes) {
      throw new VectorizeError(
        `VECTOR_${op.toUpperCase()}_ERROR: a namespace is at most ${VECTORIZE_LIMITS.maxNamespaceBytes} bytes, got ${JSON.stringify(namespace)}`,
      );
    }
  }

  private checkMetadata(op: string, id: string, metadata: Record<string, unknown>): void {
    const bad = Object.keys(metadata).find((k) => k === "" || k.includes(".") || k.includes('"') || k.startsWith("$"));
    if (bad !== undefined) throw new VectorizeError(`VECTOR_${op.toUpperCase()}_ERROR: metadata key ${JSON.stringify(bad)} of vector ${id} is not allowed`);
    if (bytes(JSON.stringify(metadata)) > VECTORIZE_LIMITS.maxMetadataBytes) {
      throw new VectorizeError(`VECTOR_${op.toUpperCase()}_ERROR: metadata of vector ${id} is over ${VECTORIZE_LIMITS.maxMetadataBytes} bytes`);
    }
  }

  /** Only declared metadata indexes can be filtered on: a vector matches nothing on a property no index covers. */
  private matchesFilter(v: Stored, filter: VectorizeVectorMetadataFilter): boolean {
    return Object.entries(filter).every(([key, condition]) => {
      if (!this.metadataIndexes.has(key)) return false;
      const value = v.metadata?.[key];
      if (condition === null || typeof condition !== "object") return value === condition;
      return Object.entries(condition).every(([op, arg]) => {
        if (op === "$eq") return value === arg;
        if (op === "$ne") return value !== arg;
        if (op === "$in") return Array.isArray(arg) && arg.some((a) => a === value);
        if (op === "$nin") return Array.isArray(arg) && !arg.some((a) => a === value);
        throw new VectorizeError(`fake Vectorize: filter operator ${op} is not modelled`);
      });
    });
  }
}

function cosine(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  a.forEach((x, i) => {
    const y = b[i] ?? 0;
    dot += x * y;
    na += x * x;
    nb += y * y;
  });
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
}
