import { lakeKeys, type ServerMetricRow } from '../../lake/rows';
import { loadCellPlan } from './cell-plans';
import { need } from './need';
import { isComplete, writeServerMetrics } from './server-metrics';
import { readStepOutcomes } from './step-outcomes';
import type { StepMetricsState, StepOutcome } from './step-types';
import type { CellResourcesEvent, TaskDeps } from './types';

export type CollectLateMetricsEvent = CellResourcesEvent;

export interface LateMetricsOutput {
  /** false: nothing collected yet, ask again after waitS. */
  readonly done: boolean;
  readonly waitS: number;
  /** Steps whose windows were collected again. */
  readonly recollected: number;
  /** Steps whose windows are still incomplete after waiting (the first few by id). */
  readonly incompleteSteps: number;
  readonly incompleteStepIds: readonly string[];
}

/** How many incomplete step ids a LateMetricsOutput names (state data stays small). */
const MAX_INCOMPLETE_STEP_IDS = 10;

/**
 * After a cell's last step: the steps whose server metrics were incomplete when collected are
 * collected again once their datapoints are published (StepMetricsState.dueAt). One wait for the
 * whole cell, not one per step: the state machine waits waitS and calls again while done is false.
 */
export async function collectLateMetricsTask(
  deps: TaskDeps,
  event: CollectLateMetricsEvent,
): Promise<LateMetricsOutput> {
  need(event, ['run', 'cell', 'resources'], 'collect-late-metrics');
  const { run, resources } = event;
  const steps = await readStepOutcomes(deps, run, event.cell.cellId);
  const pending = steps.filter(
    (s): s is StepOutcome & { metrics: StepMetricsState } => s.metrics !== null && !s.metrics.complete,
  );
  if (pending.length === 0) return { done: true, waitS: 0, recollected: 0, incompleteSteps: 0, incompleteStepIds: [] };
  const cell = await loadCellPlan(deps, run, event.cell.cellId);
  const due = Math.max(...pending.map((s) => Date.parse(s.metrics.dueAt)));
  const now = deps.now().getTime();
  if (now < due)
    return {
      done: false,
      waitS: Math.max(1, Math.ceil((due - now) / 1000)),
      recollected: 0,
      incompleteSteps: pending.length,
      incompleteStepIds: pending.slice(0, MAX_INCOMPLETE_STEP_IDS).map((s) => s.stepId),
    };
  const lake = deps.backend.lake;
  const stillIncomplete: string[] = [];
  for (const step of pending) {
    const collection = await deps.backend.collectServerMetrics(run, cell, resources, {
      stepId: step.stepId,
      start: step.metrics.start,
      end: step.metrics.end,
    });
    const key = lakeKeys.stepTable('server_metrics', run.dt, run.runId, cell.cellId, step.stepId);
    const existing = (await lake.get(key)) ?? '';
    const clientRows = existing
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as ServerMetricRow)
      .filter((r) => r.source === 'runner');
    await writeServerMetrics(deps, run, cell, step.stepId, collection, clientRows);
    if (!isComplete(collection)) stillIncomplete.push(step.stepId);
  }
  return {
    done: true,
    waitS: 0,
    recollected: pending.length,
    incompleteSteps: stillIncomplete.length,
    incompleteStepIds: stillIncomplete.slice(0, MAX_INCOMPLETE_STEP_IDS),
  };
}
