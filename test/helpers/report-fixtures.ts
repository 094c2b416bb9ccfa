/**
 * A whole run written to a lake the way the workflow writes it (run manifest with spec and plan,
 * one steps row per client, per-interval rows, server metrics), from a spec and a function giving
 * each step's numbers. Deterministic: the interval noise comes from a seeded generator.
 */
import { planRun } from '../../core/plan/plan';
import type { IntervalRow, MetricWindowRow, RunRow, ServerMetricRow, StepRow } from '../../core/lake/rows';
import type { CellPlan, StepPlan } from '../../core/plan/types';
import type { Spec } from '../../core/experiment/schema';
import { validateSpec } from '../../core/experiment/validate';
import { scaleSpec, type Scale } from '../../core/experiment/scale';
import { DT, runRow, writeRun, writeStepTable } from './lake-fixtures';

export interface StepNumbers {
  readonly tps: number;
  readonly qps?: number;
  readonly latPctMs?: number;
  readonly latAvgMs?: number;
  /** p50, p90, p95, p99, p99.9 (ms); without it the step has no histogram (null percentiles). */
  readonly latPercentilesMs?: readonly [number, number, number, number, number];
  readonly failed?: string;
  readonly errors?: number;
  readonly reconnects?: number;
  readonly clientCpuPct?: number;
  readonly clientSaturated?: boolean;
  /** Server metrics averaged over the step (CPUUtilization, NetworkTransmitThroughput...). */
  readonly metrics?: Readonly<Record<string, number>>;
  /** Relative amplitude of per-interval noise (default 0.03). */
  readonly noise?: number;
}

export type StepFn = (cell: CellPlan, step: StepPlan) => StepNumbers;

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

export interface WrittenRun {
  readonly runId: string;
  readonly spec: Spec;
}

export interface RunFixtureOptions {
  readonly runId?: string;
  readonly backend?: 'local' | 'aws';
  readonly intervals?: number;
  readonly scripts?: Record<string, string>;
  /** Server metrics whose window lacks datapoints (metric_windows.complete = false); the others are complete. */
  readonly incompleteMetric?: (cell: CellPlan, step: StepPlan, metric: string) => boolean;
  /**
   * Each client's per-interval multipliers of the step's numbers (test/helpers/planted-lakes.ts draws
   * them from the noise model); the step row then holds their mean, as sysbench's totals do. Default:
   * uniform wobble of the step's `noise`, the step row the level itself.
   */
  readonly wobble?: (cell: CellPlan, step: StepPlan, client: number, intervals: number) => readonly number[];
  /** Spec at this scale (core/experiment/scale.ts) before planning, as `run --scale` does. */
  readonly scale?: Scale;
}

/** A run's rows, as the workflow leaves them in the lake. */
export interface RunRows extends WrittenRun {
  readonly run: RunRow;
  readonly steps: readonly StepRow[];
  readonly intervals: readonly IntervalRow[];
  readonly metrics: readonly ServerMetricRow[];
  readonly windows: readonly MetricWindowRow[];
}

export function writeRunFromSpec(
  lakeDir: string,
  specDoc: unknown,
  fn: StepFn,
  options: RunFixtureOptions = {},
): WrittenRun {
  const rows = runRowsFromSpec(specDoc, fn, options);
  writeRun(lakeDir, rows.run);
  writeStepTable(lakeDir, 'steps', rows.steps);
  writeStepTable(lakeDir, 'intervals', rows.intervals);
  if (rows.metrics.length > 0) writeStepTable(lakeDir, 'server_metrics', rows.metrics);
  if (rows.windows.length > 0) writeStepTable(lakeDir, 'metric_windows', rows.windows);
  return { runId: rows.runId, spec: rows.spec };
}

