/**
 * The logic behind each Task of state-machines/benchmark.asl.json. Handlers in lambdas/ parse the
 * event, build TaskDeps once and call these; the local runner binds the same handlers with local
 * deps. Everything returned here becomes state data, so it stays small and plain JSON.
 */
import {
  type Backend,
  type CellResources,
  type JobHandle,
  type MetricsWindow,
  type RunContext,
  type RunnerJob,
  type ServerMetricsCollection,
  type VerdictPublication,
} from '../backend';
import {
  lakeKeys,
  toJsonLines,
  type RunRow,
  type ServerConfigRow,
  type ServerMetricRow,
  type VerdictsRow,
} from '../lake/rows';
import { metricWindowRows, skippedStepRow, stepRowsOf, stepTotals, type ClientStepOutput } from '../lake/step-rows';
import { PlanError } from '../plan/plan';
import { preparePlan } from '../plan/prepare';
import { cellHeader } from '../plan/segments';
import type {
  CellHeader,
  CellItem,
  CellPlan,
  CellRef,
  Plan,
  PlanNote,
  StepPlan,
  StepSegment,
  WriteForwardingSupport,
} from '../plan/types';
import type { Spec } from '../experiment/schema';
import { SpecError, validateSpec } from '../experiment/validate';
import { buildSysbenchArgs } from '../plan/sysbench-args';
import { ENGINES } from '../aurora/engines';
import { parseClientCpu, parseSysbenchOutput } from '../sysbench/parser';
import type { ParsedOutput, RunnerPhase, RunnerResult } from '../sysbench/types';
import { parseServerVariables } from '../sysbench/server-variables';
import { applyStatuses, effectiveConfiguration, requestedParameters } from './effective-config';
import { measuredCellUsage, recordLifetimes, runCellCosts, type CellBillFacts } from './cell-bill';
import type { ActualCellCost } from '../plan/bill';
import { bundledPrices } from '../plan/cost';
import {
  ConfigurationNotInEffectError,
  DataPrepareFailedError,
  InvalidSpecError,
  InvalidTaskInputError,
  NotReadyInTimeError,
} from './errors';
import { metricsDueAt } from './metrics-due';
import { decideStep, stepsToConsult, type EarlierStepRows, type StepDecision } from './step-rates';
import { START_AFTER_PREPARE_S, storedCursor, type MemberJobsState, type StepCursor } from './step-scheduler';

export interface TaskDeps {
  readonly backend: Backend;
  readonly now: () => Date;
  readonly toolVersion: string;
  readonly gitSha: string | null;
  /** Server version string for the manifest (locally the mariadbd version; on AWS the engine version). */
  readonly serverVersion: string | null;
  /**
   * Checks only a backend can make before anything is created (AWS: the
   * account preflight, core/backends/aws/preflight.ts; locally: the spec
   * refusals): refused notes stop the run, the others go into its manifest.
   */
  readonly preflight?: (plan: Plan, spec: Spec) => Promise<readonly PlanNote[]>;
  /** How long provisioning and client start may take before the cell fails. */
  readonly readyTimeoutS: number;
  /**
   * A finished run judged against its experiment's history in the lake (core/regression/judge.ts:
   * DuckDB over the lake directory locally, Athena on AWS): one verdict row per step and metric.
   * Injected because the judging sits above the workflow in the data path.
   */
  readonly judgeRun: (run: RunContext) => Promise<readonly VerdictsRow[]>;
  /**
   * A finished run's step rows compacted to Parquet (on AWS by Athena,
   * core/backends/aws/athena-compaction.ts), called by FinishRun once every row is written; returns
   * what it did, in a few words. Undefined: FinishRun compacts nothing (locally the run command
   * compacts after the execution, core/lake/compact.ts, since an aborted run never reaches FinishRun).
   */
  readonly compactRun?: (run: RunContext) => Promise<string>;
}

// ---------------------------------------------------------------- event shapes

export interface PlanRunEvent {
  readonly spec: unknown;
  readonly scripts?: Record<string, string>;
  readonly runId?: string;
  /** Notes the caller made before the workflow (e.g. what --scale small changed), kept in the manifest. */
  readonly notes?: readonly PlanNote[];
}
export interface PlanRunOutput {
  readonly run: RunContext;
  /**
   * The cell Map's items: their positions 0..n-1 in the plan's cells (its duets with order "duet"),
   * nothing of their names, so the parent execution's state grows by a few bytes per cell whatever
   * the variant names: RunCells' ItemSelector makes each the child's {cell: {index}}. Which cell is
   * at a position (lakeKeys.workflow.item), each cell's plan with its steps
   * (lakeKeys.workflow.cellPlan) and the list of cells (lakeKeys.workflow.cellList) are in the lake.
   */
  readonly items: readonly number[];
  readonly maxConcurrency: number;
}
/** What a cell's states carry of the cell once it is named: a reference, or after provisioning the header. */
type CellInState = CellRef | CellHeader;
export interface CellEvent {
  readonly run: RunContext;
  readonly cell: CellInState;
}
/** A Task's event as the cell Map's child starts it: the cell may be only the item's position (CellItem). */
export type CellItemEvent<E extends CellEvent = CellEvent> = Omit<E, 'cell'> & {
  readonly cell: CellItem | CellInState;
};
export interface CellResourcesEvent extends CellEvent {
  readonly resources: CellResources;
}
/** ProvisionCell's result, which replaces the cell's state. */
export interface ProvisionedCell {
  readonly run: RunContext;
  readonly cell: CellHeader;
  readonly resources: CellResources;
}
/** The calls RunStep makes for one phase of a step (and the run-local/rehearsal stop paths). */
interface PlannedCellEvent {
  readonly run: RunContext;
  readonly cell: CellPlan;
}
export interface StartJobsEvent extends PlannedCellEvent {
  readonly resources: CellResources;
  readonly step: StepPlan;
  readonly phase: RunnerPhase;
  /**
   * A run whose jobs prepare the step's data first (preparesInRun): the first client's job drops and
   * prepares the tables, the others wait for it, then all run; one job per client and step instead
   * of a prepare job and then the run's.
   */
  readonly withPrepare?: boolean;
}
export interface RunStepEvent extends CellResourcesEvent {
  readonly cell: CellHeader;
  readonly segment: StepSegment;
}
/** The few fields of a step its progress line shows. */
export type StepSummary = Pick<
  StepPlan,
  'stepId' | 'index' | 'test' | 'script' | 'target' | 'threads' | 'clients' | 'rate' | 'warmupS' | 'durationS'
