import type { CellResources, RunContext } from '../../backend';
import type { CellPlan } from '../../plan/types';
import { allMembers, memberPlans, memberResources, type GroupResourcesEvent } from './group';
import type { TaskDeps } from './types';

/** One member's part of a group's Task call: its plan and its resources. */
export interface MemberCall {
  readonly run: RunContext;
  readonly cell: CellPlan;
  readonly resources: CellResources;
}

/** The same call made for every member of the group at once; all settle before a failure is thrown. */
export async function forEachMember<T>(
  deps: TaskDeps,
  event: GroupResourcesEvent,
  call: (member: MemberCall) => Promise<T>,
): Promise<T[]> {
  const cells = await memberPlans(deps, event.run, event.group);
  return allMembers(
    cells.map((cell) => call({ run: event.run, cell, resources: memberResources(event.resources, cell.cellId) })),
  );
}
