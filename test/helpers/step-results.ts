/**
 * Report inputs built in memory (no lake): step_summary rows and a RunData holding them, for unit
 * tests of single report sections.
 */
import type { RunInfo, StepResult } from '../../core/lake/results';
import type { RunData } from '../../core/report/load';
import type { Spec } from '../../core/experiment/schema';

export function stepResult(over: Partial<StepResult> & Pick<StepResult, 'variant' | 'step_id'>): StepResult {
  return {
    run_id: 'unit-run',
    cell_id: `${over.variant}-r${over.repeat ?? 1}`,
    repeat: 1,
    instance_class: 'db.r6g.large',
    az: 'us-east-1a',
    step_index: 0,
    workload: over.step_id,
    test: 'oltp_read_write',
    threads: 8,
    rate: 0,
    offered_tps: 0,
    target: 'writer',
    clients: 1,
    ok_clients: 1,
    status: 'ok',
    error: null,
    started_at: '2024-05-01T10:00:00.000Z',
    ended_at: '2024-05-01T10:01:00.000Z',
    tps: 1000,
    qps: 20000,
    events: 60000,
    reads: null,
    writes: null,
    other: null,
    errors: 0,
    reconnects: 0,
    errors_per_s: 0,
    lat_min_ms: 1,
    lat_avg_ms: 5,
    lat_pct: 99,
    lat_pct_ms: 10,
    lat_max_ms: 30,
    total_time_s: 60,
    interval_count: 60,
    client_cpu_avg_pct: 30,
    client_cpu_max_pct: 40,
    saturated_clients: 0,
    dt: '2024-05-01',
    ...over,
  };
}

export function runData(steps: readonly StepResult[], spec: Spec | null = null): RunData {
  const run: RunInfo = {
    run_id: 'unit-run',
    spec_name: spec?.name ?? 'unit',
    backend: 'aws',
    region: 'us-east-1',
    status: 'succeeded',
    started_at: '2024-05-01T10:00:00.000Z',
    ended_at: '2024-05-01T11:00:00.000Z',
    error: null,
    server_version: null,
    sysbench_version: null,
    plan: '',
    spec: spec ? JSON.stringify(spec) : '',
    notes: '[]',
    cells: '[]',
    dt: '2024-05-01',
  };
  return { run, spec, plan: null, steps, intervals: new Map(), metrics: [] };
}
