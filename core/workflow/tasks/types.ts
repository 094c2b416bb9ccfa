/**
 * What every Task receives (TaskDeps) and a Catch's error payload (the group events: ./group.ts).
 * Everything a Task returns becomes state data, so it stays small and plain JSON.
 */
import type { Backend, RunContext } from '../../backend';
import type { VerdictsRow } from '../../lake/rows';
import type { Plan, PlanNote } from '../../plan/types';
import type { Spec } from '../../experiment/schema';
import type { RoundsJudgeInput, RoundsJudgeOutput, SeriesLevel } from './round-types';

export interface TaskDeps {
  readonly backend: Backend;
  readonly now: () => Date;
  readonly toolVersion: string;
  readonly gitSha: string | null;
  /** Server version string for the manifest (locally the mariadbd version; on AWS the engine version). */
  readonly serverVersion: string | null;
  /**
   * Checks only a backend can make before anything is created (AWS: the
   * account preflight, core/backends/aws/preflight.ts; locally: the spec
   * refusals): refused notes stop the run, the others go into its manifest.
   */
  readonly preflight?: (plan: Plan, spec: Spec) => Promise<readonly PlanNote[]>;
  /** How long provisioning and client start may take before the cell fails. */
  readonly readyTimeoutS: number;
  /**
   * A finished run judged against its experiment's history in the lake (core/regression/judge.ts:
   * DuckDB over the lake directory locally, Athena on AWS): one verdict row per step and metric.
   * Injected because the judging sits above the workflow in the data path.
   */
  readonly judgeRun: (run: RunContext) => Promise<readonly VerdictsRow[]>;
  /**
   * A finished run's step rows compacted to Parquet (on AWS by Athena,
   * core/backends/aws/athena-compaction.ts), called by FinishRun once every row is written; returns
   * what it did, in a few words. Undefined: FinishRun compacts nothing (locally the run command
   * compacts after the execution, core/lake/compact.ts, since an aborted run never reaches FinishRun).
   */
  readonly compactRun?: (run: RunContext) => Promise<string>;
  /**
   * The stop rule after each round (core/rounds/judge.ts judgeRounds), injected like judgeRun: the
   * statistics sit above the workflow. Undefined: JudgeRound refuses (a function built without it).
   */
  readonly judgeRounds?: (input: RoundsJudgeInput) => RoundsJudgeOutput;
  /**
   * Each series' stable history before the run, for questions against history
   * (core/regression/history-levels.ts, over the lake as judgeRun reads it). Undefined: every series
   * is taken as without history, and the run goes to its maximum rounds.
   */
  readonly historyLevels?: (run: RunContext) => Promise<readonly SeriesLevel[]>;
}

/** A Catch's error payload; Cause is the error message locally and a JSON string on Lambda. */
export interface TaskError {
  readonly Error: string;
  readonly Cause?: string;
}
