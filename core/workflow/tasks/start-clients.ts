import { groupResources, type GroupResources, type GroupResourcesEvent } from './group';
import { forEachMember } from './member-calls';
import { need } from './need';
import type { TaskDeps } from './types';

export async function startClientsTask(deps: TaskDeps, event: GroupResourcesEvent): Promise<GroupResources> {
  need(event, ['run', 'group', 'resources'], 'start-clients');
  const started = await forEachMember(deps, event, (m) => deps.backend.startClients(m.run, m.cell, m.resources));
  return groupResources(event.group.groupId, started);
}
