/**
 * The sweeper handler's routing (lambdas/sweeper): which run it tears down for which event. The
 * backend calls are recorded by a fake (the deletion itself is the AWS backend's, tested there).
 */
import type { HistoryEvent } from '@aws-sdk/client-sfn';
import { makeHandler, runIdFromInput, type ExecutionStatusChangeEvent } from '../../lambdas/sweeper/handler';
import { runIdFromHistory } from '../../lambdas/sweeper/aws-sweeper-deps';
import type { SweeperDeps } from '../../lambdas/sweeper/sweeper-deps';

function recordingDeps(runIdInHistory?: string) {
  const calls: string[] = [];
  const deps: SweeperDeps = {
    now: () => new Date('2026-11-21T03:00:00Z'),
    sweepExpired: (now) => {
      calls.push(`sweepExpired ${now.toISOString()}`);
      return Promise.resolve({
        cells: [],
        deleted: ['ab-1234-cell'],
        alreadyGone: [],
        pending: [],
        marked: [],
        markFailed: [],
      });
    },
    teardownRun: (runId, now) => {
      calls.push(`teardownRun ${runId} ${now.toISOString()}`);
      return Promise.resolve({ cells: [], deleted: [], alreadyGone: [], pending: [], marked: [], markFailed: [] });
    },
    runIdOfExecution: (arn) => {
      calls.push(`runIdOfExecution ${arn}`);
      return Promise.resolve(runIdInHistory);
    },
  };
  return { deps, calls };
}

const statusChange = (input: string | null): ExecutionStatusChangeEvent => ({
  source: 'aws.states',
  'detail-type': 'Step Functions Execution Status Change',
  detail: {
    executionArn: 'arn:aws:states:eu-central-1:123456789012:execution:aurora-bench-benchmark:e1',
    stateMachineArn: 'arn:sm',
    status: 'ABORTED',
    input,
  },
});

describe('sweeper handler', () => {
  test('the schedule sweeps expired runs as of now', async () => {
    const { deps, calls } = recordingDeps();

    const result = await makeHandler(deps)({ action: 'sweep-expired' });

    expect(calls).toEqual(['sweepExpired 2026-11-21T03:00:00.000Z']);
    expect(result).toMatchObject({ action: 'sweep-expired', report: { deleted: ['ab-1234-cell'] } });
  });

  test('an aborted execution whose input named the run tears that run down', async () => {
    const { deps, calls } = recordingDeps();

    const result = await makeHandler(deps)(
      statusChange(JSON.stringify({ spec: {}, runId: 'quickstart-20261121-0200' })),
    );

    expect(calls).toEqual(['teardownRun quickstart-20261121-0200 2026-11-21T03:00:00.000Z']);
    expect(result.runId).toBe('quickstart-20261121-0200');
  });

  test('without a run id in the input, the run id comes from the execution history', async () => {
    const { deps, calls } = recordingDeps('quickstart-from-plan');

    await makeHandler(deps)(statusChange(JSON.stringify({ spec: {} })));

    expect(calls).toEqual([
      'runIdOfExecution arn:aws:states:eu-central-1:123456789012:execution:aurora-bench-benchmark:e1',
      'teardownRun quickstart-from-plan 2026-11-21T03:00:00.000Z',
    ]);
  });

  test('an execution that ended before PlanRun created nothing: nothing to tear down', async () => {
    const { deps, calls } = recordingDeps(undefined);

    const result = await makeHandler(deps)(statusChange(null));

    expect(result.action).toBe('nothing-to-do');
    expect(calls.filter((c) => c.startsWith('teardownRun'))).toEqual([]);
  });

  test('any other event is refused with its content', async () => {
    const { deps } = recordingDeps();

    await expect(makeHandler(deps)({ hello: 'world' } as never)).rejects.toThrow(
      /unexpected sweeper event: \{"hello":"world"\}/,
    );
  });
});

describe('run id lookups', () => {
  test('runIdFromInput ignores inputs that are not JSON or have no runId', () => {
    expect(runIdFromInput('{"runId":"r1"}')).toBe('r1');
    expect(runIdFromInput('{"spec":{}}')).toBeUndefined();
    expect(runIdFromInput('not json')).toBeUndefined();
    expect(runIdFromInput(null)).toBeUndefined();
  });

  test('runIdFromHistory reads run.runId from the PlanRun state output', () => {
    const events: HistoryEvent[] = [
      { id: 1, timestamp: new Date(), type: 'ExecutionStarted' },
      {
        id: 3,
        timestamp: new Date(),
        type: 'TaskStateExited',
        stateExitedEventDetails: { name: 'Other', output: '{"run":{"runId":"wrong"}}' },
      },
      {
        id: 5,
        timestamp: new Date(),
        type: 'TaskStateExited',
        stateExitedEventDetails: { name: 'PlanRun', output: '{"run":{"runId":"r-42"},"cells":[]}' },
      },
    ];

    expect(runIdFromHistory(events)).toBe('r-42');
    expect(runIdFromHistory(events.slice(0, 2))).toBeUndefined();
  });
});
