/**
 * A cell's steps split into segments, each run by its own child execution of the workflow
 * (state-machines/benchmark.asl.json, RunStepSegments), so no execution's history grows with the
 * number of steps: Step Functions ends an execution at 25,000 history events ("Maximum execution
 * history size", Step Functions Developer Guide, "Step Functions service quotas").
 */
import type { CellHeader, CellPlan, DuetPlan, StepSegment } from './types';

/**
 * Steps per segment. A step costs 9 history events plus 3 per look while its jobs run; 200 steps
 * stay near 2,400 events with one look each, and under the limit even when every step runs to its
 * deadline (bench/workflow-scale.ts measures it).
 */
const STEPS_PER_SEGMENT = 200;

function stepSegments(stepCount: number, perSegment: number = STEPS_PER_SEGMENT): StepSegment[] {
  const segments: StepSegment[] = [];
  for (let from = 0; from < stepCount; from += perSegment) segments.push({ from, to: Math.min(stepCount, from + perSegment) });
  return segments;
}

export function cellHeader(cell: CellPlan): CellHeader {
  const { steps, ...rest } = cell;
  return { ...rest, stepCount: steps.length, segments: stepSegments(steps.length) };
}

/** What the workflow's state carries of a duet: the DuetPlan and its members' step segments. */
export interface DuetHeader extends DuetPlan {
  readonly segments: readonly StepSegment[];
}

export function duetHeader(duet: DuetPlan): DuetHeader {
  return { ...duet, segments: stepSegments(duet.stepCount) };
}
