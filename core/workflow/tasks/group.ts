/**
 * A group: what one item of the cell Map runs, one or more cells provisioned together whose steps start
 * together (order "duet" groups a round's variants; every other order makes each cell a group of one).
 * Every cell Task works on a group, so a plain cell and a duet take the same code path.
 */
import type { CellResources, RunContext } from '../../backend';
import { lakeKeys } from '../../lake/rows';
import type { CellPlan, PlanNote, StepSegment } from '../../plan/types';
import { InvalidTaskInputError } from '../errors';
import { loadCellPlan } from './cell-plans';
import { readJson } from './lake-json';
import type { TaskDeps } from './types';

/** The cell Map's item as a child execution receives it: only its position (RunCells' ItemSelector). */
export interface GroupItem {
  readonly index: number;
}

/** A group named: PlanRun writes one per Map item (lakeKeys.workflow.item). */
export interface GroupRef {
  /** A group of one is its cell's id; a duet's is DuetPlan.cellId. Cursor keys use it. */
  readonly groupId: string;
  readonly index: number;
  readonly members: readonly { readonly cellId: string }[];
}

/** A member as the state carries it: its plan without the steps (they stay in the lake). */
export type MemberHeader = Omit<CellPlan, 'steps'>;

/** What the state carries of a group after provisioning. */
export interface GroupHeader extends GroupRef {
  readonly members: readonly MemberHeader[];
  /** Steps per member: every member runs the same steps (the plan refuses a duet whose members differ). */
  readonly stepCount: number;
  readonly segments: readonly StepSegment[];
}

/** What the state carries of a group's resources: each member's, as the backend returned them. */
export interface GroupResources {
  readonly groupId: string;
  readonly members: readonly CellResources[];
  /** The members' notes without repeats, for the progress lines (each member's outcome keeps its own). */
  readonly notes: readonly PlanNote[];
}

export interface GroupEvent {
  readonly run: RunContext;
  readonly group: GroupRef;
}

/** A Task's event as the cell Map's child starts it: the group may be only the item's position. */
export type GroupItemEvent<E extends GroupEvent = GroupEvent> = Omit<E, 'group'> & {
  readonly group: GroupItem | GroupRef;
};

export interface GroupResourcesEvent extends GroupEvent {
  readonly resources: GroupResources;
}

/**
 * The group a Map item names. The Tasks that see it before provisioning (ProvisionCell, a teardown
 * after provisioning failed) receive only the position and read the group PlanRun wrote for it;
 * a state that already names its group is returned as it is.
 */
export async function namedGroup(deps: TaskDeps, run: RunContext, group: GroupItem | GroupRef): Promise<GroupRef> {
  if (typeof (group as Partial<GroupRef>).groupId === 'string') return group as GroupRef;
  const index: unknown = (group as Partial<GroupItem> | null)?.index;
  if (typeof index !== 'number' || !Number.isInteger(index) || index < 0) {
    throw new InvalidTaskInputError(
      `event.group names no group: it needs groupId, or index (the cell Map item's position, a non-negative ` +
        `integer); got ${JSON.stringify(group)}`,
    );
  }
  const key = lakeKeys.workflow.item(run.runId, index);
  const ref = await readJson<GroupRef>(deps, key);
  if (ref === undefined || typeof ref.groupId !== 'string' || !Array.isArray(ref.members)) {
    throw new InvalidTaskInputError(
      `item ${index} of run ${run.runId} has no group at ${deps.backend.lake.describe()}/${key} (PlanRun writes ` +
        `one per item)`,
    );
  }
  const members: readonly { readonly cellId: string }[] = ref.members;
  return { groupId: ref.groupId, index, members: members.map((m) => ({ cellId: m.cellId })) };
}

/** The members' plans with their steps, in member order. */
export function memberPlans(deps: TaskDeps, run: RunContext, group: GroupRef): Promise<CellPlan[]> {
  return Promise.all(group.members.map((m) => loadCellPlan(deps, run, m.cellId)));
}

/** Every member's call settled before the first failure is thrown: none is left running unseen. */
export async function allMembers<T>(calls: readonly Promise<T>[]): Promise<T[]> {
  const settled = await Promise.allSettled(calls);
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((r) => (r as PromiseFulfilledResult<T>).value);
}

export function memberResources(resources: GroupResources, cellId: string): CellResources {
  const own = resources.members.find((m) => m.cellId === cellId);
  if (own === undefined)
    throw new InvalidTaskInputError(`group ${resources.groupId} carries no resources of its member ${cellId}`);
  return own;
}

export function groupResources(groupId: string, members: readonly CellResources[]): GroupResources {
  const seen = new Set<string>();
  const notes = members
    .flatMap((m) => m.notes)
    .filter((n) => {
      const key = `${n.level}|${n.path}|${n.message}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  return { groupId, members, notes };
}
