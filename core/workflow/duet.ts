/**
 * Order "duet" in the workflow: the variants of a round measured at the same moment, so a
 * disturbance of the shared machine or cloud (a noisy neighbour, a CPU hog, a network burst)
 * reaches all of them and cancels out of their ratio. The rule is duet benchmarking's (Bulej et al.,
 * "Duet Benchmarking: Improving Measurement Accuracy in the Cloud", ICPE 2020): run the compared
 * versions in parallel on the same machine, start them together, and compare their time-paired
 * samples.
 *
 * How it maps onto the one workflow definition (state-machines/benchmark.asl.json, unchanged in
 * shape): PlanRun hands the RunCells Map one item per duet (its id `r<repeat>-duet`; its DuetPlan,
 * with the member cells, is in the lake) instead of one per cell, and every Task the item reaches does, in one call,
 * for each member what it does for a single cell: ProvisionCell provisions every member's cluster,
 * CheckCellReady / StartClients / CheckClientsReady pass only when all members are, RunStep
 * (core/workflow/tasks/run-step.ts, the step scheduler for which a cell is a duet of one member) starts a
 * step's runner jobs on all members together and collects them all before the next step starts (the
 * barrier), CollectLateMetrics and TeardownCell cover every member. The members stay ordinary cells
 * in the plan and the lake (rows, outcomes), so results, reports and compare read them as before;
 * the report pairs their intervals by time (core/report/duet-pairs.ts). On AWS a duet's members are
 * separate clusters and client fleets started by the same Lambda call; locally their servers and
 * runners are processes on this one machine.
 */
import type { CellResources, RunContext } from '../backend';
import { lakeKeys } from '../lake/rows';
import { isDuetId } from '../plan/plan';
import { duetHeader, type DuetHeader } from '../plan/segments';
import type { DuetPlan, PlanNote, StepSegment } from '../plan/types';
import { InvalidTaskInputError } from './errors';
import type { StepCursor } from './step-scheduler';
import { causeText } from './tasks/cause-text';
import { loadCellPlan } from './tasks/cell-plans';
import { checkCellReadyTask } from './tasks/check-cell-ready';
import { checkClientsReadyTask } from './tasks/check-clients-ready';
import { collectLateMetricsTask, type LateMetricsOutput } from './tasks/collect-late-metrics';
import { readJson } from './tasks/lake-json';
import { namedCell } from './tasks/named-cell';
import { need } from './tasks/need';
import { provisionCellTask, type ProvisionedCell } from './tasks/provision-cell';
import { startClientsTask } from './tasks/start-clients';
import type { RunStepOutput, StepOutcome } from './tasks/step-types';
import { teardownCellTask, type CellOutcome, type TeardownEvent } from './tasks/teardown-cell';
import type { CellItemEvent, CellResourcesEvent, TaskDeps } from './tasks/types';

/** What the state carries of a duet's resources: each member cell's, as the backend returned them. */
export interface DuetResources {
  /** The duet's id (DuetPlan.cellId). */
  readonly cellId: string;
  readonly members: readonly CellResources[];
  /** The members' notes, for the progress lines (each member's outcome keeps its own). */
  readonly notes: readonly PlanNote[];
}

interface DuetEvent {
  readonly run: RunContext;
  readonly cell: { readonly cellId: string; readonly index: number; readonly members: readonly string[] };
}
interface DuetResourcesEvent extends DuetEvent {
  readonly resources: DuetResources;
}
export interface DuetStepEvent extends DuetResourcesEvent {
  readonly cell: DuetHeader;
  readonly segment: StepSegment;
}
type DuetTeardownEvent = Omit<TeardownEvent, 'cell' | 'resources'> & DuetEvent & { readonly resources?: DuetResources };

/**
 * The state's cell is a duet: its header names member cells; its reference (what namedCell reads for
 * the cell Map's item, {cellId, index}) only the duet's id, and the Tasks that receive a reference
 * (provisioning, a teardown before it) read the members from the duet's plan.
 */
export function isDuet(cell: unknown): cell is DuetEvent['cell'] {
  if (typeof cell !== 'object' || cell === null) return false;
  const { members, cellId } = cell as { members?: unknown; cellId?: unknown };
  return Array.isArray(members) || (typeof cellId === 'string' && isDuetId(cellId));
}

async function loadDuetPlan(deps: TaskDeps, run: RunContext, duetId: string): Promise<DuetPlan> {
  const duet = await readJson<DuetPlan>(deps, lakeKeys.workflow.cellPlan(run.runId, duetId));
  if (duet === undefined || !Array.isArray(duet.members)) {
    throw new InvalidTaskInputError(
      `duet ${duetId} of run ${run.runId} has no plan at ${deps.backend.lake.describe()} (PlanRun writes it)`,
    );
  }
  return duet;
}

