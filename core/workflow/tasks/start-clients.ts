import type { CellResources } from '../../backend';
import { loadCellPlan } from './cell-plans';
import { need } from './need';
import type { CellResourcesEvent, TaskDeps } from './types';

export async function startClientsTask(deps: TaskDeps, event: CellResourcesEvent): Promise<CellResources> {
  need(event, ['run', 'cell', 'resources'], 'start-clients');
  return deps.backend.startClients(event.run, await loadCellPlan(deps, event.run, event.cell.cellId), event.resources);
}
