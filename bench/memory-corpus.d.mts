export declare const DENSE_QUERIES: readonly string[];
export declare function rng(seed: number): () => number;
export declare function pick<T>(r: () => number, xs: readonly T[]): T;
export declare function denseFact(r: () => number, i: number): string;
