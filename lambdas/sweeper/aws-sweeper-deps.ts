/**
 * The sweeper's AWS deps, configured from the same environment as the Task Lambdas.
 * It looks run ids up in the execution history.
 */
import { GetExecutionHistoryCommand, SFNClient, type HistoryEvent } from '@aws-sdk/client-sfn';
import { makeAwsClients } from '../../core/backends/aws/clients';
import { awsConfigFromEnv } from '../../core/backends/aws/config';
import { sweepExpired, teardownRun } from '../../core/backends/aws/sweeper';
import { STATE } from '../../core/workflow/state-names';
import type { SweeperDeps } from './sweeper-deps';

/** The name of the workflow's first Task, whose output carries run.runId. */
const PLAN_STATE = STATE.PlanRun;

/**
 * Finds run.runId in the output of the PlanRun state.
 * @internal Exported for its tests.
 */
export function runIdFromHistory(events: readonly HistoryEvent[]): string | undefined {
  for (const e of events) {
    const exited = e.stateExitedEventDetails;
    if (exited?.name === PLAN_STATE && exited.output) {
      try {
        const runId = (JSON.parse(exited.output) as { run?: { runId?: unknown } }).run?.runId;
        if (typeof runId === 'string' && runId !== '') return runId;
      } catch {
        // Output too large or not JSON, so keep looking.
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

/** Built once per container from the environment the stack sets. */
export function buildAwsSweeperDeps(env: Readonly<Record<string, string | undefined>>): Promise<SweeperDeps> {
  // A promise the handler awaits. A bad environment rejects it.
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