>;
export interface RunStepOutput {
  /** The segment's last step is collected: the segment's execution ends. */
  readonly done: boolean;
  /** Seconds until the phase just started should be over (the Wait before the next call). */
  readonly waitS: number;
  /** The phase this call started, if any; withPrepare: a run whose jobs prepare the data first. */
  readonly started: { readonly phase: RunnerPhase; readonly withPrepare?: boolean; readonly step: StepSummary } | null;
  /** The step this call collected, if it collected a run. */
  readonly collected: StepOutcome | null;
  /** Jobs this call found still running (it collected and started nothing): the step is not done yet. */
  readonly running?: number;
}
export interface CollectStepEvent extends StartJobsEvent {
  readonly jobs: readonly JobHandle[];
  readonly jobsState: MemberJobsState;
  /** Set when the run was stopped during the step: every client's row is failed with this reason. */
  readonly abortedReason?: string;
}
/** The server metrics window of a step, as collected at its end. */
interface StepMetricsState {
  /** The measured window (warm-up excluded), what a later collection asks for again. */
  readonly start: string;
  readonly end: string;
  /** Every instance's metric had all its datapoints (metric_windows). */
  readonly complete: boolean;
  /** When every datapoint of the window is published: its last period's end + metricsPublishDelayS. */
  readonly dueAt: string;
}
export interface StepOutcome {
  readonly stepId: string;
  /** The step's position in its cell. */
  readonly index: number;
  /**
   * overloaded: the rate outran the server (a measurement); skipped: not run (stopAtOverload, no capacity measured).
   */
  readonly status: 'ok' | 'overloaded' | 'failed' | 'skipped';
  readonly error: string | null;
  readonly tps: number | null;
  readonly qps: number | null;
  readonly sysbenchVersion: string | null;
  /** null when the step never got a window (a prepare). */
  readonly metrics: StepMetricsState | null;
}
export type CollectLateMetricsEvent = CellResourcesEvent;
export interface LateMetricsOutput {
  /** false: nothing collected yet, ask again after waitS. */
  readonly done: boolean;
  readonly waitS: number;
  /** Steps whose windows were collected again. */
  readonly recollected: number;
  /** Steps whose windows are still incomplete after waiting (the first few by id). */
  readonly incompleteSteps: number;
  readonly incompleteStepIds: readonly string[];
}
/** A Catch's error payload; Cause is the error message locally and a JSON string on Lambda. */
export interface TaskError {
  readonly Error: string;
  readonly Cause?: string;
}
export interface TeardownEvent extends CellEvent {
  readonly resources?: CellResources;
  readonly error?: TaskError;
  /** CollectLateMetrics' last answer, or why it failed (the step results stand; the windows stay marked). */
  readonly lateMetrics?: LateMetricsOutput;
  readonly lateMetricsError?: TaskError;
}
/** Kept small: a Distributed Map's collected output must stay under 256 KB for hundreds of cells. */
export interface CellOutcome {
  readonly cellId: string;
  readonly status: 'succeeded' | 'failed' | 'teardown-failed';
  readonly error: string | null;
  readonly steps: number;
  readonly failedStepCount: number;
  /** The first few failed steps with their reasons (all of them are in the lake's steps table). */
  readonly failedSteps: readonly { readonly stepId: string; readonly error: string | null }[];
  readonly sysbenchVersion: string | null;
  /** What the backend could not apply (parameters not applicable locally...), for the manifest. */
  readonly notes: readonly PlanNote[];
  /**
   * The cell's resources with their lifetimes and what CloudWatch
   * measured (a backend that bills: core/workflow/cell-bill.ts).
   */
  readonly bill?: CellBillFacts;
}
export interface FinishRunEvent {
  readonly run: RunContext;
  /**
   * The Map's items of an execution planned before the items became positions (ids, or earlier
   * references); read only when the run's cell list is not in the lake (a run planned before PlanRun
   * wrote it).
   */
  readonly cells?: readonly (string | CellRef)[];
  readonly error?: TaskError;
}
export interface ComputeVerdictsEvent {
  readonly run: RunContext;
}
/** Small (state data): the counts, the first regressions, where the rows are and what was sent. */
export interface ComputeVerdictsOutput {
  readonly runId: string;
  readonly verdicts: number;
  readonly regressed: number;
  readonly improved: number;
  readonly withinNoise: number;
  readonly unknown: number;
  readonly notJudged: number;
  /** The first few regressions, "<variant> <workload> t<threads> <metric> <ratio>". */
  readonly regressions: readonly string[];
  readonly lakeKey: string;
  readonly published: VerdictPublication;
}
export interface FinishRunOutput {
  readonly status: 'succeeded' | 'failed';
  readonly runId: string;
  readonly error: string | null;
  readonly cause: string | null;
  readonly steps: number;
  readonly failedSteps: number;
  /**
   * What compaction did, or why it did not (the JSON Lines rows then stay
   * and are read as they are); absent when the deps compact nothing.
   */
  readonly compaction?: string;
}

// ---------------------------------------------------------------- helpers

export function need<T extends object>(event: T, fields: readonly (keyof T & string)[], task: string): void {
  const received: unknown = event; // the state machine's JSON: the type is what it should be, not a guarantee
  if (received === null || typeof received !== 'object')
    throw new InvalidTaskInputError(`${task}: event is not an object`);
  for (const f of fields) {
    if ((event as Record<string, unknown>)[f] === undefined)
      throw new InvalidTaskInputError(`${task}: event.${f} is missing`);
  }
}

/** The readable part of a Catch Cause: Lambda wraps it as JSON {errorType, errorMessage, trace}. */
export function causeText(error: TaskError | undefined): string | null {
  if (error === undefined) return null;
  const cause = error.Cause ?? '';
  try {
    const parsed = JSON.parse(cause) as { errorMessage?: string; errorType?: string } | null;
    if (parsed && typeof parsed.errorMessage === 'string')
      return `${parsed.errorType ?? error.Error}: ${parsed.errorMessage}`;
  } catch {
    // a plain message
  }
  return cause.startsWith(error.Error) ? cause : `${error.Error}: ${cause}`;
}

function runContext(plan: Plan): RunContext {
  return {
    runId: plan.runId,
    specName: plan.specName,
    backend: plan.backend,
    region: plan.region,
    engineVersion: plan.engine.version,
    dt: plan.dt,
    ttlHours: plan.ttlHours,
  };
}

/** The manifest's view of the server_config table: per cell, the writer's version and the values read at prepare. */
async function serverConfigSummary(deps: TaskDeps, run: RunContext): Promise<string | null> {
  const keys = (await deps.backend.lake.list(lakeKeys.runTablePrefix('server_config', run.dt, run.runId))).filter((k) =>
    k.endsWith('.jsonl'),
  );
  if (keys.length === 0) return null;
  const summary: Record<
    string,
    { version: string | null; values: Record<string, string | null>; notInEffect: string[] }
  > = {};
  for (const key of keys.sort()) {
    const rows = ((await deps.backend.lake.get(key)) ?? '')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as ServerConfigRow);
    for (const r of rows) {
      const cell = (summary[r.cell_id] ??= { version: null, values: {}, notInEffect: [] });
      if (r.kind === 'version' && (r.name === 'version' || r.name === 'aurora_version' || r.name === 'server_version'))
        cell.version = cell.version === null ? r.value : `${cell.version} / ${r.value}`;
      else if (r.kind !== 'version') cell.values[r.name] = r.value;
      if (r.in_effect === false) cell.notInEffect.push(r.name);
    }
  }
  return JSON.stringify(summary);
}

