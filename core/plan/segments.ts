/**
 * A cell's steps split into segments, each run by its own child execution.
 * So no execution's history grows with the number of steps.
 * Step Functions ends an execution at 25,000 history events.
 * See Step Functions Developer Guide, "Step Functions service quotas".
 */
import { SEGMENT_EVENTS_BUDGET, worstStepEvents } from './step-looks';
import type { CellPlan, StepSegment, WriteForwardingSupport } from './types';

/**
 * Steps per segment at most.
 * A step costs 9 history events plus 9 per look that finds its jobs running.
 * 200 steps stay near 3,600 events with one such look each.
 */
const STEPS_PER_SEGMENT = 200;
/** A segment execution's own events besides its steps', with room to spare. */
const SEGMENT_OWN_EVENTS = 50;

/**
 * Segments of `stepCount` steps, at most 200 each.
 * Each stays within half the history limit even if every step is looked at until its deadline.
 * `worstOf(i)` is step i's worst case.
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
 * A group's segments.
 * A group's step waits for every member, so it costs its costliest member's worst case.
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
