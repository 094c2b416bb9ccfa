/**
 * One round's value of a question's metric for each of its two variants.
 * It is the geometric mean over the steps both variants ran, so its ratio is the mean of per-step ratios.
 */
import { lowerIsBetter, type NamedHorizonQuestion } from '../../experiment/rounds';
import type { StepRow } from '../../lake/rows';
import type { RoundValues } from './round-types';

/** A step's value of the metric, summed over its clients. Latency takes the worst client's. */
function stepValue(rows: readonly StepRow[], q: NamedHorizonQuestion, hourlyUsd: number | undefined): number | null {
  const metric = q.metric.replace(/_per_usd$/, '');
  if (lowerIsBetter(q.metric)) {
    const column = `lat_${metric}_ms` as 'lat_p50_ms' | 'lat_p90_ms' | 'lat_p95_ms' | 'lat_p99_ms';
    const values = rows.map((r) => r[column]).filter((v): v is number => typeof v === 'number' && v > 0);
    return values.length === rows.length && values.length > 0 ? Math.max(...values) : null;
  }
  const values = rows.map((r) => (metric === 'qps' ? r.qps : r.tps));
  if (values.some((v) => typeof v !== 'number' || v <= 0)) return null;
  const total = (values as number[]).reduce((a, b) => a + b, 0);
  if (!q.metric.endsWith('_per_usd')) return total;
  return hourlyUsd === undefined ? null : total / hourlyUsd;
}

const geomean = (xs: readonly number[]): number => Math.exp(xs.reduce((a, x) => a + Math.log(x), 0) / xs.length);

/**
 * Each round's values, in round order. A round where no step of the pair measured is left out.
 * hourlyUsd gives each variant's $/h for the *_per_usd metrics.
 */
export function roundValues(
  rows: readonly StepRow[],
  q: NamedHorizonQuestion,
  rounds: number,
  hourlyUsd: Readonly<Record<string, number>> = {},
): RoundValues[] {
  const out: RoundValues[] = [];
  for (let round = 1; round <= rounds; round++) {
    const steps = (variant: string) => {
      const byStep = new Map<string, StepRow[]>();
      for (const r of rows) {
        if (r.variant !== variant || r.repeat !== round || r.status !== 'ok') continue;
        if (q.workload !== undefined && r.workload !== q.workload) continue;
        byStep.set(r.step_id, [...(byStep.get(r.step_id) ?? []), r]);
      }
      return byStep;
    };
    const base = steps(q.baseline);
    const cand = steps(q.candidate);
    const pairs: [number, number][] = [];
    for (const [stepId, baseRows] of base) {
      const candRows = cand.get(stepId);
      if (candRows === undefined) continue;
      const b = stepValue(baseRows, q, hourlyUsd[q.baseline]);
      const c = stepValue(candRows, q, hourlyUsd[q.candidate]);
      if (b !== null && c !== null) pairs.push([b, c]);
    }
    if (pairs.length === 0) continue;
    out.push({ round, baseline: geomean(pairs.map((p) => p[0])), candidate: geomean(pairs.map((p) => p[1])) });
  }
  return out;
}
