import type { CellResources, RunContext } from '../../backend';
import { groupSegments } from '../../plan/segments';
import type { CellPlan } from '../../plan/types';
import {
  allMembers,
  groupResources,
  memberPlans,
  namedGroup,
  type GroupHeader,
  type GroupItemEvent,
  type GroupResources,
} from './group';
import { need } from './need';
import type { TaskDeps } from './types';

/** ProvisionCell's result, which replaces the group's state. */
export interface ProvisionedGroup {
  readonly run: RunContext;
  readonly group: GroupHeader;
  readonly resources: GroupResources;
}

async function provisionMember(deps: TaskDeps, run: RunContext, cell: CellPlan): Promise<CellResources> {
  const resources = await deps.backend.provisionCell(run, cell);
  return {
    ...resources,
    backendState: {
      ...resources.backendState,
      provisionStartedAt: resources.backendState['provisionStartedAt'] ?? deps.now().toISOString(),
    },
  };
}

/** The state names the group by its Map item's position: its members are read from the lake and provisioned. */
export async function provisionCellTask(deps: TaskDeps, event: GroupItemEvent): Promise<ProvisionedGroup> {
  need(event, ['run', 'group'], 'provision-cell');
  const group = await namedGroup(deps, event.run, event.group);
  const cells = await memberPlans(deps, event.run, group);
  const provisioned = await allMembers(cells.map((cell) => provisionMember(deps, event.run, cell)));
  const members = cells.map(({ steps, ...header }) => header);
  return {
    run: event.run,
    group: {
      groupId: group.groupId,
      index: group.index,
      members,
      stepCount: cells[0]?.steps.length ?? 0,
      segments: groupSegments(cells, deps.backend.writeForwarding),
    },
    resources: groupResources(group.groupId, provisioned),
  };
}
