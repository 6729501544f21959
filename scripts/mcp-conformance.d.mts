export type ConformanceResult = {
  /** The suite's exit code: 0 when every failure is in the baseline and no baseline entry passes. */
  code: number;
  passed: string[];
  failed: string[];
  total: number;
};

export declare function runConformance(options: {
  /** A running engram, e.g. http://127.0.0.1:8787 */
  origin: string;
  adminToken: string;
  /** Every scenario, without the baseline. */
  all?: boolean;
  /** Where the suite's own report goes; console.log by default. */
  log?: (line: string) => void;
}): Promise<ConformanceResult>;
