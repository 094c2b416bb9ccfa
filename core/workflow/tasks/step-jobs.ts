/** The runner jobs a step's phase starts: which clients, endpoints, sysbench arguments and prepare order. */
import type { CellResources, RunContext, RunnerJob } from '../../backend';
import { lakeKeys } from '../../lake/rows';
import type { CellPlan, StepPlan, WriteForwardingSupport } from '../../plan/types';
import { buildSysbenchArgs } from '../../plan/sysbench-args';
import { ENGINES } from '../../aurora/engines';
import type { RunnerPhase } from '../../sysbench/types';
import { InvalidTaskInputError } from '../errors';
import { START_AFTER_PREPARE_S } from '../step-scheduler';
import { endpointFor } from './endpoints';
import { need } from './need';
import { decide } from './step-decision';
import type { StartJobsEvent } from './step-types';
import type { TaskDeps } from './types';

/** The cell's sysbench driver. A plan from before engines were a dimension ran Aurora MySQL. */
function cellDriver(cell: CellPlan): 'mysql' | 'pgsql' {
  return ENGINES[cell.variant.engine?.kind ?? 'aurora-mysql'].driver;
}

/** Where the first client writes the prepare of a step whose run jobs prepare. */
export function prepareOutputPrefix(run: RunContext, cell: CellPlan, step: StepPlan, clientId: string): string {
  return lakeKeys.raw(run.dt, run.runId, cell.cellId, step.stepId, 'prepare', clientId);
}

/**
 * A duet's step whose members' run jobs prepare their data first.
 * Every job awaits every member's prepare, and every run starts START_AFTER_PREPARE_S after the last ended.
 * So each member prepares on its own writer, yet all runs start at the same moment.
 * One member's failed prepare leaves every member's run unrun.
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
  // The first client prepares the data once on the writer. A run uses step.clients clients.
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
 * The write forwarding a run job asks of the backend.
 * A backend that forwards natively gets none. One that emulates it gets the step's consistency level.
 */
function forwardedWritesOf(step: StepPlan, support: WriteForwardingSupport): RunnerJob['writeForwarding'] {
  if (step.forwardedWrites === undefined || support === 'native') return undefined;
  if (support === 'none')
    throw new InvalidTaskInputError(
      `step ${step.stepId} sends writes to a reader of a write-forwarding variant, which this backend cannot run`,
    );
  return { consistency: step.forwardedWrites.consistency };
}

/** The runner jobs of a step's phase, none for a skipped rate step. Nothing is started yet. */
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
