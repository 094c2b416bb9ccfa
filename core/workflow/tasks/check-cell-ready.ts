import { checkGroupReady } from './group-ready';
import type { GroupResourcesEvent } from './group';
import type { TaskDeps } from './types';

export function checkCellReadyTask(deps: TaskDeps, event: GroupResourcesEvent) {
  return checkGroupReady(deps, event, 'check-cell-ready', 'cluster', (m) =>
    deps.backend.checkCellReady(m.run, m.cell, m.resources),
  );
}
