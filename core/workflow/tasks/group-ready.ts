import type { ReadyState } from '../../backend';
import { groupResources, type GroupResources, type GroupResourcesEvent } from './group';
import { forEachMember, type MemberCall } from './member-calls';
import { need } from './need';
import { checkDeadline } from './ready-deadline';
import type { TaskDeps } from './types';

export interface GroupReadyState {
  readonly ready: boolean;
  readonly resources: GroupResources;
  readonly detail: string;
}

/** A group is ready when every member is. A member past its deadline fails it. */
export async function checkGroupReady(
  deps: TaskDeps,
  event: GroupResourcesEvent,
  task: string,
  what: 'cluster' | 'clients',
  check: (member: MemberCall) => Promise<ReadyState>,
): Promise<GroupReadyState> {
  need(event, ['run', 'group', 'resources'], task);
  const states = await forEachMember(deps, event, async (member) => {
    const state = await check(member);
    if (!state.ready) checkDeadline(deps, member.resources, what, state.detail);
    return state;
  });
  const pending = states.filter((s) => !s.ready);
  // A member names itself where there are several.
  const said = (pending.length > 0 ? pending : states).map((s) =>
    states.length > 1 ? `${s.resources.cellId}: ${s.detail}` : s.detail,
  );
  return {
    ready: pending.length === 0,
    resources: groupResources(
      event.group.groupId,
      states.map((s) => s.resources),
    ),
    detail: said.join('; '),
  };
}
