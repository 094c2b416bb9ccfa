/**
 * After an execution that did not succeed, the CLI records the interrupted steps and the run's end.
 * The safety net's teardownRun then deletes what is left, as the stack's EventBridge rule would.
 */
import type { AwsBackendConfig } from '../backends/aws/config';
import type { AwsClients } from '../backends/aws/clients';
import { teardownRun } from '../backends/aws/sweeper';
import { markEnded, recordInterruptedSteps, TIMED_OUT_REASON } from '../cli/run-local';
import { stopReason } from '../cli/stop-signals';
import type { Plan } from '../plan/types';
import type { LocalExecutionResult } from '../workflow/local-runner';
import type { TaskDeps } from '../workflow/tasks/types';
import type { RehearsalOptions } from './rehearsal-options';

/** The result. An aborted one gets the signal that stopped it as its cause. */
export async function settleUnsuccessful(
  options: RehearsalOptions,
  plan: Plan,
  deps: TaskDeps,
  clients: AwsClients,
  config: AwsBackendConfig,
  executed: LocalExecutionResult,
  safetyNetDeleted: string[],
  log: (line: string) => void,
): Promise<LocalExecutionResult> {
  let result = executed;
  if (result.status === 'ABORTED') {
    // Said as a local run says which signal stopped it.
    const why = stopReason(options.signal?.reason);
    await recordInterruptedSteps(deps, result.events, `${why} while the step ran`, log);
    await markEnded(deps.backend, plan, 'aborted', `${why}; everything was torn down`);
    result = { ...result, cause: why };
  }
  if (result.status === 'TIMED_OUT') {
    await recordInterruptedSteps(deps, result.events, TIMED_OUT_REASON, log);
    await markEnded(
      deps.backend,
      plan,
      'timed-out',
      `${result.cause ?? 'the execution timed out'}; everything was torn down`,
    );
  }
  if (result.status !== 'SUCCEEDED') {
    // What the stack's EventBridge rule does for an execution that did not succeed.
    for (let attempt = 1; attempt <= 30; attempt++) {
      const report = await teardownRun(clients, config, plan.runId, new Date());
      safetyNetDeleted.push(...report.deleted);
      if (report.pending.length === 0) break;
      await new Promise((r) => setTimeout(r, 1000));
    }
    if (safetyNetDeleted.length > 0) log(`safety net (teardownRun) deleted: ${safetyNetDeleted.join(', ')}`);
  }
  return result;
}
