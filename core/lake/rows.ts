/**
 * The results lake: one table per kind of row, JSON Lines, partitioned by the run's date.
 * The same keys under a local directory and under the S3 bucket (Athena partition projection on dt):
 *
 *   tables/runs/dt=YYYY-MM-DD/<runId>.jsonl                      one RunRow (rewritten at the end of the run)
 *   tables/steps/dt=YYYY-MM-DD/<runId>__<cellId>__<stepId>.jsonl  one StepRow per client
 *   tables/intervals/dt=.../<runId>__<cellId>__<stepId>.jsonl     one IntervalRow per client and interval
 *   tables/server_metrics/dt=.../<runId>__<cellId>__<stepId>.jsonl
 *   tables/metric_windows/dt=.../<runId>__<cellId>__<stepId>.jsonl  per instance and server metric: datapoints
 *                                                                 the window should have, how many arrived
 *   tables/verdicts/dt=.../<runId>.jsonl
 * one VerdictsRow per step and metric: the run judged against
 *                                                                its experiment's history (written after the run)
 *   tables/server_config/dt=.../<runId>__<cellId>__<prepareStepId>.jsonl  the configuration the cell's
 *                                                                 writer really ran with, read at prepare
 *   raw/dt=YYYY-MM-DD/<runId>/<cellId>/<stepId>/<phase>/<clientId>/{output.log,client_cpu.jsonl,result.json}
 *   scripts/<runId>/<name>.lua                                   custom workloads, fetched by clients
 *
 * Files sit flat in each partition (no deeper folders) so Athena and DuckDB read the same set.
 * Column names are snake_case: both Athena (Trino) and DuckDB take them unquoted.
 */

import type { ServerMetricName } from '../metrics/catalogue';
import { LOCAL_UNMEASURED, METRIC_UNITS } from '../metrics/lists';
import type { LakeRow, LakeTable } from './schema';

/** The tables' rows: their columns, types and docs are the lake schema's (core/lake/schema.ts). */
export type RunRow = LakeRow<'runs'>;
export type ServerConfigRow = LakeRow<'server_config'>;
export type StepRow = LakeRow<'steps'>;
export type IntervalRow = LakeRow<'intervals'>;
export type ServerMetricRow = LakeRow<'server_metrics'>;
export type MetricWindowRow = LakeRow<'metric_windows'>;
export type VerdictsRow = LakeRow<'verdicts'>;

/**
 * The CloudWatch AWS/RDS names and units both backends use for server metrics, and what the local
 * backend cannot measure with why: derived from the metric catalogue (core/metrics/catalogue.ts).
 */
export const SERVER_METRICS = METRIC_UNITS;
export const LOCAL_UNMEASURED_METRICS = LOCAL_UNMEASURED;
export type { ServerMetricName };

const safe = (s: string): string => s.replace(/[^A-Za-z0-9._-]/g, '_');