async function readRunRow(deps: TaskDeps, run: RunContext): Promise<RunRow | undefined> {
  const text = await deps.backend.lake.get(lakeKeys.run(run.dt, run.runId));
  if (text === undefined || text.trim() === '') return undefined;
  return JSON.parse(text.trim().split('\n')[0]!) as RunRow;
}

/** Cell plans read by this process, by lake, run and cell: a plan never changes once PlanRun wrote it. */
const cellPlans = new Map<string, CellPlan>();
const CELL_PLANS_KEPT = 64;

/** A cell's plan with its steps, from the lake (the state machine carries only a reference or header). */
export async function loadCellPlan(deps: TaskDeps, run: RunContext, cellId: string): Promise<CellPlan> {
  const key = lakeKeys.workflow.cellPlan(run.runId, cellId);
  const cacheKey = `${deps.backend.lake.describe()}|${key}`;
  const cached = cellPlans.get(cacheKey);
  if (cached) return cached;
  const text = await deps.backend.lake.get(key);
  if (text === undefined)
    throw new InvalidTaskInputError(
      `cell ${cellId} of run ${run.runId} has no plan at ${deps.backend.lake.describe()}/${key} (PlanRun writes it)`,
    );
  const plan = JSON.parse(text) as CellPlan;
  if (cellPlans.size >= CELL_PLANS_KEPT) cellPlans.delete(cellPlans.keys().next().value!);
  cellPlans.set(cacheKey, plan);
  return plan;
}

/**
 * The cell (or duet) a cell Map item names. The child execution receives only the item's position
 * (RunCells' ItemSelector); the Tasks that see it before provisioning (ProvisionCell, a teardown
 * after provisioning failed) read which cell it is from the object PlanRun wrote for that position.
 * A state that already names its cell (the header after provisioning, or an execution planned when
 * the items were ids) is returned as it is.
 */
export async function namedCell(deps: TaskDeps, run: RunContext, cell: CellItem | CellInState): Promise<CellInState> {
  if (typeof (cell as Partial<CellRef>).cellId === 'string') return cell as CellInState;
  const index: unknown = (cell as Partial<CellItem> | null)?.index;
  if (typeof index !== 'number' || !Number.isInteger(index) || index < 0) {
    throw new InvalidTaskInputError(
      `event.cell names no cell: it needs cellId, or index (the cell Map item's position, a non-negative ` +
        `integer); got ${JSON.stringify(cell)}`,
    );
  }
  const key = lakeKeys.workflow.item(run.runId, index);
  const ref = await readJson<CellRef>(deps, key);
  if (ref === undefined || typeof ref.cellId !== 'string') {
    throw new InvalidTaskInputError(
      `item ${index} of run ${run.runId} has no cell at ${deps.backend.lake.describe()}/${key} (PlanRun writes ` +
        `one per item)`,
    );
  }
  return { cellId: ref.cellId, index };
}

export async function readJson<T>(deps: TaskDeps, key: string): Promise<T | undefined> {
  const text = await deps.backend.lake.get(key);
  return text === undefined || text.trim() === '' ? undefined : (JSON.parse(text) as T);
}

/** Every step outcome a cell wrote so far (one object per step), in step order. */
async function readStepOutcomes(deps: TaskDeps, run: RunContext, cellId: string): Promise<StepOutcome[]> {
  const keys = await deps.backend.lake.list(lakeKeys.workflow.stepOutcomes(run.runId, cellId));
  const outcomes: StepOutcome[] = [];
  // A few at a time: a cell may have a thousand steps, and S3 serves parallel GETs well.
  for (let i = 0; i < keys.length; i += 16) {
    const batch = await Promise.all(keys.slice(i, i + 16).map((k) => readJson<StepOutcome>(deps, k)));
    for (const o of batch) if (o) outcomes.push(o);
  }
  return outcomes.sort((a, b) => a.index - b.index);
}

/** Which endpoint the i-th client of a step connects to. */
function endpointFor(step: StepPlan, resources: CellResources, clientIndex: number) {
  if (step.target === 'writer') {
    if (!resources.writer) throw new InvalidTaskInputError(`cell ${resources.cellId} has no writer endpoint yet`);
    return resources.writer;
  }
  if (resources.readers.length === 0)
    throw new InvalidTaskInputError(
      `step ${step.stepId} targets ${step.target} but cell ${resources.cellId} has no readers`,
    );
  return step.target === 'reader' ? resources.readers[0]! : resources.readers[clientIndex % resources.readers.length]!;
}

/** The cell's sysbench driver: its engine's (a plan from before engines were a dimension ran Aurora MySQL). */
function cellDriver(cell: CellPlan): 'mysql' | 'pgsql' {
  return ENGINES[cell.variant.engine?.kind ?? 'aurora-mysql'].driver;
}

/** The prepare's output of a step whose run jobs prepare (the first client's, as a prepare job writes it). */
export function prepareOutputPrefix(run: RunContext, cell: CellPlan, step: StepPlan, clientId: string): string {
  return lakeKeys.raw(run.dt, run.runId, cell.cellId, step.stepId, 'prepare', clientId);
}

/**
 * A duet's step whose members' run jobs prepare their data first (each member's jobs as buildJobs
 * makes them with withPrepare, a member's list empty when it skips the step): every job of every
 * member also awaits the other members' prepares, and every run starts START_AFTER_PREPARE_S after
 * the last of them ended. So each member's data is prepared on its own writer by its own first
 * client, and still every member's run starts at the same moment, as when one call started them
 * all after a prepare phase; and one member's failed prepare leaves every member's run unrun.
 */
export function preparingTogether(run: RunContext, members: readonly (readonly RunnerJob[])[]): RunnerJob[][] {
  const prepares = members.flatMap((jobs) =>
    jobs.flatMap((j) => (j.prepareFirst !== undefined ? [j.prepareFirst.outputPrefix] : [])),
  );
  return members.map((jobs) =>
    jobs.map((job) => {
      const own = job.prepareFirst?.outputPrefix;
      const awaited = [...new Set([...(job.awaitPrepareOf ?? []), ...prepares])].filter((p) => p !== own);
      if (job.phase !== 'run' || (own === undefined && awaited.length === 0)) return job;
      return {
        ...job,
        ...(awaited.length > 0 ? { awaitPrepareOf: awaited } : {}),
        startAfterPrepareS: START_AFTER_PREPARE_S[run.backend],
      };
    }),
  );
}

