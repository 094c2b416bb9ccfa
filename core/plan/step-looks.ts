/**
 * How long a step's runner jobs may run, and how many history events looking at them can cost.
 * Segments are split by this worst case, so no hung job can bring one near the history limit.
 */
import type { CellPlan, DataPlan, RunnerPhase, StepPlan, WriteForwardingSupport } from './types';

/**
 * How long WaitForStep waits before RunStep looks again at running jobs.
 * It starts at 10 s and grows 1.5 times per look, to at most 300 s.
 * The look count lives in the step's cursor, so a running step is a return value, not an error.
 */
const STEP_LOOK_BACKOFF = { intervalS: 10, backoffRate: 1.5, maxDelayS: 300 } as const;

/**
 * Seconds to wait after the `looks`-th look that found the phase's jobs still running.
 * A Wait state's SecondsPath must select a non-negative integer. See Amazon States Language, "Wait workflow state".
 */
export function lookAgainAfterS(looks: number): number {
  const { intervalS, backoffRate, maxDelayS } = STEP_LOOK_BACKOFF;
  return Math.ceil(Math.min(maxDelayS, intervalS * backoffRate ** Math.max(0, looks - 1)));
}

/**
 * Half of Step Functions' 25,000-event execution history limit, the 2x margin segments keep.
 * See Developer Guide, "Step Functions service quotas".
 */
export const SEGMENT_EVENTS_BUDGET = 12_500;

/**
 * History events of a step's phase besides its looks, as bench/workflow-scale.ts counts them.
 * RunStep costs 5 events, AreStepsLeft 2 and WaitForStep 2.
 * Each look that finds the jobs still running goes round that loop again, for 9 more.
 */
const PHASE_EVENTS = 9;
const EVENTS_PER_LOOK = 9;

/**
 * Whether a step's run jobs prepare its data themselves.
 * With data.reuse "step" every step prepares, and one job per client saves a look-until-done.
 * With "cell" only the first step prepares, and it keeps its own prepare job.
 * Emulated write forwarding also keeps it, when a step writes to a reader.
 * The emulation waits for the replicas to catch up between the two jobs.
 */
export function preparesInRun(
  cell: Pick<CellPlan, 'data'>,
  step: StepPlan,
  forwarding: WriteForwardingSupport,
): boolean {
  return (
    step.prepare && cell.data.reuse === 'step' && !(step.forwardedWrites !== undefined && forwarding === 'emulated')
  );
}

/** Seconds a prepare may take. 2,000 rows/s is far below what sysbench prepare does anywhere. */
export function prepareDeadlineS(data: DataPlan): number {
  return Math.max(600, Math.ceil((data.tables * data.tableSize) / 2000));
}

/**
 * Seconds a job may run before it is stopped and its step marked failed.
 * A run gets warm-up plus duration plus half the duration, at least a minute.
 * A run that prepares first gets both.
 */
export function jobDeadlineS(step: StepPlan, data: DataPlan, phase: RunnerPhase, withPrepare = false): number {
  if (phase === 'prepare') return prepareDeadlineS(data);
  const runS = step.warmupS + step.durationS + Math.max(60, Math.ceil(step.durationS * 0.5));
  return withPrepare ? prepareDeadlineS(data) + runS : runS;
}

/**
 * Looks that can find a job still running before its deadline.
 * The waits are summed until they pass the deadline, counted from the job's start.
 */
export function looksUntil(deadlineS: number): number {
  let waited = 0;
  let looks = 0;
  // The waits grow until maxDelayS and are equal after, so the rest is counted by division.
  // A loop per look would run for minutes on a huge deadline and block signals.
  while (waited <= deadlineS && lookAgainAfterS(looks + 1) < STEP_LOOK_BACKOFF.maxDelayS) {
    looks++;
    waited += lookAgainAfterS(looks);
  }
  if (waited > deadlineS) return looks;
  return looks + Math.floor((deadlineS - waited) / STEP_LOOK_BACKOFF.maxDelayS) + 1;
}

/** The most history events a step can cost, with every phase looked at until its deadline. */
export function worstStepEvents(
  cell: Pick<CellPlan, 'data'>,
  step: StepPlan,
  forwarding: WriteForwardingSupport,
): number {
  const phase = (deadlineS: number) => PHASE_EVENTS + EVENTS_PER_LOOK * looksUntil(deadlineS);
  if (preparesInRun(cell, step, forwarding)) return phase(jobDeadlineS(step, cell.data, 'run', true));
  return (step.prepare ? phase(prepareDeadlineS(cell.data)) : 0) + phase(jobDeadlineS(step, cell.data, 'run'));
}
