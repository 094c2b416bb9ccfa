import type { RunContext } from '../../backend';
import { lakeKeys } from '../../lake/rows';
import type { CellPlan } from '../../plan/types';
import { InvalidTaskInputError } from '../errors';
import type { TaskDeps } from './types';

/** Cell plans read by this process. A plan never changes once PlanRun wrote it. */
const cellPlans = new Map<string, CellPlan>();
const CELL_PLANS_KEPT = 64;

/** A cell's plan with its steps, from the lake. The state machine carries only a reference. */
export async function loadCellPlan(deps: TaskDeps, run: RunContext, cellId: string): Promise<CellPlan> {
  const key = lakeKeys.workflow.cellPlan(run.runId, cellId);
  const cacheKey = `${deps.backend.lake.describe()}|${key}`;
  const cached = cellPlans.get(cacheKey);
  if (cached) return cached;
  const text = await deps.backend.lake.get(key);
  if (text === undefined)
    throw new InvalidTaskInputError(
      `cell ${cellId} of run ${run.runId} has no plan at ${deps.backend.lake.describe()}/${key} (PlanRun writes it)`,
    );
  const plan = JSON.parse(text) as CellPlan;
  if (cellPlans.size >= CELL_PLANS_KEPT) cellPlans.delete(cellPlans.keys().next().value!);
  cellPlans.set(cacheKey, plan);
  return plan;
}