function buildJobs(
  run: RunContext,
  cell: CellPlan,
  resources: CellResources,
  step: StepPlan,
  phase: RunnerPhase,
  withPrepare: boolean,
  writeForwarding: WriteForwardingSupport,
): RunnerJob[] {
  if (resources.clients.length === 0) throw new InvalidTaskInputError(`cell ${cell.cellId} has no clients`);
  const workload = step.script?.name ?? step.test;
  if (workload === undefined) throw new InvalidTaskInputError(`step ${step.stepId} has neither test nor script`);
  // Data is prepared once, by the first client, on the writer; a run uses step.clients clients.
  const count = phase === 'prepare' ? 1 : Math.min(step.clients, resources.clients.length);
  const prepareStep: StepPlan = { ...step, target: 'writer' };
  const forwarded = phase === 'run' ? forwardedWritesOf(step, writeForwarding) : undefined;
  const preparing = phase === 'run' && withPrepare;
  if (preparing && forwarded !== undefined)
    throw new InvalidTaskInputError(
      `step ${step.stepId}: the write-forwarding emulation's data is prepared by a job of its own`,
    );
  const preparedBy = resources.clients[0]!.clientId;
  const together = preparing && count > 1 ? { startAfterPrepareS: START_AFTER_PREPARE_S[run.backend] } : {};
  return resources.clients.slice(0, count).map((client, i) => ({
    jobId: `${cell.cellId}/${step.stepId}/${phase}/${client.clientId}`,
    phase,
    clientId: client.clientId,
    endpoint: endpointFor(phase === 'prepare' ? prepareStep : step, resources, i),
    workload,
    sysbenchArgs: buildSysbenchArgs(step, cell.data, phase),
    ...(cellDriver(cell) === 'pgsql' ? { driver: 'pgsql' as const } : {}),
    outputPrefix: lakeKeys.raw(run.dt, run.runId, cell.cellId, step.stepId, phase, client.clientId),
    ...(forwarded !== undefined ? { writeForwarding: forwarded } : {}),
    ...(preparing && i === 0
      ? {
          prepareFirst: {
            outputPrefix: prepareOutputPrefix(run, cell, step, client.clientId),
            endpoint: endpointFor(prepareStep, resources, 0),
            sysbenchArgs: buildSysbenchArgs(step, cell.data, 'prepare'),
          },
        }
      : {}),
    ...(preparing && i > 0 ? { awaitPrepareOf: [prepareOutputPrefix(run, cell, step, preparedBy)] } : {}),
    ...together,
  }));
}

/**
 * The write forwarding a run job asks of the backend: none for a backend that forwards natively (the
 * job runs as it is), the step's consistency level for one that emulates it (it adapts the job).
 */
function forwardedWritesOf(step: StepPlan, support: WriteForwardingSupport): RunnerJob['writeForwarding'] {
  if (step.forwardedWrites === undefined || support === 'native') return undefined;
  if (support === 'none')
    throw new InvalidTaskInputError(
      `step ${step.stepId} sends writes to a reader of a write-forwarding variant, which this backend cannot run`,
    );
  return { consistency: step.forwardedWrites.consistency };
}

interface ClientOutput extends ClientStepOutput {
  readonly job: JobHandle;
}

async function readClientOutput(
  deps: TaskDeps,
  job: JobHandle,
  step: StepPlan,
  lostDetail: string | undefined,
): Promise<ClientOutput> {
  const lake = deps.backend.lake;
  const [log, resultText, cpuText] = await Promise.all([
    lake.get(job.outputPrefix + 'output.log'),
    lake.get(job.outputPrefix + 'result.json'),
    lake.get(job.outputPrefix + 'client_cpu.jsonl'),
  ]);
  const result = resultText !== undefined ? (JSON.parse(resultText) as RunnerResult) : undefined;
  let parsed: ParsedOutput;
  if (log === undefined) {
    parsed = {
      status: 'failed',
      error: lostDetail ?? `runner left no output.log under ${job.outputPrefix}`,
      summary: null,
      intervals: [],
    };
  } else {
    parsed = parseSysbenchOutput(log, {
      ...(result ? { exitCode: result.exitCode } : {}),
      percentile: step.percentile,
    });
    if (result === undefined && parsed.status === 'ok') {
      parsed = { ...parsed, status: 'failed', error: lostDetail ?? 'runner did not finish (no result.json)' };
    } else if (result !== undefined && lostDetail !== undefined) {
      // A job stopped for a reason (its deadline, a hung server) still writes result.json: the
      // reason comes first, what sysbench said of being stopped after it.
      parsed = {
        ...parsed,
        status: 'failed',
        error: parsed.error !== null && parsed.error !== lostDetail ? `${lostDetail} (${parsed.error})` : lostDetail,
      };
    }
  }
  return {
    job,
    clientId: job.clientId,
    jobStartedAt: job.startedAt,
    parsed,
    result,
    cpuSamples: cpuText !== undefined ? parseClientCpu(cpuText) : [],
  };
}

// ---------------------------------------------------------------- tasks

export async function planRunTask(deps: TaskDeps, event: PlanRunEvent): Promise<PlanRunOutput> {
  need(event, ['spec'], 'plan-run');
  let plan: Plan;
  try {
    const spec = validateSpec(event.spec, 'execution input "spec"');
    // The input's spec is already scaled (the CLI prepared it); the
    // backend's own checks need the plan: deps.preflight below.
    ({ plan } = preparePlan(
      { spec, scripts: event.scripts ?? {} },
      {
        backend: deps.backend.kind,
        writeForwarding: deps.backend.writeForwarding,
        ...(event.runId ? { runId: event.runId } : {}),
        now: deps.now(),
      },
    ));
    // The backend's checks: refusals stop the run; what they warn about or could not check stays in its manifest.
    const checked = deps.preflight ? await deps.preflight(plan, spec) : [];
    const refusals = checked.filter((n) => n.level === 'refused');
    if (refusals.length > 0) throw new PlanError(refusals);
    for (const [name, body] of Object.entries(plan.scripts))
      await deps.backend.lake.put(lakeKeys.script(plan.runId, name), body);
    // Each cell's plan with its steps: the state carries references, the Tasks read the plan here.
    for (let i = 0; i < plan.cells.length; i += 16) {
      await Promise.all(
        plan.cells
          .slice(i, i + 16)
          .map((cell) =>
            deps.backend.lake.put(lakeKeys.workflow.cellPlan(plan.runId, cell.cellId), JSON.stringify(cell)),
          ),
      );
    }
    // Order "duet": the Map's items are the duets (core/workflow/duet.ts), each naming its member cells.
    for (const duet of plan.duets ?? [])
      await deps.backend.lake.put(lakeKeys.workflow.cellPlan(plan.runId, duet.cellId), JSON.stringify(duet));
    // FinishRun reads the cells from here, not from the state.
    await deps.backend.lake.put(
      lakeKeys.workflow.cellList(plan.runId),
      JSON.stringify(plan.cells.map((c) => c.cellId)),
    );
    // Which cell (or duet) each Map item is: the state carries only the item's position.
    const mapItems = plan.duets ?? plan.cells;
    for (let i = 0; i < mapItems.length; i += 16) {
      await Promise.all(
        mapItems.slice(i, i + 16).map((item, j) => {
          const ref: CellRef = { cellId: item.cellId, index: i + j };
          return deps.backend.lake.put(lakeKeys.workflow.item(plan.runId, i + j), JSON.stringify(ref));
        }),
      );
    }
    const row: RunRow = {
      run_id: plan.runId,
      spec_name: plan.specName,
      spec: JSON.stringify(spec),
      spec_sha256: plan.specSha256,
      plan: JSON.stringify({ ...plan, scripts: Object.keys(plan.scripts) }),
      backend: plan.backend,
      region: plan.region,
      engine_version: plan.engine.version,
      server_version: deps.serverVersion,
      sysbench_version: null,
      tool_version: deps.toolVersion,
      git_sha: deps.gitSha,
      started_at: deps.now().toISOString(),
      ended_at: null,
      status: 'running',
      error: null,
      cells: '[]',
      notes: JSON.stringify([...(event.notes ?? []), ...plan.notes, ...checked]),
      dt: plan.dt,
    };
    await deps.backend.lake.put(lakeKeys.run(plan.dt, plan.runId), toJsonLines([row]));
  } catch (e) {
    // Under the name the ASL's Catch reports; the message is what crosses the state machine.
    if (e instanceof SpecError || e instanceof PlanError) throw new InvalidSpecError(e.message, { cause: e });
    throw e;
  }
  // Positions only (a cell's or duet's index is its position: both are assigned in plan order).
  const items = (plan.duets ?? plan.cells).map((_, i) => i);
  return { run: runContext(plan), items, maxConcurrency: plan.maxConcurrency };
}