/** Every member's call settled before the first failure is thrown: none is left running unseen. */
export async function allMembers<T>(calls: readonly Promise<T>[]): Promise<T[]> {
  const settled = await Promise.allSettled(calls);
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((r) => (r as PromiseFulfilledResult<T>).value);
}

export function memberResources(resources: DuetResources, cellId: string): CellResources {
  const own = resources.members.find((m) => m.cellId === cellId);
  if (own === undefined)
    throw new InvalidTaskInputError(`duet ${resources.cellId} carries no resources of its member ${cellId}`);
  return own;
}

function duetResources(duetId: string, members: readonly CellResources[]): DuetResources {
  const seen = new Set<string>();
  const notes = members
    .flatMap((m) => m.notes)
    .filter((n) => {
      const key = `${n.level}|${n.path}|${n.message}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  return { cellId: duetId, members, notes };
}

const memberRef = (duet: DuetEvent['cell'], cellId: string) => ({ cellId, index: duet.index });

async function provisionDuetTask(
  deps: TaskDeps,
  event: DuetEvent,
): Promise<{ run: RunContext; cell: DuetHeader; resources: DuetResources }> {
  need(event, ['run', 'cell'], 'provision-cell');
  const duet = await loadDuetPlan(deps, event.run, event.cell.cellId);
  const provisioned = await allMembers(
    duet.members.map((cellId) => provisionCellTask(deps, { run: event.run, cell: memberRef(event.cell, cellId) })),
  );
  // The members' steps bound the duet's segments (each step's worst case, as a cell's).
  const memberPlans = await Promise.all(duet.members.map((cellId) => loadCellPlan(deps, event.run, cellId)));
  return {
    run: event.run,
    cell: duetHeader(duet, memberPlans, deps.backend.writeForwarding),
    resources: duetResources(
      duet.cellId,
      provisioned.map((p) => p.resources),
    ),
  };
}

/** CheckCellReady and CheckClientsReady of a duet: ready when every member is. */
async function checkDuetReady(
  deps: TaskDeps,
  event: DuetResourcesEvent,
  check: typeof checkCellReadyTask | typeof checkClientsReadyTask,
): Promise<{ ready: boolean; resources: DuetResources; detail: string }> {
  need(event, ['run', 'cell', 'resources'], 'check-ready');
  const states = await allMembers(
    event.cell.members.map((cellId) =>
      check(deps, {
        run: event.run,
        cell: memberRef(event.cell, cellId),
        resources: memberResources(event.resources, cellId),
      }),
    ),
  );
  const pending = states.filter((s) => !s.ready).map((s) => `${s.resources.cellId}: ${s.detail}`);
  return {
    ready: pending.length === 0,
    resources: duetResources(
      event.cell.cellId,
      states.map((s) => s.resources),
    ),
    detail: pending.join('; ') || 'all members ready',
  };
}

async function startDuetClientsTask(deps: TaskDeps, event: DuetResourcesEvent): Promise<DuetResources> {
  need(event, ['run', 'cell', 'resources'], 'start-clients');
  const started = await allMembers(
    event.cell.members.map((cellId) =>
      startClientsTask(deps, {
        run: event.run,
        cell: memberRef(event.cell, cellId),
        resources: memberResources(event.resources, cellId),
      }),
    ),
  );
  return duetResources(event.cell.cellId, started);
}

/** What RunStep returns for a duet: a single cell's output, with each member's collected step. */
export interface DuetStepOutput extends RunStepOutput {
  readonly collectedByMember: readonly { readonly cellId: string; readonly outcome: StepOutcome }[];
  /**
   * Milliseconds between the first and the last member's runner start of the phase just started (null: none started).
   */
  readonly startSpreadMs: number | null;
}

async function collectDuetLateMetricsTask(deps: TaskDeps, event: DuetResourcesEvent): Promise<LateMetricsOutput> {
  need(event, ['run', 'cell', 'resources'], 'collect-late-metrics');
  const outputs = await allMembers(
    event.cell.members.map((cellId) =>
      collectLateMetricsTask(deps, {
        run: event.run,
        cell: memberRef(event.cell, cellId),
        resources: memberResources(event.resources, cellId),
      }),
    ),
  );
  const waiting = outputs.filter((o) => !o.done);
  return {
    done: waiting.length === 0,
    waitS: Math.max(0, ...waiting.map((o) => o.waitS)),
    recollected: outputs.reduce((a, o) => a + o.recollected, 0),
    incompleteSteps: outputs.reduce((a, o) => a + o.incompleteSteps, 0),
    incompleteStepIds: outputs
      .flatMap((o, i) => o.incompleteStepIds.map((id) => `${event.cell.members[i]}/${id}`))
      .slice(0, 10),
  };
}

/** Every member torn down and its outcome written; the duet's result is the worst of them. */
async function teardownDuetTask(deps: TaskDeps, event: DuetTeardownEvent): Promise<CellOutcome> {
  need(event, ['run', 'cell'], 'teardown-cell');
  const duet = await loadDuetPlan(deps, event.run, event.cell.cellId);
  const cursor = await readJson<StepCursor>(deps, lakeKeys.workflow.stepCursor(event.run.runId, duet.cellId));
  // The step's own error where the duet's is only its segment Map's (as teardownCellTask does for a cell).
  const error = event.error === undefined ? undefined : (cursor?.failure ?? event.error);
  const outcomes = await allMembers(
    duet.members.map((cellId) => {
      const resources = event.resources?.members.find((m) => m.cellId === cellId);
      return teardownCellTask(deps, {
        run: event.run,
        cell: memberRef(event.cell, cellId),
        ...(resources !== undefined ? { resources } : {}),
        ...(error !== undefined ? { error } : {}),
        ...(event.lateMetrics !== undefined ? { lateMetrics: event.lateMetrics } : {}),
        ...(event.lateMetricsError !== undefined ? { lateMetricsError: event.lateMetricsError } : {}),
      });
    }),
  );
  const failed = outcomes.filter((o) => o.status !== 'succeeded');
  return {
    cellId: duet.cellId,
    status: failed.length > 0 ? 'failed' : 'succeeded',
    error:
      failed.length > 0
        ? failed.map((o) => `${o.cellId}: ${o.error ?? o.status}`).join('; ')
        : error !== undefined
          ? causeText(error)
          : null,
    steps: outcomes.reduce((a, o) => a + o.steps, 0),
    failedStepCount: outcomes.reduce((a, o) => a + o.failedStepCount, 0),
    failedSteps: outcomes.flatMap((o) => o.failedSteps).slice(0, 10),
    sysbenchVersion: outcomes.find((o) => o.sysbenchVersion)?.sysbenchVersion ?? null,
    notes: outcomes.flatMap((o) => o.notes),
  };
}

// ------------------------------------------------------------- the Tasks, for a cell or a duet

/**
 * The item of the cell Map the Task received: a cell (the core/workflow/tasks/ function) or a duet (this file's).
 * Provisioning receives only the item's position and reads which cell or duet it is (namedCell).
 */
export async function provisionCellOrDuet(
  deps: TaskDeps,
  event: CellItemEvent | DuetEvent,
): Promise<ProvisionedCell | Awaited<ReturnType<typeof provisionDuetTask>>> {
  need(event, ['run', 'cell'], 'provision-cell');
  const named = { ...event, cell: await namedCell(deps, event.run, event.cell) };
  return isDuet(named.cell) ? provisionDuetTask(deps, named as DuetEvent) : provisionCellTask(deps, named);
}
export function checkCellOrDuetReady(deps: TaskDeps, event: CellResourcesEvent | DuetResourcesEvent) {
  return isDuet(event.cell)
    ? checkDuetReady(deps, event as DuetResourcesEvent, checkCellReadyTask)
    : checkCellReadyTask(deps, event as CellResourcesEvent);
}
export function startCellOrDuetClients(
  deps: TaskDeps,
  event: CellResourcesEvent | DuetResourcesEvent,
): Promise<CellResources | DuetResources> {
  return isDuet(event.cell)
    ? startDuetClientsTask(deps, event as DuetResourcesEvent)
    : startClientsTask(deps, event as CellResourcesEvent);
}
export function checkCellOrDuetClientsReady(deps: TaskDeps, event: CellResourcesEvent | DuetResourcesEvent) {
  return isDuet(event.cell)
    ? checkDuetReady(deps, event as DuetResourcesEvent, checkClientsReadyTask)
    : checkClientsReadyTask(deps, event as CellResourcesEvent);
}
export function collectCellOrDuetLateMetrics(
  deps: TaskDeps,
  event: CellResourcesEvent | DuetResourcesEvent,
): Promise<LateMetricsOutput> {
  return isDuet(event.cell)
    ? collectDuetLateMetricsTask(deps, event as DuetResourcesEvent)
    : collectLateMetricsTask(deps, event as CellResourcesEvent);
}
/** A teardown after provisioning failed receives only the item's position, as provisioning did. */
export async function teardownCellOrDuet(
  deps: TaskDeps,
  event: CellItemEvent<TeardownEvent> | DuetTeardownEvent,
): Promise<CellOutcome> {
  need(event, ['run', 'cell'], 'teardown-cell');
  const named = { ...event, cell: await namedCell(deps, event.run, event.cell) };
  return isDuet(named.cell)
    ? teardownDuetTask(deps, named as DuetTeardownEvent)
    : teardownCellTask(deps, named as TeardownEvent);
}
