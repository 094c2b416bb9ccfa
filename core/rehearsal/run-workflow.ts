/**
 * The synthesized state machine run as a local run runs it, each Task as its function in the sandbox.
 * What the run was doing is kept for the error a dead moto server gives.
 */
import { join } from 'node:path';
import { defaultCacheRoot } from '../backends/local/template';
import { executeLocally, type LocalExecutionResult } from '../workflow/local-runner';
import { progressLine } from '../workflow/progress';
import type { TaskDeps } from '../workflow/tasks/types';
import type { TaskName } from '../workflow/task-names';
import type { RunRowCopy } from './lake-copy';
import type { RdsEmulation } from './rds-emulation';
import type { Preflight } from './rehearsal-preflight';
import type { RehearsalOptions } from './rehearsal-options';
import type { RehearsalState } from './rehearsal-state';
import type { TaskSandbox } from './task-sandbox';

/**
 * CheckCellReady's answer, with the values the emulated writer was given as `requestedParameters`.
 * The parameter groups still answer their own values, as RDS does, and the backend checks those.
 * Only the comparison with the running server needs the stand-in's translation.
 * No RDS API carries a per-instance value.
 */
function withEmulatedParameters(payload: unknown, rds: RdsEmulation): unknown {
  interface Member {
    readonly writer?: { readonly instanceId?: string };
    readonly backendState?: Record<string, string>;
  }
  // The answer is a group's, with every member cell's resources.
  const state = payload as { ready?: boolean; resources?: { members?: readonly Member[] } } | null;
  const members = state?.resources?.members;
  if (state?.ready !== true || members === undefined) return payload;
  const withApplied = (m: Member): Member => {
    const writer = m.writer?.instanceId;
    const applied = writer === undefined || m.backendState === undefined ? undefined : rds.appliedParameters(writer);
    if (applied === undefined) return m;
    return { ...m, backendState: { ...m.backendState, requestedParameters: JSON.stringify(applied) } };
  };
  return { ...state, resources: { ...state.resources, members: members.map(withApplied) } };
}

/** A Task as its function's invocation. A sandbox or runtime failure is logged with the function's last lines. */
function invokeTask(sandbox: TaskSandbox, rds: RdsEmulation, log: (line: string) => void) {
  return async (task: TaskName, event: unknown): Promise<unknown> => {
    const fn = sandbox.byTask.get(task)!;
    const outcome = await sandbox.lambda.invoke(fn.logicalId, event);
    if (outcome.ok) return task === 'check-cell-ready' ? withEmulatedParameters(outcome.payload, rds) : outcome.payload;
    if (/^(Runtime|Sandbox)\./.test(outcome.errorType)) {
      log(`[lambda] ${task} (function ${fn.logicalId}): ${outcome.errorType}: ${outcome.errorMessage.split('\n')[0]}`);
      for (const line of sandbox.functionLogs.get(fn.logicalId)?.slice(-5) ?? [])
        log(`[lambda]   ${line.slice(0, 300)}`);
    }
    throw Object.assign(new Error(outcome.errorMessage), { name: outcome.errorType });
  };
}

export async function runWorkflow(
  options: RehearsalOptions,
  { prepared, spec, plan, definition }: Preflight,
  deps: TaskDeps,
  sandbox: TaskSandbox,
  rds: RdsEmulation,
  runRow: RunRowCopy,
  state: RehearsalState,
  log: (line: string) => void,
): Promise<LocalExecutionResult> {
  let failedOnce = false;
  return executeLocally({
    deps,
    invokeTask: invokeTask(sandbox, rds, log),
    input: { spec, scripts: prepared.scripts, runId: plan.runId, notes: prepared.preparationNotes },
    resolvedDefinition: definition,
    // As in a local run, a definition asl-validator passed once is not validated again.
    validatedDefinitionsDir: join(defaultCacheRoot(), 'validated-definitions'),
    pollMs: options.pollMs ?? 1000,
    retryMs: 200,
    ...(options.signal ? { signal: options.signal } : {}),
    onEvent: (ev) => {
      options.onEvent?.(ev);
      runRow.saw(ev);
      const line = progressLine(
        ev,
        () => plan.duets?.length ?? plan.cells.length,
        (index) => (plan.duets ?? plan.cells)[index]?.cellId,
      );
      if (line) log(line);
      // What it was doing is the progress before the first failure, and that failure.
      if (line && !failedOnce && / failed: /.test(line)) state.doing += `, when ${line.trim().replace(/: .*$/s, '')}`;
      else if (line && !failedOnce) state.doing = `the workflow ran (its last progress: "${line.trim()}")`;
      if (line && / failed: /.test(line)) failedOnce = true;
    },
  });
}