export async function provisionCellTask(deps: TaskDeps, event: CellEvent): Promise<ProvisionedCell> {
  need(event, ['run', 'cell'], 'provision-cell');
  const cell = await loadCellPlan(deps, event.run, event.cell.cellId);
  const resources = await deps.backend.provisionCell(event.run, cell);
  return {
    run: event.run,
    cell: cellHeader(cell, deps.backend.writeForwarding),
    resources: {
      ...resources,
      backendState: {
        ...resources.backendState,
        provisionStartedAt: resources.backendState['provisionStartedAt'] ?? deps.now().toISOString(),
      },
    },
  };
}

function checkDeadline(deps: TaskDeps, resources: CellResources, what: string, detail: string): void {
  const started = Date.parse(resources.backendState['provisionStartedAt'] ?? '');
  if (Number.isFinite(started) && deps.now().getTime() - started > deps.readyTimeoutS * 1000) {
    throw new NotReadyInTimeError(
      `${what} of cell ${resources.cellId} not ready after ${deps.readyTimeoutS} s: ${detail}`,
    );
  }
}

export async function checkCellReadyTask(deps: TaskDeps, event: CellResourcesEvent) {
  need(event, ['run', 'cell', 'resources'], 'check-cell-ready');
  const state = await deps.backend.checkCellReady(
    event.run,
    await loadCellPlan(deps, event.run, event.cell.cellId),
    event.resources,
  );
  if (!state.ready) checkDeadline(deps, event.resources, 'cluster', state.detail);
  return state;
}

export async function startClientsTask(deps: TaskDeps, event: CellResourcesEvent): Promise<CellResources> {
  need(event, ['run', 'cell', 'resources'], 'start-clients');
  return deps.backend.startClients(event.run, await loadCellPlan(deps, event.run, event.cell.cellId), event.resources);
}

export async function checkClientsReadyTask(deps: TaskDeps, event: CellResourcesEvent) {
  need(event, ['run', 'cell', 'resources'], 'check-clients-ready');
  const state = await deps.backend.checkClientsReady(
    event.run,
    await loadCellPlan(deps, event.run, event.cell.cellId),
    event.resources,
  );
  if (!state.ready) checkDeadline(deps, event.resources, 'clients', state.detail);
  return state;
}

/** The rows of the cell's earlier steps a rate decision reads (core/workflow/step-rates.ts), from the lake. */
async function decide(deps: TaskDeps, run: RunContext, cell: CellPlan, step: StepPlan): Promise<StepDecision> {
  const consult = stepsToConsult(cell, step);
  if (consult.length === 0) return { run: true, step };
  const earlier: EarlierStepRows[] = await Promise.all(
    consult.map(async (s) => {
      const text = await deps.backend.lake.get(lakeKeys.stepTable('steps', run.dt, run.runId, cell.cellId, s.stepId));
      const rows = (text ?? '')
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l) as { status: string; tps: number | null; rate: number });
      return { stepId: s.stepId, rows };
    }),
  );
  return decideStep(cell, step, earlier);
}

/** The runner jobs of a step's phase; none for a rate step decided to be skipped. Nothing is started yet. */
export async function jobsToStart(deps: TaskDeps, event: StartJobsEvent): Promise<RunnerJob[]> {
  need(event, ['run', 'cell', 'resources', 'step', 'phase'], 'start-jobs');
  const decision =
    event.phase === 'run' ? await decide(deps, event.run, event.cell, event.step) : { run: true, step: event.step };
  if (!decision.run) return [];
  return buildJobs(
    event.run,
    event.cell,
    event.resources,
    decision.step,
    event.phase,
    event.withPrepare === true,
    deps.backend.writeForwarding,
  );
}

export async function collectStepTask(deps: TaskDeps, event: CollectStepEvent): Promise<StepOutcome | null> {
  need(event, ['run', 'cell', 'resources', 'step', 'phase', 'jobs', 'jobsState'], 'collect-step');
  const { run, cell, step, resources } = event;
  const lost = new Map(
    event.jobsState.jobs.filter((j) => j.state === 'lost').map((j) => [j.jobId, j.detail ?? 'runner lost']),
  );
  const outputs = await Promise.all(event.jobs.map((j) => readClientOutput(deps, j, step, lost.get(j.jobId))));

  if (event.phase === 'prepare') {
    await checkPrepared(deps, event, outputs);
    return null;
  }
  // A run that prepared first: the prepare's own output is judged first, as a prepare job's is (a
  // failed prepare fails the cell, DataPrepareFailedError; the runs that then did not run are not
  // rows), and the configuration check that follows a prepare is made before any row is written.
  if (event.withPrepare === true) await checkRunPrepare(deps, event);

  const decision = await decide(deps, run, cell, event.step);
  if (!decision.run) {
    const row = skippedStepRow({
      run,
      cell,
      step: decision.step,
      endpoint: endpointFor(decision.step, resources, 0),
      reason: decision.reason,
      now: deps.now().toISOString(),
    });
    await deps.backend.lake.put(
      lakeKeys.stepTable('steps', run.dt, run.runId, cell.cellId, step.stepId),
      toJsonLines([row]),
    );
    return {
      stepId: step.stepId,
      index: step.index,
      status: 'skipped',
      error: decision.reason,
      tps: null,
      qps: null,
      sysbenchVersion: null,
      metrics: null,
    };
  }
  const measured = stepRowsOf({
    run,
    cell,
    step: decision.step,
    outputs,
    endpointOf: (clientIndex) => endpointFor(step, resources, clientIndex),
    sharedHost: deps.backend.kind === 'local',
    timedOut: event.jobsState.timedOut,
    ...(event.abortedReason !== undefined ? { abortedReason: event.abortedReason } : {}),
    now: deps.now().toISOString(),
  });
  // An interrupted step is failed already, and its servers may be gone.
  const rows =
    event.abortedReason !== undefined
      ? measured
      : { ...measured, steps: await withReplicationHealth(deps, run, cell, resources, step, measured.steps) };
  const { startedAt, endedAt } = rows;
  // The measured window: the warm-up is excluded, as it is from sysbench's own summary.
  const measuredStart = new Date(Date.parse(startedAt) + step.warmupS * 1000).toISOString();
  const window: MetricsWindow = { stepId: step.stepId, start: measuredStart, end: endedAt };
  // Collected now, so a cell that fails later still has them; on AWS the last minutes are usually not
  // published yet: the window is marked incomplete and CollectLateMetrics collects it again.
  const collection = await deps.backend.collectServerMetrics(run, cell, resources, window);
  const lake = deps.backend.lake;
  await Promise.all([
    lake.put(lakeKeys.stepTable('steps', run.dt, run.runId, cell.cellId, step.stepId), toJsonLines(rows.steps)),
    lake.put(lakeKeys.stepTable('intervals', run.dt, run.runId, cell.cellId, step.stepId), toJsonLines(rows.intervals)),
    writeServerMetrics(deps, run, cell, step.stepId, collection, rows.clientMetrics),
  ]);
  return {
    stepId: step.stepId,
    index: step.index,
    ...stepTotals(rows.steps),
    sysbenchVersion: outputs.find((o) => o.result)?.result?.sysbenchVersion ?? null,
    metrics: metricsState(deps, window, collection),
  };
}

