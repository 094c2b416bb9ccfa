/**
 * Runs and step rows for the compare/history tests: plans made by the real planner from a small
 * nightly-like spec (so measurement hashes come from real plans), step_summary-shaped rows, and
 * the same written into a lake directory (runs, steps, intervals) for the DuckDB and CLI tests.
 */
import { planRun } from '../../core/plan/plan';
import type { StepRow as SummaryRow } from '../../core/regression/metrics';
import type { HistoryRunRow } from '../../core/regression/history';
import type { SpecInput } from '../../core/experiment/schema';
import { validateSpec } from '../../core/experiment/validate';
import { intervalRow, runRow, stepRow, writeRun, writeStepTable } from './lake-fixtures';
import type { IntervalRow, RunRow, StepRow as LakeStepRow } from '../../core/lake/rows';

export function nightlySpec(over: Partial<SpecInput> = {}): SpecInput {
  return {
    name: 'nightly',
    engine: { version: '3.10.4' },
    variants: [
      { name: 'r6g', instanceClass: 'db.r6g.large', instanceParameters: { max_prepared_stmt_count: 1048576 } },
    ],
    data: { tables: 4, tableSize: 10000 },
    defaults: { durationS: 60, warmupS: 10, reportIntervalS: 1, percentile: 95 },
    workloads: [{ name: 'rw', test: 'oltp_read_write', threads: [8] }],
    repeats: 1,
    ...over,
  };
}

function planJson(spec: SpecInput, runId: string): string {
  return JSON.stringify(planRun(validateSpec(spec, 'test spec'), { backend: 'local', runId }));
}

/** Run i of a history: started i hours after a fixed time, so ids and times order alike. */
export function historyRun(
  i: number,
  spec: SpecInput = nightlySpec(),
  over: Partial<HistoryRunRow> = {},
): HistoryRunRow {
  const runId = `nightly-${String(i).padStart(3, '0')}`;
  return {
    run_id: runId,
    started_at: new Date(Date.UTC(2026, 0, 1) + i * 86_400_000).toISOString(),
    status: 'succeeded',
    backend: 'local',
    plan: planJson(spec, runId),
    ...over,
  };
}

export function summaryRow(runId: string, over: Partial<SummaryRow> = {}): SummaryRow {
  return {
    run_id: runId,
    cell_id: 'r6g-r1',
    step_id: 'rw-t8-max',
    variant: 'r6g',
    repeat: 1,
    workload: 'rw',
    threads: 8,
    rate: 0,
    target: 'writer',
    status: 'ok',
    error: null,
    saturated_clients: 0,
    tps: 1000,
    qps: 20000,
    lat_pct: 95,
    lat_pct_ms: 10,
    errors_per_s: 0,
    ...over,
  };
}

/**
 * A run in a lake directory: its runs row (with a real plan) and, per (repeat, tps), one client's
 * step row and `seconds` interval rows around that tps (a fixed wobble, so batch means have spread).
 */
export function writeLakeRun(
  lakeDir: string,
  runId: string,
  startedAt: string,
  repeats: readonly { tps: number; latencyMs?: number; status?: string; saturated?: boolean }[],
  spec: SpecInput = nightlySpec(),
  seconds = 20,
  backend: RunRow['backend'] = 'local',
): void {
  writeRun(
    lakeDir,
    runRow({ run_id: runId, spec_name: spec.name, started_at: startedAt, plan: planJson(spec, runId), backend }),
  );
  const steps: LakeStepRow[] = [];
  const intervals: IntervalRow[] = [];
  repeats.forEach((r, k) => {
    const repeat = k + 1;
    const failed = r.status === 'failed';
    steps.push(
      stepRow({
        run_id: runId,
        variant: 'r6g',
        repeat,
        cell_id: `r6g-r${repeat}`,
        step_id: 'rw-t8-max',
        workload: 'rw',
        threads: 8,
        status: failed ? 'failed' : 'ok',
        error: failed ? 'FATAL: connection lost' : null,
        tps: failed ? null : r.tps,
        qps: failed ? null : r.tps * 20,
        lat_pct_ms: failed ? null : (r.latencyMs ?? 10),
        total_time_s: seconds,
        errors: 0,
        client_saturated: r.saturated === true,
        started_at: startedAt,
      }),
    );
    for (let t = 1; t <= seconds && !failed; t++) {
      const wobble = 1 + 0.02 * Math.sin(t * 1.7 + repeat);
      intervals.push(
        intervalRow({
          run_id: runId,
          variant: 'r6g',
          cell_id: `r6g-r${repeat}`,
          step_id: 'rw-t8-max',
          t,
          tps: r.tps * wobble,
          qps: r.tps * 20 * wobble,
          lat_pct_ms: (r.latencyMs ?? 10) / wobble,
        }),
      );
    }
  });
  writeStepTable(lakeDir, 'steps', steps);
  if (intervals.length > 0) writeStepTable(lakeDir, 'intervals', intervals);
}
