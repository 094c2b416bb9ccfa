/**
 * The sweeper's AWS deps: the run id lookup through the execution history (Step Functions), and the
 * AWS backend's sweepExpired / teardownRun.
 */
import { GetExecutionHistoryCommand, SFNClient, type HistoryEvent } from '@aws-sdk/client-sfn';
import type { SweeperDeps, SweepReport } from './sweeper-deps';

/** The name of the first Task of state-machines/benchmark.asl.json, whose output carries run.runId. */
export const PLAN_STATE = 'PlanRun';

/** Finds run.runId in the output of the PlanRun state (TaskStateExited / TaskSucceeded events). */
export function runIdFromHistory(events: readonly HistoryEvent[]): string | undefined {
  for (const e of events) {
    const exited = e.stateExitedEventDetails;
    if (exited?.name === PLAN_STATE && exited.output) {
      try {
        const runId = (JSON.parse(exited.output) as { run?: { runId?: unknown } }).run?.runId;
        if (typeof runId === 'string' && runId !== '') return runId;
      } catch {
        // Output too large or not JSON: keep looking.
      }
    }
  }
  return undefined;
}

export async function runIdOfExecution(sfn: SFNClient, executionArn: string): Promise<string | undefined> {
  let nextToken: string | undefined;
  do {
    const page = await sfn.send(new GetExecutionHistoryCommand({ executionArn, maxResults: 1000, nextToken, includeExecutionData: true }));
    const runId = runIdFromHistory(page.events ?? []);
    if (runId) return runId;
    nextToken = page.nextToken;
  } while (nextToken);
  return undefined;
}

interface BackendSweeper {
  sweepExpired(now: Date): Promise<SweepReport>;
  teardownRun(runId: string): Promise<SweepReport>;
}

/**
 * The backend's sweeping functions. core/backends/aws does not export them yet; until it does, the
 * sweeper fails loudly (its events land in the dead-letter queue) instead of pretending to sweep.
 */
async function backendSweeper(_env: Readonly<Record<string, string | undefined>>): Promise<BackendSweeper> {
  throw new Error('core/backends/aws has no sweepExpired/teardownRun yet: the sweeper cannot delete anything');
}

export async function buildAwsSweeperDeps(env: Readonly<Record<string, string | undefined>>): Promise<SweeperDeps> {
  const sfn = new SFNClient({});
  const backend = await backendSweeper(env);
  return {
    now: () => new Date(),
    sweepExpired: (now) => backend.sweepExpired(now),
    teardownRun: (runId) => backend.teardownRun(runId),
    runIdOfExecution: (arn) => runIdOfExecution(sfn, arn),
  };
}
