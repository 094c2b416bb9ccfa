import { checkGroupReady } from './group-ready';
import type { GroupResourcesEvent } from './group';
import type { TaskDeps } from './types';

export function checkClientsReadyTask(deps: TaskDeps, event: GroupResourcesEvent) {
  return checkGroupReady(deps, event, 'check-clients-ready', 'clients', (m) =>
    deps.backend.checkClientsReady(m.run, m.cell, m.resources),
  );
}