/**
 * The prepare of a run that prepared first (its first job's, under prepareOutputPrefix), judged as
 * a prepare job's output is: DataPrepareFailedError if it failed, then the configuration check.
 * Nothing for an interrupted step or one that started no jobs. A duet judges every member's before
 * collecting any member's run (core/workflow/duet.ts).
 */
export async function checkRunPrepare(deps: TaskDeps, event: CollectStepEvent): Promise<void> {
  if (event.abortedReason !== undefined || event.jobs.length === 0) return;
  const first = event.jobs[0]!;
  const lost = event.jobsState.jobs.find((j) => j.jobId === first.jobId && j.state === 'lost');
  const prepareJob: JobHandle = {
    ...first,
    jobId: `${first.jobId} (prepare)`,
    phase: 'prepare',
    outputPrefix: prepareOutputPrefix(event.run, event.cell, event.step, first.clientId),
  };
  await checkPrepared(deps, event, [
    await readClientOutput(
      deps,
      prepareJob,
      event.step,
      lost === undefined ? undefined : (lost.detail ?? 'runner lost'),
    ),
  ]);
}

/** A prepare's output judged: DataPrepareFailedError if it failed, then the configuration the writer runs with. */
async function checkPrepared(deps: TaskDeps, event: CollectStepEvent, outputs: readonly ClientOutput[]): Promise<void> {
  const failed = outputs.filter((o) => o.parsed.status === 'failed' || (o.result?.exitCode ?? 1) !== 0);
  if (failed.length > 0) {
    const o = failed[0]!;
    throw new DataPrepareFailedError(
      `sysbench prepare for cell ${event.cell.cellId} failed on ${o.job.clientId}: ` +
        (o.parsed.error ?? `exit code ${o.result?.exitCode ?? 'unknown'}`),
    );
  }
  await checkEffectiveConfiguration(deps, event, outputs[0]?.job);
}

/** Seconds a prepare took, from its result.json; undefined when it has none or its times do not read. */
export async function preparedSeconds(deps: TaskDeps, outputPrefix: string): Promise<number | undefined> {
  const result = await readJson<RunnerResult>(deps, outputPrefix + 'result.json');
  const seconds = result ? (Date.parse(result.endedAt) - Date.parse(result.startedAt)) / 1000 : NaN;
  return Number.isFinite(seconds) && seconds >= 0 ? seconds : undefined;
}

export function stepSummary(step: StepPlan): StepSummary {
  const { stepId, index, test, script, target, threads, clients, rate, warmupS, durationS } = step;
  return {
    stepId,
    index,
    ...(test !== undefined ? { test } : {}),
    ...(script !== undefined ? { script } : {}),
    target,
    threads,
    clients,
    rate,
    warmupS,
    durationS,
  };
}

/**
 * The steps a stopped run left running (a run phase in flight in a cell's or duet's cursor), as the
 * CollectStep events that record them as failed with the reason, one per member cell; the cursors
 * say which.
 */
export async function interruptedSteps(deps: TaskDeps, run: RunContext, reason: string): Promise<CollectStepEvent[]> {
  const lake = deps.backend.lake;
  const keys = (await lake.list(lakeKeys.workflow.run(run.runId))).filter((k) => k.includes('/cursors/'));
  const events: CollectStepEvent[] = [];
  for (const key of keys) {
    const stored = await readJson<StepCursor>(deps, key);
    const inflight = stored === undefined ? undefined : storedCursor(stored).inflight;
    if (inflight?.phase !== 'run') continue;
    for (const member of inflight.members) {
      const cell = await loadCellPlan(deps, run, member.cellId);
      const step = cell.steps[inflight.stepIndex];
      if (!step) continue;
      const jobsState = { done: true, running: 0, timedOut: false, jobs: [] };
      events.push({
        run,
        cell,
        resources: member.resources,
        step,
        phase: 'run',
        jobs: member.jobs,
        jobsState,
        abortedReason: reason,
      });
    }
  }
  return events;
}

/**
 * After prepare, before anything is measured: the configuration the writer really runs with
 * (core/workflow/effective-config.ts) into the server_config table; a requested value that is not
 * in effect fails the cell with the names and both values.
 */
async function checkEffectiveConfiguration(
  deps: TaskDeps,
  event: CollectStepEvent,
  job: JobHandle | undefined,
): Promise<void> {
  const { run, cell, resources, step } = event;
  if (job === undefined || !resources.writer) return;
  const server = parseServerVariables(await deps.backend.lake.get(job.outputPrefix + 'server_variables.jsonl'));
  const config = effectiveConfiguration({
    base: { run_id: run.runId, cell_id: cell.cellId, variant: cell.variant.name, dt: run.dt },
    instanceId: resources.writer.instanceId,
    server,
    requested: requestedParameters(cell, resources),
    applyStatus: applyStatuses(resources),
  });
  await deps.backend.lake.put(
    lakeKeys.stepTable('server_config', run.dt, run.runId, cell.cellId, step.stepId),
    toJsonLines(config.rows),
  );
  if (config.notInEffect.length > 0) {
    throw new ConfigurationNotInEffectError(
      `cell ${cell.cellId} does not run with the configuration asked for (nothing ` +
        `measured): ${config.notInEffect.join('; ')}`,
    );
  }
}

/**
 * A step that read from readers is failed when a reader's replication broke during it (its writer
 * killed, a replication thread stopped): the reads succeeded, but on data that had stopped changing.
 */
