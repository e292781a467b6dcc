// Shared shapes and statistics of the benchmarks.

export interface BenchResult {
  readonly name: string;
  /** Human-readable report lines. */
  readonly lines: readonly string[];
  /** Whether the bench met its stated target. */
  readonly ok: boolean;
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((x, y) => x - y);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}