export const lakeKeys = {
  run: (dt: string, runId: string): string => `tables/runs/dt=${dt}/${safe(runId)}.jsonl`,
  stepTable: (
    table: Exclude<LakeTable, 'runs' | 'verdicts'>,
    dt: string,
    runId: string,
    cellId: string,
    stepId: string,
  ): string => `tables/${table}/dt=${dt}/${safe(runId)}__${safe(cellId)}__${safe(stepId)}.jsonl`,
  verdicts: (dt: string, runId: string): string => `tables/verdicts/dt=${dt}/${safe(runId)}.jsonl`,
  /** The common prefix of a run's files of a step table. */
  runTablePrefix: (table: Exclude<LakeTable, 'runs'>, dt: string, runId: string): string =>
    `tables/${table}/dt=${dt}/${safe(runId)}__`,
  /** A finished run's rows of one table, compacted to Parquet (core/lake/compact.ts). */
  compacted: (table: Exclude<LakeTable, 'runs' | 'verdicts'>, dt: string, runId: string): string =>
    `tables/${table}/dt=${dt}/${safe(runId)}.parquet`,
  raw: (dt: string, runId: string, cellId: string, stepId: string, phase: string, clientId: string): string =>
    `raw/dt=${dt}/${safe(runId)}/${safe(cellId)}/${safe(stepId)}/${phase}/${safe(clientId)}/`,
  script: (runId: string, name: string): string => `scripts/${safe(runId)}/${safe(name)}`,
  /**
   * A run id's claim, created once (LakeStore.createOnce) before anything of the run is written: the
   * lake itself says an id is taken, whichever machine or run root the other run has.
   */
  runClaim: (runId: string): string => `claims/${safe(runId)}.json`,
  /** The workflow's own objects (not tables): what the state machine's state no longer carries. */
  workflow: {
    /** A cell's plan with its steps, written by PlanRun. */
    cellPlan: (runId: string, cellId: string): string => `workflow/${safe(runId)}/cells/${safe(cellId)}.json`,
    /** Where a cell's step segments are: the next step, and the phase in flight with its jobs. */
    stepCursor: (runId: string, cellId: string): string => `workflow/${safe(runId)}/cursors/${safe(cellId)}.json`,
    /** One step's outcome (CollectLateMetrics and teardown read them). */
    stepOutcomes: (runId: string, cellId: string): string => `workflow/${safe(runId)}/steps/${safe(cellId)}/`,
    stepOutcome: (runId: string, cellId: string, stepId: string): string =>
      `workflow/${safe(runId)}/steps/${safe(cellId)}/${safe(stepId)}.json`,
    /**
     * The run's cells in plan order (ids; a duet's members, not the duet), written
     * by PlanRun, read by FinishRun: the state carries none of it to FinishRun.
     */
    cellList: (runId: string): string => `workflow/${safe(runId)}/cell-list.json`,
    /**
     * The cell Map's item at a position: which group of cells it is, written by PlanRun, read by the
     * Tasks that receive only the position (provisioning, a teardown before it). One small object
     * per item, so a child reads its own and not the whole list.
     */
    item: (runId: string, index: number): string => `workflow/${safe(runId)}/items/${index}.json`,
    /** A cell's outcome, written by its teardown, read by FinishRun. */
    cellOutcome: (runId: string, cellId: string): string => `workflow/${safe(runId)}/outcomes/${safe(cellId)}.json`,
    /**
     * A cell's resources with their creation and deletion times,
     * kept by its teardown's passes (core/workflow/cell-bill.ts).
     */
    cellLifetimes: (runId: string, cellId: string): string => `workflow/${safe(runId)}/lifetimes/${safe(cellId)}.json`,
    /** A run with questions: its rounds, their items and prices, written by PlanRun (RoundsConfig). */
    rounds: (runId: string): string => `workflow/${safe(runId)}/rounds.json`,
    /** What JudgeRound decided after the last round (RoundsJudged), read by FinishRun. */
    roundsJudged: (runId: string): string => `workflow/${safe(runId)}/rounds-judged.json`,
    /** Everything of a run's workflow objects. */
    run: (runId: string): string => `workflow/${safe(runId)}/`,
  },
};

/**
 * A filter of lake data files by run, from their names: a run's own file is <runId>.jsonl (runs,
 * verdicts), a step's <runId>__<cellId>__<stepId>.jsonl (lakeKeys above, run ids as `safe` writes them).
 */
export function filesOfRuns(runIds: Iterable<string>): (file: string) => boolean {
  const names = new Set([...runIds].map(safe));
  return (file) => {
    const base = file.slice(file.lastIndexOf('/') + 1).replace(/\.(jsonl(\.gz)?|parquet)$/, '');
    if (names.has(base)) return true;
    // A run id may itself contain "__": try every cut.
    for (let cut = base.indexOf('__'); cut >= 0; cut = base.indexOf('__', cut + 1))
      if (names.has(base.slice(0, cut))) return true;
    return false;
  };
}

/** Rows to JSON Lines. */
export function toJsonLines(rows: readonly object[]): string {
  return rows.map((r) => JSON.stringify(r)).join('\n') + (rows.length > 0 ? '\n' : '');
}
