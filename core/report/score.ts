/**
 * S2's 100-point score: for each target, the sum of its mean QPS and mean TPS over
 * the whole thread sweep; the best target scores 100 and each other one best x (its sum / best sum).
 *
 * A thread count a target could not serve (the step failed, e.g. a connection limit) counts as 0
 * throughput at that point rather than being left out: leaving it out would reward a target for
 * refusing the heaviest loads. Such points are listed so the reader sees why a score dropped.
 */

export interface SweepPoint {
  readonly threads: number;
  /** null when the step failed. */
  readonly tps: number | null;
  readonly qps: number | null;
}

export interface TargetScore {
  readonly target: string;
  readonly meanTps: number;
  readonly meanQps: number;
  /** meanQps + meanTps. */
  readonly sum: number;
  /** 0..100, the best target 100. */
  readonly score: number;
  readonly points: number;
  /** Thread counts that failed and counted as 0. */
  readonly failedThreads: number[];
}

export function sweepScores(
  series: ReadonlyMap<string, readonly SweepPoint[]> | Readonly<Record<string, readonly SweepPoint[]>>,
): TargetScore[] {
  const entries: [string, readonly SweepPoint[]][] =
    series instanceof Map
      ? [...(series as ReadonlyMap<string, readonly SweepPoint[]>).entries()]
      : Object.entries(series as Readonly<Record<string, readonly SweepPoint[]>>);
  const raw = entries.map(([target, points]) => {
    const n = points.length;
    const meanTps = n === 0 ? 0 : points.reduce((a, p) => a + (p.tps ?? 0), 0) / n;
    const meanQps = n === 0 ? 0 : points.reduce((a, p) => a + (p.qps ?? 0), 0) / n;
    const failedThreads = points.filter((p) => p.tps === null || p.qps === null).map((p) => p.threads);
    return { target, meanTps, meanQps, sum: meanTps + meanQps, points: n, failedThreads };
  });
  const best = Math.max(0, ...raw.map((r) => r.sum));
  return raw
    .map((r) => ({ ...r, score: best > 0 ? (100 * r.sum) / best : 0 }))
    .sort((a, b) => b.score - a.score || a.target.localeCompare(b.target));
}

/** The overall score of each target: the mean of its per-workload scores (each workload weighs the same). */
export function overallScores(
  perWorkload: ReadonlyMap<string, readonly TargetScore[]>,
): { target: string; score: number; workloads: number }[] {
  const acc = new Map<string, number[]>();
  for (const scores of perWorkload.values())
    for (const s of scores) acc.set(s.target, [...(acc.get(s.target) ?? []), s.score]);
  return [...acc.entries()]
    .map(([target, xs]) => ({ target, score: xs.reduce((a, b) => a + b, 0) / xs.length, workloads: xs.length }))
    .sort((a, b) => b.score - a.score || a.target.localeCompare(b.target));
}
