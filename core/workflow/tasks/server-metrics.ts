/** A step's server metrics window: whether it is complete, when it is due, and its rows in the lake. */
import type { MetricsWindow, RunContext, ServerMetricsCollection } from '../../backend';
import { lakeKeys, toJsonLines, type ServerMetricRow } from '../../lake/rows';
import { metricWindowRows } from '../../lake/step-rows';
import type { CellPlan } from '../../plan/types';
import { metricsDueAt } from '../metrics-due';
import type { StepMetricsState } from './step-types';
import type { TaskDeps } from './types';

/** Whether every instance's metric of the window had all its datapoints. */
export function isComplete(collection: ServerMetricsCollection): boolean {
  return collection.windows.every((w) => w.received >= w.expected);
}

export function metricsState(
  deps: TaskDeps,
  window: MetricsWindow,
  collection: ServerMetricsCollection,
): StepMetricsState {
  return {
    start: window.start,
    end: window.end,
    complete: isComplete(collection),
    dueAt: metricsDueAt(window, collection.windows, deps.backend.metricsPublishDelayS),
  };
}

/**
 * The step's server_metrics and metric_windows.
 * A later collection replaces the server rows and window counts, and keeps the client rows.
 */
export async function writeServerMetrics(
  deps: TaskDeps,
  run: RunContext,
  cell: CellPlan,
  stepId: string,
  collection: ServerMetricsCollection,
  clientRows: readonly ServerMetricRow[],
): Promise<void> {
  const base = { run_id: run.runId, cell_id: cell.cellId, variant: cell.variant.name, step_id: stepId, dt: run.dt };
  const windowRows = metricWindowRows(base, collection.windows, deps.now().toISOString());
  const lake = deps.backend.lake;
  await Promise.all([
    lake.put(
      lakeKeys.stepTable('server_metrics', run.dt, run.runId, cell.cellId, stepId),
      toJsonLines([...collection.rows, ...clientRows]),
    ),
    lake.put(lakeKeys.stepTable('metric_windows', run.dt, run.runId, cell.cellId, stepId), toJsonLines(windowRows)),
  ]);
}
