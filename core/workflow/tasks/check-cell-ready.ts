import { loadCellPlan } from './cell-plans';
import { need } from './need';
import { checkDeadline } from './ready-deadline';
import type { CellResourcesEvent, TaskDeps } from './types';

export async function checkCellReadyTask(deps: TaskDeps, event: CellResourcesEvent) {
  need(event, ['run', 'cell', 'resources'], 'check-cell-ready');
  const state = await deps.backend.checkCellReady(
    event.run,
    await loadCellPlan(deps, event.run, event.cell.cellId),
    event.resources,
  );
  if (!state.ready) checkDeadline(deps, event.resources, 'cluster', state.detail);
  return state;
}