async function withReplicationHealth<R extends { status: string; error: string | null }>(
  deps: TaskDeps,
  run: RunContext,
  cell: CellPlan,
  resources: CellResources,
  step: StepPlan,
  steps: readonly R[],
): Promise<R[]> {
  if (step.target === 'writer' || deps.backend.replicationHealth === undefined) return [...steps];
  const broken = (await deps.backend.replicationHealth(run, cell, resources)).filter((r) => !r.healthy);
  if (broken.length === 0) return [...steps];
  const why = `replication broke during the step: ${broken.map((r) => `${r.instanceId}: ${r.detail}`).join('; ')}`;
  return steps.map((row) => ({ ...row, status: 'failed', error: row.error ? `${row.error}; ${why}` : why }));
}

/** Whether every instance's metric of the window had all its datapoints. */
function isComplete(collection: ServerMetricsCollection): boolean {
  return collection.windows.every((w) => w.received >= w.expected);
}

function metricsState(deps: TaskDeps, window: MetricsWindow, collection: ServerMetricsCollection): StepMetricsState {
  return {
    start: window.start,
    end: window.end,
    complete: isComplete(collection),
    dueAt: metricsDueAt(window, collection.windows, deps.backend.metricsPublishDelayS),
  };
}

/**
 * The step's server_metrics (the server's rows next to the runner's client rows) and its
 * metric_windows. Written again by a later collection: the server rows and window counts are
 * replaced, the client rows kept.
 */
async function writeServerMetrics(
  deps: TaskDeps,
  run: RunContext,
  cell: CellPlan,
  stepId: string,
  collection: ServerMetricsCollection,
  clientRows: readonly ServerMetricRow[],
): Promise<void> {
  const base = { run_id: run.runId, cell_id: cell.cellId, variant: cell.variant.name, step_id: stepId, dt: run.dt };
  const windowRows = metricWindowRows(base, collection.windows, deps.now().toISOString());
  const lake = deps.backend.lake;
  await Promise.all([
    lake.put(
      lakeKeys.stepTable('server_metrics', run.dt, run.runId, cell.cellId, stepId),
      toJsonLines([...collection.rows, ...clientRows]),
    ),
    lake.put(lakeKeys.stepTable('metric_windows', run.dt, run.runId, cell.cellId, stepId), toJsonLines(windowRows)),
  ]);
}

/** How many incomplete step ids a LateMetricsOutput names (state data stays small). */
const MAX_INCOMPLETE_STEP_IDS = 10;

/**
 * After a cell's last step: the steps whose server metrics were incomplete when collected are
 * collected again once their datapoints are published (StepMetricsState.dueAt). One wait for the
 * whole cell, not one per step: the state machine waits waitS and calls again while done is false.
 */
export async function collectLateMetricsTask(
  deps: TaskDeps,
  event: CollectLateMetricsEvent,
): Promise<LateMetricsOutput> {
  need(event, ['run', 'cell', 'resources'], 'collect-late-metrics');
  const { run, resources } = event;
  const steps = await readStepOutcomes(deps, run, event.cell.cellId);
  const pending = steps.filter(
    (s): s is StepOutcome & { metrics: StepMetricsState } => s.metrics !== null && !s.metrics.complete,
  );
  if (pending.length === 0) return { done: true, waitS: 0, recollected: 0, incompleteSteps: 0, incompleteStepIds: [] };
  const cell = await loadCellPlan(deps, run, event.cell.cellId);
  const due = Math.max(...pending.map((s) => Date.parse(s.metrics.dueAt)));
  const now = deps.now().getTime();
  if (now < due)
    return {
      done: false,
      waitS: Math.max(1, Math.ceil((due - now) / 1000)),
      recollected: 0,
      incompleteSteps: pending.length,
      incompleteStepIds: pending.slice(0, MAX_INCOMPLETE_STEP_IDS).map((s) => s.stepId),
    };
  const lake = deps.backend.lake;
  const stillIncomplete: string[] = [];
  for (const step of pending) {
    const collection = await deps.backend.collectServerMetrics(run, cell, resources, {
      stepId: step.stepId,
      start: step.metrics.start,
      end: step.metrics.end,
    });
    const key = lakeKeys.stepTable('server_metrics', run.dt, run.runId, cell.cellId, step.stepId);
    const existing = (await lake.get(key)) ?? '';
    const clientRows = existing
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as ServerMetricRow)
      .filter((r) => r.source === 'runner');
    await writeServerMetrics(deps, run, cell, step.stepId, collection, clientRows);
    if (!isComplete(collection)) stillIncomplete.push(step.stepId);
  }
  return {
    done: true,
    waitS: 0,
    recollected: pending.length,
    incompleteSteps: stillIncomplete.length,
    incompleteStepIds: stillIncomplete.slice(0, MAX_INCOMPLETE_STEP_IDS),
  };
}

const MAX_FAILED_STEPS_REPORTED = 10;

