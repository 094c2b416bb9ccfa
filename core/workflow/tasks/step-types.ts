/** The events and results that RunStep, its collection and the progress lines share. */
import type { CellResources, JobHandle, RunContext } from '../../backend';
import type { CellPlan, StepPlan, StepSegment } from '../../plan/types';
import type { RunnerPhase } from '../../sysbench/types';
import type { MemberJobsState } from '../step-scheduler';
import type { StepSummary } from './step-summary';
import type { GroupHeader, GroupResourcesEvent } from './group';

/** The calls RunStep and the stop paths make for one phase of a step. */
interface PlannedCellEvent {
  readonly run: RunContext;
  readonly cell: CellPlan;
}

export interface StartJobsEvent extends PlannedCellEvent {
  readonly resources: CellResources;
  readonly step: StepPlan;
  readonly phase: RunnerPhase;
  /**
   * The first client's job prepares the tables, and the others wait for it before all run.
   * So each client runs one job per step instead of a prepare job and then the run's.
   */
  readonly withPrepare?: boolean;
}

export interface RunStepEvent extends GroupResourcesEvent {
  readonly group: GroupHeader;
  readonly segment: StepSegment;
}

/** A member's step collected by one RunStep call. */
export interface CollectedStep {
  readonly cellId: string;
  readonly outcome: StepOutcome;
}

export interface RunStepOutput {
  /** The segment's last step is collected: the segment's execution ends. */
  readonly done: boolean;
  /** Seconds until the phase just started should be over. */
  readonly waitS: number;
  /** The phase this call started, if any. */
  readonly started: { readonly phase: RunnerPhase; readonly withPrepare?: boolean; readonly step: StepSummary } | null;
  /** Each member's step of the run this call collected, in order. */
  readonly collected: readonly CollectedStep[];
  /** Milliseconds between the first and last member's runner start of the phase just started, or null. */
  readonly startSpreadMs: number | null;
  /** Jobs this call found still running, so the step is not done yet. */
  readonly running?: number;
}

export interface CollectStepEvent extends StartJobsEvent {
  readonly jobs: readonly JobHandle[];
  readonly jobsState: MemberJobsState;
  /** Set when the run was stopped during the step. Every client's row fails with this reason. */
  readonly abortedReason?: string;
}

/** The server metrics window of a step, as collected at its end. */
export interface StepMetricsState {
  /** The measured window's start, without warm-up. A later collection asks for it again. */
  readonly start: string;
  readonly end: string;
  /** Every instance's metric had all its datapoints. */
  readonly complete: boolean;
  /** When every datapoint of the window is published. */
  readonly dueAt: string;
}

export interface StepOutcome {
  readonly stepId: string;
  /** The step's position in its cell. */
  readonly index: number;
  /** Overloaded means the rate outran the server, which is a measurement. Skipped means not run. */
  readonly status: 'ok' | 'overloaded' | 'failed' | 'skipped';
  readonly error: string | null;
  readonly tps: number | null;
  readonly qps: number | null;
  readonly sysbenchVersion: string | null;
  /** Null when the step never got a window, as for a prepare. */
  readonly metrics: StepMetricsState | null;
}
