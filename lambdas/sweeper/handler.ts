/**
 * The sweeper, the safety net for what Teardown could not delete.
 * A scheduled sweep deletes everything of runs whose expiry has passed.
 * A failed, aborted or timed-out execution's run is torn down at once.
 * What RDS is still deleting is marked to expire now, for the next sweep.
 * An execution that never got past PlanRun created nothing.
 */
import type { SweeperDeps, SweepReport } from './sweeper-deps';

export interface SweepExpiredEvent {
  readonly action: 'sweep-expired';
}

export interface ExecutionStatusChangeEvent {
  readonly source: 'aws.states';
  readonly 'detail-type': 'Step Functions Execution Status Change';
  readonly detail: {
    readonly executionArn: string;
    readonly stateMachineArn: string;
    readonly status: string;
    /** The execution input as a JSON string. Null when too large for the event. */
    readonly input?: string | null;
  };
}

export type SweeperEvent = SweepExpiredEvent | ExecutionStatusChangeEvent;

export interface SweeperResult {
  readonly action: 'sweep-expired' | 'teardown-run' | 'nothing-to-do';
  readonly runId?: string;
  readonly executionArn?: string;
  readonly report?: SweepReport;
  readonly detail?: string;
}

export class InvalidSweeperEventError extends Error {
  override readonly name = 'InvalidSweeperEventError';
}

function isStatusChange(event: unknown): event is ExecutionStatusChangeEvent {
  const e = event as Partial<ExecutionStatusChangeEvent> | null;
  return (
    e?.source === 'aws.states' &&
    e['detail-type'] === 'Step Functions Execution Status Change' &&
    typeof e.detail?.executionArn === 'string'
  );
}

/** runId from the execution input, when the caller chose one. */
export function runIdFromInput(input: string | null | undefined): string | undefined {
  if (!input) return undefined;
  try {
    const parsed = JSON.parse(input) as { runId?: unknown };
    return typeof parsed.runId === 'string' && parsed.runId !== '' ? parsed.runId : undefined;
  } catch {
    return undefined;
  }
}

export const makeHandler =
  (deps: SweeperDeps) =>
  async (event: SweeperEvent): Promise<SweeperResult> => {
    if ((event as SweepExpiredEvent | null)?.action === 'sweep-expired') {
      const report = await deps.sweepExpired(deps.now());
      return { action: 'sweep-expired', report };
    }
    if (isStatusChange(event)) {
      const { executionArn, input } = event.detail;
      const runId = runIdFromInput(input) ?? (await deps.runIdOfExecution(executionArn));
      if (!runId)
        return {
          action: 'nothing-to-do',
          executionArn,
          detail: 'the execution ended before PlanRun chose a run id: nothing was created',
        };
      const report = await deps.teardownRun(runId, deps.now());
      return { action: 'teardown-run', runId, executionArn, report };
    }
    throw new InvalidSweeperEventError(`unexpected sweeper event: ${JSON.stringify(event).slice(0, 500)}`);
  };

let bound: ((event: SweeperEvent) => Promise<SweeperResult>) | undefined;

export const handler = async (event: SweeperEvent): Promise<SweeperResult> => {
  if (!bound) {
    const { buildAwsSweeperDeps } = await import('./aws-sweeper-deps');
    bound = makeHandler(await buildAwsSweeperDeps(process.env));
  }
  return bound(event);
};
