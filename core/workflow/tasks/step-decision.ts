import type { RunContext } from '../../backend';
import { lakeKeys } from '../../lake/rows';
import type { CellPlan, StepPlan } from '../../plan/types';
import { decideStep, stepsToConsult, type EarlierStepRows, type StepDecision } from '../step-rates';
import type { TaskDeps } from './types';

/** Decides a rate step from the lake's rows of the cell's earlier steps. */
export async function decide(deps: TaskDeps, run: RunContext, cell: CellPlan, step: StepPlan): Promise<StepDecision> {
  const consult = stepsToConsult(cell, step);
  if (consult.length === 0) return { run: true, step };
  const earlier: EarlierStepRows[] = await Promise.all(
    consult.map(async (s) => {
      const text = await deps.backend.lake.get(lakeKeys.stepTable('steps', run.dt, run.runId, cell.cellId, s.stepId));
      const rows = (text ?? '')
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l) as { status: string; tps: number | null; rate: number });
      return { stepId: s.stepId, rows };
    }),
  );
  return decideStep(cell, step, earlier);
}
