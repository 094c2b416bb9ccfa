/**
 * A cell's steps split into segments, each run by its own child execution of the workflow
 * (state-machines/benchmark.asl.json, RunStepSegments), so no execution's history grows with the
 * number of steps: Step Functions ends an execution at 25,000 history events ("Maximum execution
 * history size", Step Functions Developer Guide, "Step Functions service quotas").
 */
import { SEGMENT_EVENTS_BUDGET, worstStepEvents } from './step-looks';
import type { CellPlan, StepSegment, WriteForwardingSupport } from './types';

/**
 * Steps per segment at most. A step costs 9 history events plus 9 per look that finds its jobs
 * running; 200 steps stay near 3,600 events with one such look each (bench/workflow-scale.ts measures it).
 */
const STEPS_PER_SEGMENT = 200;
/**
 * A segment execution's own events besides its steps' (ExecutionStarted/Succeeded,
 * the last RunStep, AreStepsLeft, SegmentDone), with room to spare.
 */
const SEGMENT_OWN_EVENTS = 50;

/**
 * Segments of `stepCount` steps: at most 200 steps each, and as few as it takes for the segment to
 * stay within half the history limit even when every step's jobs are looked at until their
 * deadline (a hung job; a prepare of a large data set with data.reuse "step", which prepares before
 * every step): `worstOf(i)` is step i's worst case, core/plan/step-looks.ts worstStepEvents.
 */
function boundedSegments(stepCount: number, worstOf: (index: number) => number): StepSegment[] {
  const segments: StepSegment[] = [];
  let from = 0;
  let events = SEGMENT_OWN_EVENTS;
  for (let i = 0; i < stepCount; i++) {
    const worst = worstOf(i);
    if (i > from && (i - from >= STEPS_PER_SEGMENT || events + worst > SEGMENT_EVENTS_BUDGET)) {
      segments.push({ from, to: i });
      from = i;
      events = SEGMENT_OWN_EVENTS;
    }
    events += worst;
  }
  if (stepCount > from) segments.push({ from, to: stepCount });
  return segments;
}

/**
 * A group's segments (core/workflow/tasks/group.ts). A group's step is looked at until every member's
 * jobs are done, each member's stopped at its own deadline, so a step costs its costliest member's worst case;
 * a group of one is bounded by its cell's.
 */
export function groupSegments(members: readonly CellPlan[], forwarding: WriteForwardingSupport): StepSegment[] {
  const stepCount = Math.max(0, ...members.map((cell) => cell.steps.length));
  return boundedSegments(stepCount, (i) =>
    Math.max(
      0,
      ...members.map((cell) => (cell.steps[i] !== undefined ? worstStepEvents(cell, cell.steps[i], forwarding) : 0)),
    ),
  );
}
