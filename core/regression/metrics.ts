/**
 * The metrics runs are judged on, and which direction is better.
 * A step is identified across runs by what it ran, not by cell or position.
 * So a run with more repeats or another order still matches.
 */
import type { StepResult } from '../lake/results';

export type RegressionMetric = 'tps' | 'qps' | 'latency' | 'errors';

export interface MetricInfo {
  readonly metric: RegressionMetric;
  /** Higher values are better for throughput, and worse for latency and errors. */
  readonly higherIsBetter: boolean;
  readonly unit: string;
}

export const REGRESSION_METRICS: readonly MetricInfo[] = [
  { metric: 'tps', higherIsBetter: true, unit: 'transactions/s' },
  { metric: 'qps', higherIsBetter: true, unit: 'queries/s' },
  { metric: 'latency', higherIsBetter: false, unit: 'ms' },
  { metric: 'errors', higherIsBetter: false, unit: 'errors/s' },
];

/** e.g. "TPS" or "p95 latency", at the step's percentile. */
export function metricLabel(metric: RegressionMetric, latencyPercentile: number | null): string {
  switch (metric) {
    case 'tps':
      return 'TPS';
    case 'qps':
      return 'QPS';
    case 'latency':
      return `p${latencyPercentile ?? '?'} latency`;
    case 'errors':
      return 'errors/s';
  }
}

/**
 * sysbench counts deadlocks and lock-wait timeouts as errors.
 * Below this share of transactions they are normal OLTP behaviour, as the report marks them.
 * So an error rate is judged changed only when the change also exceeds this share of the throughput.
 */
export const NORMAL_ERROR_SHARE = 0.001;

/** The fields of a step_summary row this module reads. */
export type StepRow = Pick<
  StepResult,
  | 'run_id'
  | 'cell_id'
  | 'step_id'
  | 'variant'
  | 'repeat'
  | 'workload'
  | 'threads'
  | 'rate'
  | 'target'
  | 'status'
  | 'error'
  | 'saturated_clients'
  | 'tps'
  | 'qps'
  | 'lat_pct'
  | 'lat_pct_ms'
  | 'errors_per_s'
> &
  Partial<Pick<StepResult, 'lat_p50_ms' | 'lat_p90_ms' | 'lat_p95_ms' | 'lat_p99_ms' | 'lat_p999_ms' | 'lat_max_ms'>>;

export interface StepKey {
  readonly variant: string;
  readonly workload: string;
  readonly threads: number;
  /** Offered transactions/s per client, 0 for unlimited. */
  readonly rate: number;
  readonly target: string;
}

export function stepKeyText(k: StepKey): string {
  return `${k.variant}\u0000${k.workload}\u0000${k.threads}\u0000${k.rate}\u0000${k.target}`;
}

/** "read-write t4 @500/s → reader [r6g-large]" */
export function stepKeyLabel(k: StepKey): string {
  return (
    `${k.workload} ` +
    `t${k.threads}${k.rate > 0 ? ` @${k.rate}/s` : ''}${k.target !== 'writer' ? ` → ${k.target}` : ''} ` +
    `[${k.variant}]`
  );
}

/** A step's value of a metric. Null when the step has none. */
export function metricValue(
  row: Pick<StepRow, 'tps' | 'qps' | 'lat_pct_ms' | 'errors_per_s'>,
  metric: RegressionMetric,
): number | null {
  switch (metric) {
    case 'tps':
      return row.tps;
    case 'qps':
      return row.qps;
    case 'latency':
      return row.lat_pct_ms;
    case 'errors':
      return row.errors_per_s ?? (row.tps === null ? null : 0);
  }
}

/** Why a step's numbers are not judged. Null when they are. */
export function notJudgedReason(
  row: Pick<StepRow, 'status' | 'error' | 'saturated_clients' | 'cell_id'>,
): string | null {
  if (row.status !== 'ok') return `failed in ${row.cell_id}${row.error ? `: ${row.error}` : ''}`;
  if (row.saturated_clients > 0)
    return (
      `client-bound in ${row.cell_id} (its client's CPU was saturated: the numbers measure the client, ` +
      `not the server)`
    );
  return null;
}

export type Verdict = 'improved' | 'regressed' | 'within-noise' | 'unknown' | 'not-judged';

/** A direction-free position turned into a verdict for the metric's direction. */
export function directedVerdict(position: 'above' | 'below' | 'inside' | 'unknown', higherIsBetter: boolean): Verdict {
  if (position === 'inside') return 'within-noise';
  if (position === 'unknown') return 'unknown';
  return (position === 'above') === higherIsBetter ? 'improved' : 'regressed';
}

export const VERDICT_TEXT: Readonly<Record<Verdict, string>> = {
  improved: 'improved',
  regressed: 'REGRESSED',
  'within-noise': 'within the noise',
  unknown: 'noise unknown',
  'not-judged': 'not judged',
};
