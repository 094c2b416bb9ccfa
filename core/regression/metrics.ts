/**
 * The metrics runs are judged on, with the direction that is better, and how a step of the lake is
 * identified across runs: by what it ran (variant, workload, threads, offered rate, target), not by
 * cell or position, so a run with more repeats or another order still matches.
 */
import type { StepResult } from '../lake/results';

export type RegressionMetric = 'tps' | 'qps' | 'latency' | 'errors';

export interface MetricInfo {
  readonly metric: RegressionMetric;
  /** Higher values are better (throughput) or worse (latency, errors). */
  readonly higherIsBetter: boolean;
  readonly unit: string;
}

export const REGRESSION_METRICS: readonly MetricInfo[] = [
  { metric: 'tps', higherIsBetter: true, unit: 'transactions/s' },
  { metric: 'qps', higherIsBetter: true, unit: 'queries/s' },
  { metric: 'latency', higherIsBetter: false, unit: 'ms' },
  { metric: 'errors', higherIsBetter: false, unit: 'errors/s' },
];

/** "TPS", "QPS", "p95 latency" (the step's percentile), "errors/s". */
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
 * sysbench counts deadlocks and lock-wait timeouts as errors; below this share of transactions they
 * are normal OLTP behaviour (the report marks steps by the same rule), so an error rate is judged
 * changed only when the change is also larger than this share of the step's throughput.
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
  /** Offered transactions/s per client; 0 = unlimited. */
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

/** A step's value of a metric; null when the step has none (failed). */
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

/** Why a step's numbers are not judged: it failed, or its client was the bottleneck. null when they are. */
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

/** A direction-free position (above, below, inside) turned into a verdict for the metric's direction. */
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