/** Plan notes plus each cell's backend notes, once each (cells of one variant repeat them). */
function mergeNotes(planNotes: readonly PlanNote[], cellNotes: readonly PlanNote[]): PlanNote[] {
  const seen = new Set<string>();
  return [...planNotes, ...cellNotes].filter((n) => {
    const key = `${n.level}|${n.path}|${n.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

export async function teardownCellTask(deps: TaskDeps, event: TeardownEvent): Promise<CellOutcome> {
  need(event, ['run', 'cell'], 'teardown-cell');
  const cell = await loadCellPlan(deps, event.run, event.cell.cellId);
  // The bill of what really ran: what exists before this pass and what is gone after it.
  const billNotes: PlanNote[] = [];
  const recordBill = async (done: boolean) => {
    try {
      return await recordLifetimes(deps, event.run, cell, event.resources, done);
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
    await deps.backend.teardownCell(event.run, cell, event.resources);
  } catch (e) {
    await recordBill(false);
    // The Map discards the cells' results: FinishRun learns of a teardown that failed from here (a
    // retry that succeeds replaces it with the cell's outcome).
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
  const cursor = await readJson<StepCursor>(deps, lakeKeys.workflow.stepCursor(event.run.runId, cell.cellId));
  // The step's own error where the cell's is only its segment Map's (on AWS: States.ExceedToleratedFailureThreshold).
  const error = event.error === undefined ? null : cursor?.failure ? causeText(cursor.failure) : causeText(event.error);
  // Overloaded (a measurement) and skipped (by the spec's choice) steps are results, not failures.
  const failedSteps = steps.filter((s) => s.status === 'failed');
  const outcome: CellOutcome = {
    cellId: cell.cellId,
    status: error !== null || failedSteps.length > 0 ? 'failed' : 'succeeded',
    error: error ?? (failedSteps.length > 0 ? `${failedSteps.length} of ${steps.length} steps failed` : null),
    steps: steps.length,
    failedStepCount: failedSteps.length,
    failedSteps: failedSteps.slice(0, MAX_FAILED_STEPS_REPORTED).map((s) => ({ stepId: s.stepId, error: s.error })),
    sysbenchVersion: steps.find((s) => s.sysbenchVersion)?.sysbenchVersion ?? null,
    notes: [...(event.resources?.notes ?? []), ...lateMetricsNotes(event), ...billNotes],
    ...(bill !== undefined ? { bill } : {}),
  };
  await deps.backend.lake.put(lakeKeys.workflow.cellOutcome(event.run.runId, cell.cellId), JSON.stringify(outcome));
  return outcome;
}

/** A visible word in the run manifest when a cell's server metrics stayed incomplete. */
function lateMetricsNotes(event: TeardownEvent): PlanNote[] {
  const path = `cells[${event.cell.cellId}].serverMetrics`;
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

/**
 * The run's cells in plan order, from the list PlanRun wrote; for a run planned before that list
 * existed, from the Map's items (a duet's reference names its members).
 */
async function runCellIds(deps: TaskDeps, event: FinishRunEvent): Promise<string[]> {
  const listed = await readJson<string[]>(deps, lakeKeys.workflow.cellList(event.run.runId));
  if (listed !== undefined) return listed;
  return (event.cells ?? []).flatMap((item) => (typeof item === 'string' ? [item] : (item.members ?? [item.cellId])));
}

/** Each cell's cost from what really ran, priced with the bundled price table (the manifest's `cells[].cost`). */
function runCosts(row: RunRow, results: readonly CellOutcome[]): Map<string, ActualCellCost> {
  const facts = new Map(results.flatMap((r) => (r.bill !== undefined ? [[r.cellId, r.bill] as const] : [])));
  if (facts.size === 0) return new Map();
  try {
    return runCellCosts(JSON.parse(row.plan) as Plan, bundledPrices(), facts);
  } catch {
    // Pricing is a view of the facts, which the manifest keeps (cells[].resources, cells[].measured):
    // a plan or price table it cannot read leaves the cost out, not the run failed.
    return new Map();
  }
}

export async function finishRunTask(deps: TaskDeps, event: FinishRunEvent): Promise<FinishRunOutput> {
  need(event, ['run'], 'finish-run');
  // The run's cells and each cell's outcome are in the lake (a duet's members each wrote their own,
  // a teardown that failed wrote that): nothing of them travels in the state.
  const cells = await runCellIds(deps, event);
  const results: CellOutcome[] = [];
  const missing: string[] = [];
  const written = new Map<string, CellOutcome>();
  for (let i = 0; i < cells.length; i += 16) {
    const batch = cells.slice(i, i + 16);
    const outcomes = await Promise.all(
      batch.map((cellId) => readJson<CellOutcome>(deps, lakeKeys.workflow.cellOutcome(event.run.runId, cellId))),
    );
    outcomes.forEach((o, j) => {
      if (o) written.set(batch[j]!, o);
    });
  }
  for (const cellId of cells) {
    const outcome = written.get(cellId);
    if (outcome) results.push(outcome);
    else missing.push(cellId);
  }
  const failedCells = results.filter((r) => r.status !== 'succeeded');
  const problems = [
    ...(event.error ? [`run: ${causeText(event.error)}`] : []),
    ...failedCells.flatMap((c) => [
      `cell ${c.cellId} ${c.status}: ${c.error ?? 'unknown'}`,
      ...c.failedSteps.map((s) => `  step ${s.stepId}: ${s.error ?? 'failed'}`),
    ]),
    ...missing.map((id) => `cell ${id}: did not report (aborted?)`),
  ];
  const status = problems.length === 0 ? 'succeeded' : 'failed';
  const cause = problems.length === 0 ? null : problems.join('\n');
  const stepCount = results.reduce((a, r) => a + r.steps, 0);
  const failedStepCount = results.reduce((a, r) => a + r.failedStepCount, 0);
  const previous = await readRunRow(deps, event.run);
  if (previous) {
    const costs = runCosts(previous, results);
    const row: RunRow = {
      ...previous,
      status,
      error: cause,
      ended_at: deps.now().toISOString(),
      sysbench_version: results.find((r) => r.sysbenchVersion)?.sysbenchVersion ?? previous.sysbench_version,
      cells: JSON.stringify(
        results.map((r) => ({
          cell_id: r.cellId,
          status: r.status,
          error: r.error,
          ...(r.bill !== undefined ? { resources: r.bill.resources, measured: r.bill.measured } : {}),
          ...(costs.has(r.cellId) ? { cost: costs.get(r.cellId) } : {}),
        })),
      ),
      server_config: await serverConfigSummary(deps, event.run),
      notes: JSON.stringify(
        mergeNotes(
          JSON.parse(previous.notes || '[]') as PlanNote[],
          results.flatMap((r) => r.notes),
        ),
      ),
    };
    await deps.backend.lake.put(lakeKeys.run(event.run.dt, event.run.runId), toJsonLines([row]));
  }
  const onlyStepsFailed =
    event.error === undefined &&
    missing.length === 0 &&
    failedCells.every((c) => c.status === 'failed' && c.failedSteps.length > 0);
  // Every row of the run is written (late metrics were collected before each cell's teardown). A
  // compaction that fails leaves the JSON Lines rows, which the lake reads as before: not a run failure.
  let compaction: string | undefined;
  if (deps.compactRun) {
    try {
      compaction = await deps.compactRun(event.run);
    } catch (e) {
      compaction = `not compacted: ${(e as Error).message}`;
    }
  }
  return {
    status,
    runId: event.run.runId,
    error: status === 'succeeded' ? null : onlyStepsFailed ? 'BenchmarkStepsFailed' : 'BenchmarkFailed',
    cause,
    steps: stepCount,
    failedSteps: failedStepCount,
    ...(compaction !== undefined ? { compaction } : {}),
  };
}

const MAX_REGRESSIONS_LISTED = 5;

/**
 * After FinishRun: the run judged against its experiment's history (deps.judgeRun), the verdicts
 * written to the lake's verdicts table (one file per run, rewritten if the Task runs again), then
 * published (Backend.publishVerdicts: metrics, and on a regression an event and a notification).
 * Its failure changes neither the run's status nor its teardown (the ASL catches it).
 */
export async function computeVerdictsTask(deps: TaskDeps, event: ComputeVerdictsEvent): Promise<ComputeVerdictsOutput> {
  need(event, ['run'], 'compute-verdicts');
  const { run } = event;
  const verdicts = await deps.judgeRun(run);
  const lakeKey = lakeKeys.verdicts(run.dt, run.runId);
  await deps.backend.lake.put(lakeKey, toJsonLines(verdicts));
  const published = await deps.backend.publishVerdicts(run, verdicts);
  const count = (verdict: string) => verdicts.filter((v) => v.verdict === verdict).length;
  return {
    runId: run.runId,
    verdicts: verdicts.length,
    regressed: count('regressed'),
    improved: count('improved'),
    withinNoise: count('within-noise'),
    unknown: count('unknown'),
    notJudged: count('not-judged'),
    regressions: verdicts
      .filter((v) => v.verdict === 'regressed')
      .slice(0, MAX_REGRESSIONS_LISTED)
      .map((v) =>
        (
          `${v.variant} ${v.workload} t${v.threads}` +
          (v.rate > 0 ? ` @${v.rate}/s` : '') +
          ` ${v.metric_label} ` +
          (v.ratio === null ? '' : `${(v.ratio * 100).toFixed(1)}%`)
        ).trim(),
      ),
    lakeKey,
    published,
  };
}