export function runRowsFromSpec(specDoc: unknown, fn: StepFn, options: RunFixtureOptions = {}): RunRows {
  const spec = scaleSpec(validateSpec(specDoc, 'fixture'), options.scale ?? 'full').spec;
  const backend = options.backend ?? 'aws';
  const plan = planRun(spec, {
    backend,
    runId: options.runId ?? `${spec.name}-run`,
    now: new Date('2024-05-01T10:00:00Z'),
    ...(options.scripts ? { scripts: options.scripts } : {}),
  });
  const random = rng(42);
  const steps: StepRow[] = [];
  const intervals: IntervalRow[] = [];
  const metrics: ServerMetricRow[] = [];
  const windows: MetricWindowRow[] = [];
  const intervalCount = options.intervals ?? 20;
  let clock = Date.parse('2024-05-01T10:00:00Z');
  for (const cell of plan.cells) {
    for (const step of cell.steps) {
      const n = fn(cell, step);
      const started = new Date(clock).toISOString();
      clock += step.durationS * 1000 + 2000;
      const ended = new Date(clock).toISOString();
      for (let c = 0; c < step.clients; c++) {
        const failed = n.failed !== undefined;
        const drawn = failed ? [] : options.wobble?.(cell, step, c, intervalCount);
        // The step row's level: the drawn intervals' mean, or the level asked for.
        const level = drawn === undefined || drawn.length === 0 ? 1 : drawn.reduce((a, b) => a + b, 0) / drawn.length;
        const wobbles =
          drawn?.map((w) => w / level) ??
          Array.from({ length: intervalCount }, () => 1 + (n.noise ?? 0.03) * (random() * 2 - 1));
        const share = level / step.clients;
        const tps = failed ? null : n.tps * share;
        const qps = failed ? null : (n.qps ?? n.tps * 20) * share;
        steps.push({
          run_id: plan.runId,
          cell_id: cell.cellId,
          variant: cell.variant.name,
          repeat: cell.repeat,
          instance_class: cell.variant.instanceClass,
          az: cell.variant.az ?? null,
          step_id: step.stepId,
          step_index: step.index,
          workload: step.workload,
          test: step.test ?? step.script?.name ?? '',
          threads: step.threads,
          rate: step.rate,
          target: step.target,
          endpoint_instance: `${cell.cellId}-w`,
          client_id: `client-${c + 1}`,
          client_index: c,
          started_at: started,
          ended_at: ended,
          status: failed ? 'failed' : 'ok',
          error: n.failed ?? null,
          tps,
          qps,
          events: tps === null ? null : Math.round(tps * step.durationS),
          total_time_s: failed ? null : step.durationS,
          reads: null,
          writes: null,
          other: null,
          errors: failed ? null : (n.errors ?? 0),
          reconnects: failed ? null : (n.reconnects ?? 0),
          lat_min_ms: failed ? null : 0.5,
          lat_avg_ms: failed ? null : (n.latAvgMs ?? (n.latPctMs ?? 10) / 2),
          lat_max_ms: failed ? null : (n.latPctMs ?? 10) * 3,
          lat_pct: step.percentile,
          lat_pct_ms: failed ? null : (n.latPctMs ?? 10),
          lat_p50_ms: failed ? null : (n.latPercentilesMs?.[0] ?? null),
          lat_p90_ms: failed ? null : (n.latPercentilesMs?.[1] ?? null),
          lat_p95_ms: failed ? null : (n.latPercentilesMs?.[2] ?? null),
          lat_p99_ms: failed ? null : (n.latPercentilesMs?.[3] ?? null),
          lat_p999_ms: failed ? null : (n.latPercentilesMs?.[4] ?? null),
          interval_count: failed ? 0 : intervalCount,
          client_cpu_avg_pct: n.clientCpuPct ?? 30,
          client_cpu_max_pct: (n.clientCpuPct ?? 30) + 10,
          client_saturated: n.clientSaturated ?? false,
          read_back_checks: null,
          stale_reads: null,
          dt: DT,
        });
        if (failed) continue;
        for (let t = 1; t <= intervalCount; t++) {
          const wobble = wobbles[t - 1] ?? 1;
          intervals.push({
            run_id: plan.runId,
            cell_id: cell.cellId,
            variant: cell.variant.name,
            step_id: step.stepId,
            client_id: `client-${c + 1}`,
            t,
            threads: step.threads,
            tps: tps! * wobble,
            qps: qps! * wobble,
            reads_per_s: 0,
            writes_per_s: 0,
            other_per_s: 0,
            lat_pct_ms: (n.latPctMs ?? 10) / wobble,
            errors_per_s: 0,
            reconnects_per_s: 0,
            queue_length: null,
            concurrency: null,
            dt: DT,
          });
        }
      }
      for (const [metric, value] of Object.entries(n.metrics ?? {})) {
        // Three minutes of datapoints; an incomplete window asked for five.
        const expected = options.incompleteMetric?.(cell, step, metric) ? 5 : 3;
        windows.push({
          run_id: plan.runId,
          cell_id: cell.cellId,
          variant: cell.variant.name,
          step_id: step.stepId,
          instance_id: `${cell.cellId}-w`,
          role: step.target === 'writer' ? 'writer' : 'reader',
          metric,
          source: backend === 'aws' ? 'cloudwatch' : 'local',
          window_start: started,
          window_end: ended,
          period_s: 60,
          expected,
          received: 3,
          complete: expected === 3,
          collected_at: ended,
          dt: DT,
        });
        for (let k = 0; k < 3; k++) {
          metrics.push({
            run_id: plan.runId,
            cell_id: cell.cellId,
            variant: cell.variant.name,
            step_id: step.stepId,
            instance_id: `${cell.cellId}-w`,
            role: step.target === 'writer' ? 'writer' : 'reader',
            metric,
            ts: new Date(Date.parse(started) + k * 60000).toISOString(),
            value,
            unit: metric.startsWith('Network') ? 'Bytes/Second' : 'Percent',
            source: backend === 'aws' ? 'cloudwatch' : 'local',
            dt: DT,
          });
        }
      }
    }
  }
  const run = runRow({
    run_id: plan.runId,
    spec_name: spec.name,
    spec: JSON.stringify(spec),
    plan: JSON.stringify({ ...plan, scripts: {} }),
    backend,
    region: spec.region,
    notes: JSON.stringify(plan.notes),
    started_at: '2024-05-01T10:00:00.000Z',
    ended_at: new Date(clock).toISOString(),
  });
  return { runId: plan.runId, spec, run, steps, intervals, metrics, windows };
}
