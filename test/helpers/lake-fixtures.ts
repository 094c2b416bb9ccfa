/**
 * Builders for real lake rows (the row types of core/lake/rows.ts) written in the lake's key layout,
 * so lake and report tests read files exactly like the workflow leaves them.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import {
  lakeKeys,
  toJsonLines,
  type IntervalRow,
  type MetricWindowRow,
  type RunRow,
  type ServerMetricRow,
  type StepRow,
  type VerdictsRow,
} from '../../core/lake/rows';

export const DT = '2024-05-01';

export function runRow(over: Partial<RunRow> & Pick<RunRow, 'run_id'>): RunRow {
  return {
    spec_name: 'test-spec',
    spec: '{}',
    spec_sha256: '0'.repeat(64),
    plan: '{}',
    backend: 'local',
    region: 'us-east-1',
    engine_version: '3.04.0',
    server_version: '10.11.6-MariaDB',
    sysbench_version: 'sysbench 1.0.20',
    tool_version: '0.1.0',
    git_sha: null,
    started_at: '2024-05-01T10:00:00.000Z',
    ended_at: '2024-05-01T10:10:00.000Z',
    status: 'succeeded',
    error: null,
    cells: '[]',
    notes: '[]',
    dt: DT,
    ...over,
  };
}

export function stepRow(over: Partial<StepRow> & Pick<StepRow, 'run_id' | 'variant' | 'step_id'>): StepRow {
  const repeat = over.repeat ?? 1;
  return {
    cell_id: `${over.variant}-r${repeat}`,
    repeat,
    instance_class: 'db.r6g.large',
    az: null,
    step_index: 0,
    workload: 'rw',
    test: 'oltp_read_write',
    threads: 4,
    rate: 0,
    target: 'writer',
    endpoint_instance: `${over.variant}-w`,
    client_id: 'client-1',
    client_index: 0,
    started_at: '2024-05-01T10:00:00.000Z',
    ended_at: '2024-05-01T10:01:00.000Z',
    status: 'ok',
    error: null,
    tps: 100,
    qps: 2000,
    events: 6000,
    total_time_s: 60,
    reads: 84000,
    writes: 24000,
    other: 12000,
    errors: 0,
    reconnects: 0,
    lat_min_ms: 1,
    lat_avg_ms: 10,
    lat_max_ms: 50,
    lat_pct: 95,
    lat_pct_ms: 20,
    lat_p50_ms: 8,
    lat_p90_ms: 16,
    lat_p95_ms: 20,
    lat_p99_ms: 30,
    lat_p999_ms: 45,
    interval_count: 60,
    client_cpu_avg_pct: 30,
    client_cpu_max_pct: 45,
    client_saturated: false,
    read_back_checks: null,
    stale_reads: null,
    dt: DT,
    ...over,
  };
}

export function intervalRow(
  over: Partial<IntervalRow> & Pick<IntervalRow, 'run_id' | 'variant' | 'step_id' | 't'>,
): IntervalRow {
  return {
    cell_id: `${over.variant}-r1`,
    client_id: 'client-1',
    threads: 4,
    tps: 100,
    qps: 2000,
    reads_per_s: 1400,
    writes_per_s: 400,
    other_per_s: 200,
    lat_pct_ms: 20,
    errors_per_s: 0,
    reconnects_per_s: 0,
    queue_length: null,
    concurrency: null,
    dt: DT,
    ...over,
  };
}

export function metricRow(
  over: Partial<ServerMetricRow> & Pick<ServerMetricRow, 'run_id' | 'variant' | 'step_id' | 'metric' | 'value'>,
): ServerMetricRow {
  return {
    cell_id: `${over.variant}-r1`,
    instance_id: `${over.variant}-w`,
    role: 'writer',
    ts: '2024-05-01T10:00:30.000Z',
    unit: 'Percent',
    source: 'local',
    dt: DT,
    ...over,
  };
}

function put(lakeDir: string, key: string, rows: readonly object[]): void {
  const file = join(lakeDir, key);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, toJsonLines(rows));
}

export function writeRun(lakeDir: string, run: RunRow): void {
  put(lakeDir, lakeKeys.run(run.dt, run.run_id), [run]);
}

/** Writes each table's rows grouped by (run, cell, step), one file per step as the workflow does. */
export function writeStepTable(
  lakeDir: string,
  table: 'steps' | 'intervals' | 'server_metrics' | 'metric_windows',
  rows: readonly (StepRow | IntervalRow | ServerMetricRow | MetricWindowRow)[],
): void {
  const groups = new Map<string, (StepRow | IntervalRow | ServerMetricRow | MetricWindowRow)[]>();
  for (const r of rows) {
    const key = lakeKeys.stepTable(table, r.dt, r.run_id, r.cell_id, r.step_id);
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  for (const [key, group] of groups) put(lakeDir, key, group);
}

export function verdictRow(
  over: Partial<VerdictsRow> & Pick<VerdictsRow, 'run_id' | 'metric' | 'verdict'>,
): VerdictsRow {
  return {
    experiment: 'exp',
    variant: 'a',
    workload: 'rw',
    threads: 4,
    rate: 0,
    target: 'writer',
    measurement_hash: 'abc123def456',
    metric_label: over.metric === 'latency' ? 'p95 latency' : over.metric.toUpperCase(),
    value: 100,
    baseline_mean: 100,
    baseline_runs: 3,
    ratio: 1,
    interval_low: 90,
    interval_high: 110,
    since_run_id: null,
    reason: 'inside the 99% prediction interval of the last stable segment',
    computed_at: '2024-05-01T11:00:00.000Z',
    dt: DT,
    ...over,
  };
}

/** One run's verdicts file, as ComputeVerdicts writes it. */
export function writeVerdicts(lakeDir: string, rows: readonly VerdictsRow[]): void {
  put(lakeDir, lakeKeys.verdicts(rows[0]!.dt, rows[0]!.run_id), rows);
}
