/**
 * The results lake, one JSON Lines table per kind of row, partitioned by the run's date.
 * A local directory and the S3 bucket use the same keys.
 *
 *   tables/runs/dt=YYYY-MM-DD/<runId>.jsonl
 *   tables/steps/dt=YYYY-MM-DD/<runId>__<cellId>__<stepId>.jsonl
 *   tables/intervals/dt=.../<runId>__<cellId>__<stepId>.jsonl
 *   tables/server_metrics/dt=.../<runId>__<cellId>__<stepId>.jsonl
 *   tables/metric_windows/dt=.../<runId>__<cellId>__<stepId>.jsonl
 *   tables/verdicts/dt=.../<runId>.jsonl
 *   tables/server_config/dt=.../<runId>__<cellId>__<prepareStepId>.jsonl
 *   raw/dt=YYYY-MM-DD/<runId>/<cellId>/<stepId>/<phase>/<clientId>/{output.log,client_cpu.jsonl,result.json}
 *   scripts/<runId>/<name>.lua
 *
 * Files sit flat in each partition, so Athena and DuckDB read the same set.
 * Column names are snake_case, which both engines take unquoted.
 */

import type { ServerMetricName } from '../metrics/catalogue';
import { LOCAL_UNMEASURED, METRIC_UNITS } from '../metrics/lists';
import type { LakeRow, LakeTable } from './schema';

/** The tables' rows. Their columns, types and docs come from the lake schema. */
export type RunRow = LakeRow<'runs'>;
export type ServerConfigRow = LakeRow<'server_config'>;
export type StepRow = LakeRow<'steps'>;
export type IntervalRow = LakeRow<'intervals'>;
export type ServerMetricRow = LakeRow<'server_metrics'>;
export type MetricWindowRow = LakeRow<'metric_windows'>;
export type VerdictsRow = LakeRow<'verdicts'>;

/**
 * The CloudWatch names and units both backends use for server metrics.
 * Also what the local backend cannot measure, and why. Both derive from the metric catalogue.
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
  /** A finished run's rows of one table, compacted to Parquet. */
  compacted: (table: Exclude<LakeTable, 'runs' | 'verdicts'>, dt: string, runId: string): string =>
    `tables/${table}/dt=${dt}/${safe(runId)}.parquet`,
  raw: (dt: string, runId: string, cellId: string, stepId: string, phase: string, clientId: string): string =>
    `raw/dt=${dt}/${safe(runId)}/${safe(cellId)}/${safe(stepId)}/${phase}/${safe(clientId)}/`,
  script: (runId: string, name: string): string => `scripts/${safe(runId)}/${safe(name)}`,
  /**
   * A run id's claim, created once before anything of the run is written.
   * So the lake itself says an id is taken, whatever machine the other run is on.
   */
  runClaim: (runId: string): string => `claims/${safe(runId)}.json`,
  /** The workflow's own objects, which the state machine's state no longer carries. */
  workflow: {
    /** A cell's plan with its steps, written by PlanRun. */
    cellPlan: (runId: string, cellId: string): string => `workflow/${safe(runId)}/cells/${safe(cellId)}.json`,
    /** Where a cell's step segments are, with the next step and the phase in flight. */
    stepCursor: (runId: string, cellId: string): string => `workflow/${safe(runId)}/cursors/${safe(cellId)}.json`,
    /** One step's outcome. CollectLateMetrics and teardown read them. */
    stepOutcomes: (runId: string, cellId: string): string => `workflow/${safe(runId)}/steps/${safe(cellId)}/`,
    stepOutcome: (runId: string, cellId: string, stepId: string): string =>
      `workflow/${safe(runId)}/steps/${safe(cellId)}/${safe(stepId)}.json`,
    /**
     * The run's cell ids in plan order, written by PlanRun and read by FinishRun.
     * A duet's members are listed, not the duet. The state carries none of it.
     */
    cellList: (runId: string): string => `workflow/${safe(runId)}/cell-list.json`,
    /**
     * The cell Map's item at a position, written by PlanRun.
     * Tasks that receive only the position read it.
     * One small object per item lets a child read its own and not the whole list.
     */
    item: (runId: string, index: number): string => `workflow/${safe(runId)}/items/${index}.json`,
    /** A cell's outcome, written by its teardown and read by FinishRun. */
    cellOutcome: (runId: string, cellId: string): string => `workflow/${safe(runId)}/outcomes/${safe(cellId)}.json`,
    /** A cell's resources with their creation and deletion times, kept by its teardown's passes. */
    cellLifetimes: (runId: string, cellId: string): string => `workflow/${safe(runId)}/lifetimes/${safe(cellId)}.json`,
    /** A run with questions, with its rounds, their items and prices. PlanRun writes it. */
    rounds: (runId: string): string => `workflow/${safe(runId)}/rounds.json`,
    /** What JudgeRound decided after the last round. FinishRun reads it. */
    roundsJudged: (runId: string): string => `workflow/${safe(runId)}/rounds-judged.json`,
    /** Everything of a run's workflow objects. */
    run: (runId: string): string => `workflow/${safe(runId)}/`,
  },
};

/** A filter of lake data files by run, from their names. */
export function filesOfRuns(runIds: Iterable<string>): (file: string) => boolean {
  const names = new Set([...runIds].map(safe));
  return (file) => {
    const base = file.slice(file.lastIndexOf('/') + 1).replace(/\.(jsonl(\.gz)?|parquet)$/, '');
    if (names.has(base)) return true;
    // A run id may itself contain "__", so try every cut.
    for (let cut = base.indexOf('__'); cut >= 0; cut = base.indexOf('__', cut + 1))
      if (names.has(base.slice(0, cut))) return true;
    return false;
  };
}

/** Rows to JSON Lines. */
export function toJsonLines(rows: readonly object[]): string {
  return rows.map((r) => JSON.stringify(r)).join('\n') + (rows.length > 0 ? '\n' : '');
}
