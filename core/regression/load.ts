/**
 * The lake rows `compare` and `history` need, from DuckDB or Athena, in SQL both engines run.
 * A history reads only what it analyses, the runs in its window.
 * A local lake is opened twice, first over the runs table and then over the files of the runs read.
 * DuckDB's cost is per file opened.
 */
import type { LakeReader } from '../lake/duckdb';
import { findRun, NotFoundError } from '../lake/results';
import { stepKey } from '../report/load';
import type { CompareSide, ConfigValue, IntervalSample } from './compare';
import type { HistoryInput, HistoryRunRow } from './history';
import type { StepRow } from './metrics';

const quote = (s: string): string => `'${s.replace(/'/g, "''")}'`;

const STEP_COLUMNS =
  'run_id, cell_id, step_id, variant, repeat, workload, threads, rate, target, status, error, ' +
  'saturated_clients, tps, qps, lat_pct, lat_pct_ms, errors_per_s, ' +
  'lat_p50_ms, lat_p90_ms, lat_p95_ms, lat_p99_ms, lat_p999_ms, lat_max_ms';

export async function loadCompareSide(lake: LakeReader, runId: string): Promise<CompareSide> {
  const run = await findRun(lake, runId);
  const steps = await lake.query<StepRow>(
    `SELECT ${STEP_COLUMNS} FROM step_summary WHERE run_id = ${quote(run.run_id)} ORDER BY step_index, cell_id`,
  );
  const rows = await lake.query<IntervalSample & { cell_id: string; step_id: string }>(
    `SELECT cell_id, step_id, t, tps, qps, lat_pct_ms, errors_per_s FROM interval_totals WHERE run_id ` +
      `= ${quote(run.run_id)} ORDER BY cell_id, step_id, t`,
  );
  const intervals = new Map<string, IntervalSample[]>();
  for (const r of rows) {
    const k = stepKey(r.cell_id, r.step_id);
    intervals.set(k, [...(intervals.get(k) ?? []), r]);
  }
  // The configuration each cell's server ran with. apply-status rows are AWS bookkeeping, not values.
  const config = await lake.query<ConfigValue>(
    `SELECT DISTINCT variant, name, value FROM server_config WHERE run_id = ${quote(run.run_id)} AND kind <> ` +
      `'apply-status' ORDER BY variant, name`,
  );
  return {
    run: {
      run_id: run.run_id,
      spec_name: run.spec_name,
      started_at: run.started_at,
      status: run.status,
      backend: run.backend,
      plan: run.plan,
    },
    steps,
    intervals,
    config,
  };
}

/** A run of the experiment as the first read finds it. */
export interface HistoryRunRef {
  readonly run_id: string;
  readonly started_at: string;
  readonly backend?: string;
}

/** RunRow.backend of a rehearsal run left in a local lake. */
export const REHEARSAL_BACKEND = 'aws-rehearsal';

/**
 * The runs of an experiment's history.
 * An experiment with AWS runs leaves out its rehearsals, because their figures come from local stand-ins.
 * It says which. The run being judged is always kept.
 */
export function withoutRehearsals(
  runs: readonly HistoryRunRef[],
  keep?: string,
): { runs: HistoryRunRef[]; rehearsals: string[] } {
  if (!runs.some((r) => r.backend === 'aws')) return { runs: [...runs], rehearsals: [] };
  const left = (r: HistoryRunRef) => r.backend === REHEARSAL_BACKEND && r.run_id !== keep;
  return { runs: runs.filter((r) => !left(r)), rehearsals: runs.filter(left).map((r) => r.run_id) };
}

export interface HistoryReadOptions {
  /** Runs to read, the latest ones. Default 'all'. */
  readonly window?: number | 'all';
  /** Judge this run. Runs that started after it are left out. */
  readonly untilRunId?: string;
}

/**
 * Every run of an experiment, oldest first, up to `untilRunId`.
 * When there are none, the error names the experiments the lake has.
 */
export async function loadHistoryRuns(
  lake: LakeReader,
  experiment: string,
  untilRunId?: string,
): Promise<HistoryRunRef[]> {
  const until =
    untilRunId === undefined
      ? ''
      : ` AND started_at <= (SELECT MAX(started_at) FROM runs WHERE run_id = ${quote(untilRunId)})`;
  let runs = await lake.query<HistoryRunRef>(
    `SELECT run_id, started_at, backend FROM runs WHERE spec_name = ${quote(experiment)}${until} ORDER BY ` +
      `started_at, run_id`,
  );
  if (untilRunId !== undefined) {
    const own = runs.find((r) => r.run_id === untilRunId);
    if (own === undefined)
      throw new NotFoundError(
        `run "${untilRunId}" of experiment "${experiment}" is not in the results lake at ${lake.lakeDir}`,
      );
    // A run that started in the same instant is not before it.
    runs = runs.filter((r) => r.started_at < own.started_at || r.run_id === untilRunId);
  }
  if (runs.length === 0) {
    const known = await lake.query<{ spec_name: string; n: number }>(
      'SELECT spec_name, COUNT(*) AS n FROM runs GROUP BY spec_name ORDER BY spec_name',
    );
    throw new NotFoundError(
      `no run of experiment "${experiment}" in the results lake at ${lake.lakeDir}` +
        (known.length > 0
          ? ` (experiments with runs: ${known.map((k) => `${k.spec_name} (${k.n})`).join(', ')})`
          : ' (the lake has no run)'),
    );
  }
  return runs;
}

/** The runs a history reads, the last `window`. */
export function runsToRead(runs: readonly HistoryRunRef[], window: number | 'all' = 'all'): HistoryRunRef[] {
  return window === 'all' ? [...runs] : runs.slice(Math.max(0, runs.length - window));
}

/** The plans and step rows of the runs read. */
export async function loadHistoryDetails(
  lake: LakeReader,
  experiment: string,
  read: readonly HistoryRunRef[],
  allRuns: number,
): Promise<HistoryInput> {
  const ids = read.map((r) => quote(r.run_id)).join(', ');
  const runs =
    read.length === 0
      ? []
      : await lake.query<HistoryRunRow>(
          `SELECT run_id, started_at, status, backend, plan FROM runs WHERE run_id IN (${ids}) ORDER BY ` +
            `started_at, run_id`,
        );
  // Ordered, because the history's note lists a run's repeats in this order.
  // Neither engine orders an aggregate's rows by itself, and DuckDB and Trino disagreed on one lake.
  const steps =
    read.length === 0
      ? []
      : await lake.query<StepRow>(
          `SELECT ${STEP_COLUMNS} FROM step_summary WHERE run_id IN (${ids}) ORDER BY run_id, step_index, cell_id`,
        );
  return { experiment, runs, steps, runsNotRead: allRuns - read.length };
}
