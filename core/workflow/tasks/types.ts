/**
 * What every Task receives, and a Catch's error payload.
 * A Task's return becomes state data, so it stays small and plain JSON.
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
  /** Server version string for the manifest. */
  readonly serverVersion: string | null;
  /**
   * Checks only a backend can make before anything is created.
   * Refused notes stop the run, and the others go into its manifest.
   */
  readonly preflight?: (plan: Plan, spec: Spec) => Promise<readonly PlanNote[]>;
  /** How long provisioning and client start may take before the cell fails. */
  readonly readyTimeoutS: number;
  /**
   * A finished run judged against its experiment's history, one verdict row per step and metric.
   * It is injected because judging sits above the workflow in the data path.
   */
  readonly judgeRun: (run: RunContext) => Promise<readonly VerdictsRow[]>;
  /**
   * Compacts a finished run's step rows to Parquet once FinishRun has written every row.
   * Returns what it did, in a few words.
   * Locally it is undefined and the run command compacts, since an aborted run never reaches FinishRun.
   */
  readonly compactRun?: (run: RunContext) => Promise<string>;
  /**
   * The stop rule after each round, injected like judgeRun.
   * Without it JudgeRound refuses.
   */
  readonly judgeRounds?: (input: RoundsJudgeInput) => RoundsJudgeOutput;
  /**
   * Each series' stable history before the run, for questions against history.
   * Without it every series lacks a history, and the run goes to its maximum rounds.
   */
  readonly historyLevels?: (run: RunContext) => Promise<readonly SeriesLevel[]>;
}

/** A Catch's error payload. Cause is the error message locally and a JSON string on Lambda. */
export interface TaskError {
  readonly Error: string;
  readonly Cause?: string;
}
