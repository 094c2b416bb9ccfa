/** The events and results of a step's phases: what RunStep, its collection and the progress lines share. */
import type { CellResources, JobHandle, RunContext } from '../../backend';
import type { CellPlan, StepPlan, StepSegment } from '../../plan/types';
import type { RunnerPhase } from '../../sysbench/types';
import type { MemberJobsState } from '../step-scheduler';
import type { StepSummary } from './step-summary';
import type { GroupHeader, GroupResourcesEvent } from './group';

/** The calls RunStep makes for one phase of a step (and the run-local/rehearsal stop paths). */
interface PlannedCellEvent {
  readonly run: RunContext;
  readonly cell: CellPlan;
}

export interface StartJobsEvent extends PlannedCellEvent {
  readonly resources: CellResources;
  readonly step: StepPlan;
  readonly phase: RunnerPhase;
  /**
   * A run whose jobs prepare the step's data first (preparesInRun): the first client's job drops and
   * prepares the tables, the others wait for it, then all run; one job per client and step instead
   * of a prepare job and then the run's.
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
  /** Seconds until the phase just started should be over (the Wait before the next call). */
  readonly waitS: number;
  /** The phase this call started, if any; withPrepare: a run whose jobs prepare the data first. */
  readonly started: { readonly phase: RunnerPhase; readonly withPrepare?: boolean; readonly step: StepSummary } | null;
  /** The steps this call collected, in order: each member's of the run it collected (none: it collected no run). */
  readonly collected: readonly CollectedStep[];
  /** Milliseconds between the first and last member's runner start of the phase just started (null: none started). */
  readonly startSpreadMs: number | null;
  /** Jobs this call found still running (it collected and started nothing): the step is not done yet. */
  readonly running?: number;
}

export interface CollectStepEvent extends StartJobsEvent {
  readonly jobs: readonly JobHandle[];
  readonly jobsState: MemberJobsState;
  /** Set when the run was stopped during the step: every client's row is failed with this reason. */
  readonly abortedReason?: string;
}

/** The server metrics window of a step, as collected at its end. */
export interface StepMetricsState {
  /** The measured window (warm-up excluded), what a later collection asks for again. */
  readonly start: string;
  readonly end: string;
  /** Every instance's metric had all its datapoints (metric_windows). */
  readonly complete: boolean;
  /** When every datapoint of the window is published: its last period's end + metricsPublishDelayS. */
  readonly dueAt: string;
}

export interface StepOutcome {
  readonly stepId: string;
  /** The step's position in its cell. */
  readonly index: number;
  /**
   * overloaded: the rate outran the server (a measurement); skipped: not run (stopAtOverload, no capacity measured).
   */
  readonly status: 'ok' | 'overloaded' | 'failed' | 'skipped';
  readonly error: string | null;
  readonly tps: number | null;
  readonly qps: number | null;
  readonly sysbenchVersion: string | null;
  /** null when the step never got a window (a prepare). */
  readonly metrics: StepMetricsState | null;
}
