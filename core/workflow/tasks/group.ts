/** Every cell Task works on a group, so a plain cell and a duet take the same code path. */
import type { CellResources, RunContext } from '../../backend';
import { lakeKeys } from '../../lake/rows';
import type { CellPlan, PlanNote, StepSegment } from '../../plan/types';
import { InvalidTaskInputError } from '../errors';
import { loadCellPlan } from './cell-plans';
import { readJson } from './lake-json';
import type { TaskDeps } from './types';

/** The cell Map's item as a child execution receives it: only its position. */
export interface GroupItem {
  readonly index: number;
}

/** PlanRun writes one per Map item. */
export interface GroupRef {
  /** A group of one uses its cell's id, and a duet its DuetPlan.cellId. Cursor keys use it. */
  readonly groupId: string;
  readonly index: number;
  readonly members: readonly { readonly cellId: string }[];
}

/** A member as the state carries it. Its steps stay in the lake. */
export type MemberHeader = Omit<CellPlan, 'steps'>;

/** What the state carries of a group after provisioning. */
export interface GroupHeader extends GroupRef {
  readonly members: readonly MemberHeader[];
  /** Steps per member. The plan refuses a duet whose members differ. */
  readonly stepCount: number;
  readonly segments: readonly StepSegment[];
}

/** Each member's resources, as the backend returned them. */
export interface GroupResources {
  readonly groupId: string;
  readonly members: readonly CellResources[];
  /** The members' notes without repeats, for the progress lines. */
  readonly notes: readonly PlanNote[];
}

export interface GroupEvent {
  readonly run: RunContext;
  readonly group: GroupRef;
}

/** A Task's event as the cell Map's child starts it. The group may be only the item's position. */
export type GroupItemEvent<E extends GroupEvent = GroupEvent> = Omit<E, 'group'> & {
  readonly group: GroupItem | GroupRef;
};

export interface GroupResourcesEvent extends GroupEvent {
  readonly resources: GroupResources;
}

/**
 * The group a Map item names.
 * Tasks before provisioning receive only the position, so they read the group PlanRun wrote for it.
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

/** Every member's call settles before the first failure is thrown, so none is left running unseen. */
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
