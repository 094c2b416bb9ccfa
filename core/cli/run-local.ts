/**
 * `aurora-bench run SPEC --local`: validate and plan (nothing starts when either fails), then
 * execute the state machine locally, print progress, and make sure nothing is left running —
 * also when the user presses Ctrl-C or a step crashes.
 */
import { join } from 'node:path';
import type { Backend, RunContext } from '../backend';
import { lakeKeys, toJsonLines, type RunRow } from '../lake/rows';
import { localSpecRefusals } from '../backends/local/preflight';
import { preparePlanFromFile } from '../plan/prepare';
import type { Plan } from '../plan/types';
import type { Scale } from '../experiment/scale';
import { executeLocally, type ExecutionEvent, type LocalExecutionResult } from '../workflow/local-runner';
import { progressLine } from '../workflow/progress';
import { STATE } from '../workflow/state-names';
import { collectStepTask, interruptedSteps, type TaskDeps } from '../workflow/tasks';
import { localJudge } from '../regression/judge-local';
import { toolInfo } from './tool-info';

/** What the local runner needs beyond the Backend port: removing everything a run left. */
interface LocalBackendLike extends Backend {
  cleanupRun(runId: string): Promise<void>;
}

export interface RunLocalOptions {
  readonly specFile: string;
  readonly repoRoot: string;
  readonly lakeDir: string;
  readonly backend: LocalBackendLike;
  readonly serverVersion: string | null;
  readonly runId?: string;
  /** 'small' shrinks the experiment for a local rehearsal (core/experiment/scale.ts); default 'full'. */
  readonly scale?: Scale;
  readonly pollMs?: number;
  /** Replaces the state machine's TimeoutSeconds (executeLocally executionTimeoutS). */
  readonly executionTimeoutS?: number;
  readonly signal?: AbortSignal;
  readonly log?: (line: string) => void;
  readonly onEvent?: (event: ExecutionEvent) => void;
}

export interface RunLocalResult extends LocalExecutionResult {
  readonly plan: Plan;
}

export async function runLocal(options: RunLocalOptions): Promise<RunLocalResult> {
  const log = options.log ?? (() => undefined);
  // Planned here as well as in PlanRun so a refused plan stops before the workflow starts, and so
  // the run id is known for cleanup whatever happens next.
  const prepared = preparePlanFromFile(options.specFile, join(options.repoRoot, 'client', 'workloads'), {
    backend: 'local',
    scale: options.scale ?? 'full',
    backendRefusals: localSpecRefusals,
    ...(options.runId ? { runId: options.runId } : {}),
  });
  const { plan } = prepared;
  for (const n of prepared.notes) log(`[${n.level}] ${n.path}: ${n.message}`);
  log(`run ${plan.runId}: ${plan.cells.length} cells, results in ${options.backend.lake.describe()}`);

  const info = toolInfo(options.repoRoot);
  const deps: TaskDeps = {
    backend: options.backend,
    now: () => new Date(),
    toolVersion: info.version,
    gitSha: info.gitSha,
    serverVersion: options.serverVersion,
    readyTimeoutS: 120,
    preflight: (_plan, spec) => Promise.resolve(localSpecRefusals(spec)),
    judgeRun: localJudge(options.lakeDir),
  };
  let result: LocalExecutionResult;
  try {
    result = await executeLocally({
      deps,
      input: { spec: prepared.spec, scripts: prepared.scripts, runId: plan.runId, notes: prepared.preparationNotes },
      pollMs: options.pollMs ?? 200,
      ...(options.executionTimeoutS !== undefined ? { executionTimeoutS: options.executionTimeoutS } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      onEvent: (ev) => {
        options.onEvent?.(ev);
        const line = progressLine(ev, () => plan.cells.length);
        if (line) log(line);
      },
    });
  } finally {
    // Teardown states already ran on every path the workflow controls; this catches the ones it
    // does not (abort, a crash of this process's promise chain): no mariadbd, port or dir is left.
    await options.backend.cleanupRun(plan.runId);
  }
  if (result.status === 'ABORTED') {
    await recordInterruptedSteps(deps, result.events, ABORTED_REASON, log);
    await markEnded(options.backend, plan, 'aborted', 'aborted by the user (Ctrl-C); everything was torn down');
  }
  if (result.status === 'TIMED_OUT') {
    // What the safety net does for a timed-out execution on AWS (the sweeper tears the run down),
    // cleanupRun above did here; the lake says why the run ended.
    await recordInterruptedSteps(deps, result.events, TIMED_OUT_REASON, log);
    await markEnded(options.backend, plan, 'timed-out', `${result.cause ?? 'the execution timed out'}; everything was torn down`);
  }
  return { ...result, plan };
}

export const ABORTED_REASON = 'aborted by the user (Ctrl-C) while the step ran';
export const TIMED_OUT_REASON = 'the execution timed out (TimeoutSeconds) while the step ran';

/** Each step a stop interrupted, recorded as failed with the reason (also used by the AWS rehearsal). */
export async function recordInterruptedSteps(deps: TaskDeps, events: readonly ExecutionEvent[], reason: string, log: (line: string) => void): Promise<void> {
  // The run PlanRun started; the steps in flight are in its cells' cursors in the lake.
  const planned = events.find((ev) => ev.type === 'StateExited' && ev.state?.name === STATE.PlanRun)?.state?.output as { run?: RunContext } | undefined;
  if (!planned?.run) return;
  for (const step of await interruptedSteps(deps, planned.run, reason)) {
    try {
      await collectStepTask(deps, step);
      log(`[${step.cell.cellId}] step ${step.step.stepId} recorded as failed: ${reason}`);
    } catch (e) {
      log(`[${step.cell.cellId}] step ${step.step.stepId} could not be recorded: ${(e as Error).message}`);
    }
  }
}

/** The run row says why the run ended early (also used by the AWS rehearsal). */
export async function markEnded(backend: Backend, plan: Plan, status: 'aborted' | 'timed-out', error: string): Promise<void> {
  const key = lakeKeys.run(plan.dt, plan.runId);
  const text = await backend.lake.get(key);
  if (text === undefined) return;
  const row = JSON.parse(text.trim().split('\n')[0]!) as RunRow;
  const ended: RunRow = { ...row, status, ended_at: new Date().toISOString(), error };
  await backend.lake.put(key, toJsonLines([ended]));
}
