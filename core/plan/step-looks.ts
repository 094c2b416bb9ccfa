/**
 * How long a step's runner jobs may run, and what looking at them until then can cost the workflow
 * in Step Functions history events. The RunStep Task stops jobs past these deadlines
 * (core/workflow/step-scheduler.ts), SSM's own execution timeout sits above them (core/backends/aws/jobs.ts),
 * and a cell's steps are split into segments by the worst case (core/plan/segments.ts): no loop
 * whose length depends on the data's size or on a hung job can bring a segment's execution near the
 * 25,000-event history limit.
 */
import type { CellPlan, DataPlan, RunnerPhase, StepPlan, WriteForwardingSupport } from './types';

/**
 * How long the WaitForStep state waits before RunStep looks again at jobs it found still running:
 * 10 s after the first such look, 1.5 times longer after each next one, at most 300 s
 * (lookAgainAfterS). The look count is kept in the step's cursor in the lake (core/workflow/step-scheduler.ts),
 * so a step not done yet is a value RunStep returns ({ done: false, waitS }), not an error.
 */
const STEP_LOOK_BACKOFF = { intervalS: 10, backoffRate: 1.5, maxDelayS: 300 } as const;

/**
 * Seconds to wait after the `looks`-th look (1, 2, ...) that found the phase's jobs still running.
 * Whole seconds: a Wait state's SecondsPath must select a non-negative integer (Amazon States
 * Language, "Wait workflow state"; aws-local-stepfunctions checks it too).
 */
export function lookAgainAfterS(looks: number): number {
  const { intervalS, backoffRate, maxDelayS } = STEP_LOOK_BACKOFF;
  return Math.ceil(Math.min(maxDelayS, intervalS * backoffRate ** Math.max(0, looks - 1)));
}

/**
 * Half of Step Functions' "Maximum execution history size: 25,000 events" (Developer
 * Guide, "Step Functions service quotas"): the 2x margin the segments keep.
 */
export const SEGMENT_EVENTS_BUDGET = 12_500;

/**
 * History events of a step's phase besides its looks, as bench/workflow-scale.ts counts what AWS
 * records: RunStep entered and succeeded (5: TaskStateEntered, TaskScheduled, TaskStarted,
 * TaskSucceeded, TaskStateExited), AreStepsLeft (2: ChoiceStateEntered, ChoiceStateExited) and
 * WaitForStep (2: WaitStateEntered, WaitStateExited). Each look that finds the jobs still running
 * goes round the same loop (RunStep, AreStepsLeft, WaitForStep): 9 more.
 */
const PHASE_EVENTS = 9;
const EVENTS_PER_LOOK = 9;

/**
 * Whether a step's run jobs prepare its data themselves: with data.reuse "step" every step
 * prepares, and one runner job per client and step makes a step cost the workflow one
 * look-until-done instead of two (a prepare's, then the run's). With data.reuse "cell" only a
 * cell's first step prepares; it keeps its own prepare job. Nor, on a backend that emulates write
 * forwarding (WriteForwardingSupport), for a step whose writes go to a reader: the emulated run waits
 * for the replicas to catch up with a fresh prepare (the local backend does that between the two jobs).
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

/** Seconds a prepare may take. Generous: 2,000 rows/s is far below what sysbench prepare does anywhere we run it. */
export function prepareDeadlineS(data: DataPlan): number {
  return Math.max(600, Math.ceil((data.tables * data.tableSize) / 2000));
}

/**
 * Seconds a job may run before it is stopped and its step marked failed (the cell failed, for a
 * prepare): a prepare's; a run's (warm-up + duration + half the duration, at least a minute); both
 * for a run that prepares first.
 */
export function jobDeadlineS(step: StepPlan, data: DataPlan, phase: RunnerPhase, withPrepare = false): number {
  if (phase === 'prepare') return prepareDeadlineS(data);
  const runS = step.warmupS + step.durationS + Math.max(60, Math.ceil(step.durationS * 0.5));
  return withPrepare ? prepareDeadlineS(data) + runS : runS;
}

/**
 * Looks that can find a job still running before it is past its deadline and stopped: the waits
 * between looks (lookAgainAfterS) summed until they pass the deadline (counted from the job's start,
 * so the Wait before the first look only makes it fewer).
 */
export function looksUntil(deadlineS: number): number {
  let waited = 0;
  let looks = 0;
  // The waits grow until they reach maxDelayS (a dozen looks); past that they are all equal, so the
  // rest is counted by division: a loop per look would run for minutes on a huge data set's deadline
  // and keep the event loop from acting on a signal.
  while (waited <= deadlineS && lookAgainAfterS(looks + 1) < STEP_LOOK_BACKOFF.maxDelayS) {
    looks++;
    waited += lookAgainAfterS(looks);
  }
  if (waited > deadlineS) return looks;
  return looks + Math.floor((deadlineS - waited) / STEP_LOOK_BACKOFF.maxDelayS) + 1;
}

/**
 * The most history events a step can cost its segment's execution: every phase's jobs looked at until their deadline.
 */
export function worstStepEvents(
  cell: Pick<CellPlan, 'data'>,
  step: StepPlan,
  forwarding: WriteForwardingSupport,
): number {
  const phase = (deadlineS: number) => PHASE_EVENTS + EVENTS_PER_LOOK * looksUntil(deadlineS);
  if (preparesInRun(cell, step, forwarding)) return phase(jobDeadlineS(step, cell.data, 'run', true));
  return (step.prepare ? phase(prepareDeadlineS(cell.data)) : 0) + phase(jobDeadlineS(step, cell.data, 'run'));
}
