/** RunStep's second half: a prepare judged, or a run's rows and metrics written. */
import type { CellResources, JobHandle, MetricsWindow, RunContext } from '../../backend';
import { lakeKeys, toJsonLines } from '../../lake/rows';
import { skippedStepRow, stepRowsOf, stepTotals } from '../../lake/step-rows';
import type { CellPlan, StepPlan } from '../../plan/types';
import { parseServerVariables } from '../../sysbench/server-variables';
import { applyStatuses, effectiveConfiguration, requestedParameters } from '../effective-config';
import { ConfigurationNotInEffectError, DataPrepareFailedError } from '../errors';
import { readClientOutput, type ClientOutput } from './client-output';
import { endpointFor } from './endpoints';
import { need } from './need';
import { metricsState, writeServerMetrics } from './server-metrics';
import { decide } from './step-decision';
import { prepareOutputPrefix } from './step-jobs';
import type { CollectStepEvent, StepOutcome } from './step-types';
import type { TaskDeps } from './types';

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
  // A run that prepared first has its prepare judged first, as a prepare job's is.
  // The configuration check that follows a prepare comes before any row is written.
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
  // The warm-up is excluded, as it is from sysbench's own summary.
  const measuredStart = new Date(Date.parse(startedAt) + step.warmupS * 1000).toISOString();
  const window: MetricsWindow = { stepId: step.stepId, start: measuredStart, end: endedAt };
  // Collected now, so a cell that fails later still has them.
  // On AWS the last minutes are usually not published yet, so CollectLateMetrics collects the window again.
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
 * The prepare of a run that prepared first, judged as a prepare job's output is.
 * Nothing for an interrupted step or one that started no jobs.
 * A group judges every member's before collecting any member's run.
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

/** Fails on a failed prepare, then checks the configuration the writer runs with. */
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

/**
 * Records the configuration the writer really runs with, before anything is measured.
 * A requested value that is not in effect fails the cell with the names and both values.
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
 * Fails a step that read from readers whose replication broke during it.
 * The reads succeeded, but on data that had stopped changing.
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
