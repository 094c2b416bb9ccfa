/**
 * The lake rows `compare` and `history` need, from any lake (DuckDB locally, Athena on AWS): plain
 * SELECTs over runs, step_summary and interval_totals in the SQL both engines run.
 */
import type { LakeReader } from '../lake/duckdb';
import { findRun, NotFoundError } from '../lake/results';
import { stepKey } from '../report/load';
import type { CompareSide, IntervalSample } from './compare';
import type { HistoryInput, HistoryRunRow } from './history';
import type { StepRow } from './metrics';

const quote = (s: string): string => `'${s.replace(/'/g, "''")}'`;

const STEP_COLUMNS =
  'run_id, cell_id, step_id, variant, repeat, workload, threads, rate, target, status, error, saturated_clients, tps, qps, lat_pct, lat_pct_ms, errors_per_s, ' +
  'lat_p50_ms, lat_p90_ms, lat_p95_ms, lat_p99_ms, lat_p999_ms, lat_max_ms';

export async function loadCompareSide(lake: LakeReader, runId: string): Promise<CompareSide> {
  const run = await findRun(lake, runId);
  const steps = await lake.query<StepRow>(`SELECT ${STEP_COLUMNS} FROM step_summary WHERE run_id = ${quote(run.run_id)} ORDER BY step_index, cell_id`);
  const rows = await lake.query<IntervalSample & { cell_id: string; step_id: string }>(
    `SELECT cell_id, step_id, t, tps, qps, lat_pct_ms, errors_per_s FROM interval_totals WHERE run_id = ${quote(run.run_id)} ORDER BY cell_id, step_id, t`,
  );
  const intervals = new Map<string, IntervalSample[]>();
  for (const r of rows) {
    const k = stepKey(r.cell_id, r.step_id);
    intervals.set(k, [...(intervals.get(k) ?? []), r]);
  }
  return { run: { run_id: run.run_id, spec_name: run.spec_name, started_at: run.started_at, status: run.status, backend: run.backend, plan: run.plan }, steps, intervals };
}

/** Every run of an experiment (by its name) and their step rows; a clear error naming the experiments the lake has when none. */
export async function loadHistoryInput(lake: LakeReader, experiment: string): Promise<HistoryInput> {
  const runs = await lake.query<HistoryRunRow>(`SELECT run_id, started_at, status, backend, plan FROM runs WHERE spec_name = ${quote(experiment)} ORDER BY started_at, run_id`);
  if (runs.length === 0) {
    const known = await lake.query<{ spec_name: string; n: number }>('SELECT spec_name, COUNT(*) AS n FROM runs GROUP BY spec_name ORDER BY spec_name');
    throw new NotFoundError(
      `no run of experiment "${experiment}" in the results lake at ${lake.lakeDir}` +
        (known.length > 0 ? ` (experiments with runs: ${known.map((k) => `${k.spec_name} (${k.n})`).join(', ')})` : ' (the lake has no run)'),
    );
  }
  const steps = await lake.query<StepRow>(`SELECT ${STEP_COLUMNS} FROM step_summary WHERE run_id IN (SELECT run_id FROM runs WHERE spec_name = ${quote(experiment)})`);
  return { experiment, runs, steps };
}
