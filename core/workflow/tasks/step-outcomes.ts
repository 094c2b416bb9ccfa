import type { RunContext } from '../../backend';
import { lakeKeys } from '../../lake/rows';
import { readJson } from './lake-json';
import type { StepOutcome } from './step-types';
import type { TaskDeps } from './types';

/** Every step outcome a cell wrote so far, in step order. */
export async function readStepOutcomes(deps: TaskDeps, run: RunContext, cellId: string): Promise<StepOutcome[]> {
  const keys = await deps.backend.lake.list(lakeKeys.workflow.stepOutcomes(run.runId, cellId));
  const outcomes: StepOutcome[] = [];
  // A few at a time, since a cell may have a thousand steps and S3 serves parallel GETs well.
  for (let i = 0; i < keys.length; i += 16) {
    const batch = await Promise.all(keys.slice(i, i + 16).map((k) => readJson<StepOutcome>(deps, k)));
    for (const o of batch) if (o) outcomes.push(o);
  }
  return outcomes.sort((a, b) => a.index - b.index);
}
