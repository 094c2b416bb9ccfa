/** TeardownCell removes each member's resources, records its bill and writes its outcome to the lake. */
import type { CellResources } from '../../backend';
import { lakeKeys } from '../../lake/rows';
import type { CellPlan, PlanNote } from '../../plan/types';
import { measuredCellUsage, recordLifetimes, type CellBillFacts } from '../cell-bill';
import type { StepCursor } from '../step-scheduler';
import { causeText } from './cause-text';
import type { LateMetricsOutput } from './collect-late-metrics';
import {
  allMembers,
  memberPlans,
  namedGroup,
  type GroupEvent,
  type GroupItemEvent,
  type GroupResources,
} from './group';
import { readJson } from './lake-json';
import { need } from './need';
import { readStepOutcomes } from './step-outcomes';
import type { TaskDeps, TaskError } from './types';

export interface TeardownEvent extends GroupEvent {
  /** Absent when provisioning failed. */
  readonly resources?: GroupResources;
  readonly error?: TaskError;
  /** CollectLateMetrics' last answer, or why it failed. The step results stand either way. */
  readonly lateMetrics?: LateMetricsOutput;
  readonly lateMetricsError?: TaskError;
}

/** Kept small, since a Distributed Map's collected output must stay under 256 KB for hundreds of cells. */
export interface CellOutcome {
  readonly cellId: string;
  readonly status: 'succeeded' | 'failed' | 'teardown-failed';
  readonly error: string | null;
  readonly steps: number;
  readonly failedStepCount: number;
  /** The first few failed steps with their reasons. The lake's steps table has all of them. */
  readonly failedSteps: readonly { readonly stepId: string; readonly error: string | null }[];
  readonly sysbenchVersion: string | null;
  /** What the backend could not apply, for the manifest. */
  readonly notes: readonly PlanNote[];
  /** The cell's resources with their lifetimes and what CloudWatch measured. */
  readonly bill?: CellBillFacts;
}

const MAX_FAILED_STEPS_REPORTED = 10;

/** The worst of its members' outcomes, since the child's output is only the status. */
export interface GroupOutcome {
  readonly groupId: string;
  readonly status: CellOutcome['status'];
  readonly error: string | null;
  readonly steps: number;
  readonly failedStepCount: number;
}

/** A teardown after provisioning failed receives only the item's position, as provisioning did. */
export async function teardownCellTask(deps: TaskDeps, event: GroupItemEvent<TeardownEvent>): Promise<GroupOutcome> {
  need(event, ['run', 'group'], 'teardown-cell');
  const group = await namedGroup(deps, event.run, event.group);
  const cells = await memberPlans(deps, event.run, group);
  const cursor = await readJson<StepCursor>(deps, lakeKeys.workflow.stepCursor(event.run.runId, group.groupId));
  // The step's own error, where the group's is only its segment Map's.
  const error = event.error === undefined ? null : causeText(cursor?.failure ?? event.error);
  const outcomes = await allMembers(
    cells.map((cell) =>
      teardownMember(
        deps,
        { ...event, group },
        cell,
        event.resources?.members.find((m) => m.cellId === cell.cellId),
        error,
      ),
    ),
  );
  const failed = outcomes.filter((o) => o.status !== 'succeeded');
  const named = (o: CellOutcome) => (outcomes.length > 1 ? `${o.cellId}: ${o.error ?? o.status}` : o.error);
  return {
    groupId: group.groupId,
    status: failed.length > 0 ? 'failed' : 'succeeded',
    error: failed.length > 0 ? failed.map(named).join('; ') : error,
    steps: outcomes.reduce((a, o) => a + o.steps, 0),
    failedStepCount: outcomes.reduce((a, o) => a + o.failedStepCount, 0),
  };
}

async function teardownMember(
  deps: TaskDeps,
  event: TeardownEvent,
  cell: CellPlan,
  resources: CellResources | undefined,
  error: string | null,
): Promise<CellOutcome> {
  // The bill of what really ran: what exists before this pass and what is gone after it.
  const billNotes: PlanNote[] = [];
  const recordBill = async (done: boolean) => {
    try {
      return await recordLifetimes(deps, event.run, cell, resources, done);
    } catch (e) {
      billNotes.push({
        level: 'warning',
        path: `cells[${cell.cellId}].cost`,
        message:
          `resource lifetimes not recorded (${(e as Error).message}): the cell's cost from what really ` +
          `ran is incomplete`,
      });
      return undefined;
    }
  };
  await recordBill(false);
  try {
    await deps.backend.teardownCell(event.run, cell, resources);
  } catch (e) {
    await recordBill(false);
    // The Map discards the cells' results, so FinishRun learns of a failed teardown from here.
    // A retry that succeeds replaces it with the cell's outcome.
    const failed: CellOutcome = {
      cellId: cell.cellId,
      status: 'teardown-failed',
      error: `${(e as Error).name}: ${(e as Error).message}`,
      steps: 0,
      failedStepCount: 0,
      failedSteps: [],
      sysbenchVersion: null,
      notes: [],
    };
    await deps.backend.lake.put(lakeKeys.workflow.cellOutcome(event.run.runId, cell.cellId), JSON.stringify(failed));
    throw e;
  }
  const lifetimes = await recordBill(true);
  const steps = await readStepOutcomes(deps, event.run, cell.cellId);
  const bill =
    lifetimes === undefined
      ? undefined
      : { resources: lifetimes, measured: await measuredCellUsage(deps, event.run, cell.cellId, steps) };
  // Overloaded and skipped steps are results, not failures.
  const failedSteps = steps.filter((s) => s.status === 'failed');
  const outcome: CellOutcome = {
    cellId: cell.cellId,
    status: error !== null || failedSteps.length > 0 ? 'failed' : 'succeeded',
    error: error ?? (failedSteps.length > 0 ? `${failedSteps.length} of ${steps.length} steps failed` : null),
    steps: steps.length,
    failedStepCount: failedSteps.length,
    failedSteps: failedSteps.slice(0, MAX_FAILED_STEPS_REPORTED).map((s) => ({ stepId: s.stepId, error: s.error })),
    sysbenchVersion: steps.find((s) => s.sysbenchVersion)?.sysbenchVersion ?? null,
    notes: [...(resources?.notes ?? []), ...lateMetricsNotes(event, cell.cellId), ...billNotes],
    ...(bill !== undefined ? { bill } : {}),
  };
  await deps.backend.lake.put(lakeKeys.workflow.cellOutcome(event.run.runId, cell.cellId), JSON.stringify(outcome));
  return outcome;
}

/** A visible word in the run manifest when a cell's server metrics stayed incomplete. */
function lateMetricsNotes(event: TeardownEvent, cellId: string): PlanNote[] {
  const path = `cells[${cellId}].serverMetrics`;
  if (event.lateMetricsError) {
    return [
      {
        level: 'warning',
        path,
        message:
          `late server metrics were not collected (` +
          String(causeText(event.lateMetricsError)) +
          `); windows collected at each step's end stay marked incomplete in metric_windows`,
      },
    ];
  }
  const late = event.lateMetrics;
  if (late && late.incompleteSteps > 0) {
    const more =
      late.incompleteSteps > late.incompleteStepIds.length
        ? ` and ${late.incompleteSteps - late.incompleteStepIds.length} more`
        : '';
    return [
      {
        level: 'warning',
        path,
        message:
          `server metrics of ${late.incompleteSteps} step(s) (` +
          late.incompleteStepIds.join(', ') +
          `${more}) were still missing datapoints after waiting for them: averages cover only what arrived ` +
          `(metric_windows.complete = false)`,
      },
    ];
  }
  return [];
}
