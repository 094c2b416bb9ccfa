import { loadCellPlan } from './cell-plans';
import { need } from './need';
import { checkDeadline } from './ready-deadline';
import type { CellResourcesEvent, TaskDeps } from './types';

export async function checkClientsReadyTask(deps: TaskDeps, event: CellResourcesEvent) {
  need(event, ['run', 'cell', 'resources'], 'check-clients-ready');
  const state = await deps.backend.checkClientsReady(
    event.run,
    await loadCellPlan(deps, event.run, event.cell.cellId),
    event.resources,
  );
  if (!state.ready) checkDeadline(deps, event.resources, 'clients', state.detail);
  return state;
}
