/**
 * The sweeper's AWS deps: the run id lookup through the execution history (Step Functions), and the
 * AWS backend's sweepExpired / teardownRun (core/backends/aws/sweeper.ts), configured from the same
 * environment as the Task Lambdas.
 */
import { GetExecutionHistoryCommand, SFNClient, type HistoryEvent } from '@aws-sdk/client-sfn';
import { makeAwsClients } from '../../core/backends/aws/clients';
import { awsConfigFromEnv } from '../../core/backends/aws/config';
import { sweepExpired, teardownRun } from '../../core/backends/aws/sweeper';
import { STATE } from '../../core/workflow/state-names';
import type { SweeperDeps } from './sweeper-deps';

/** The name of the first Task of state-machines/benchmark.asl.json, whose output carries run.runId. */
const PLAN_STATE = STATE.PlanRun;

/**
 * Finds run.runId in the output of the PlanRun state (TaskStateExited / TaskSucceeded events).
 * @internal exported for its tests (a test seam)
 */
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

async function runIdOfExecution(sfn: SFNClient, executionArn: string): Promise<string | undefined> {
  let nextToken: string | undefined;
  do {
    const page = await sfn.send(
      new GetExecutionHistoryCommand({ executionArn, maxResults: 1000, nextToken, includeExecutionData: true }),
    );
    const runId = runIdFromHistory(page.events ?? []);
    if (runId) return runId;
    nextToken = page.nextToken;
  } while (nextToken);
  return undefined;
}

/** Built once per container from the environment the stack sets (the same as the Task Lambdas'). */
export function buildAwsSweeperDeps(env: Readonly<Record<string, string | undefined>>): Promise<SweeperDeps> {
  // A promise (a bad environment rejects it) as the handler awaits it.
  return Promise.resolve().then(() => {
    const config = awsConfigFromEnv(env);
    const clients = makeAwsClients({ region: config.region });
    const sfn = new SFNClient({ region: config.region });
    return {
      now: () => new Date(),
      sweepExpired: (now: Date) => sweepExpired(clients, config, now),
      teardownRun: (runId: string, now: Date) => teardownRun(clients, config, runId, now),
      runIdOfExecution: (arn: string) => runIdOfExecution(sfn, arn),
    };
  });
}
