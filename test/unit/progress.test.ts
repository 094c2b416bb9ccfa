/**
 * One progress formatter for local and AWS runs: an AWS execution's history events, turned into
 * progress events by HistoryProgress, print the lines the local runner's events print.
 */
import type { HistoryEvent } from '@aws-sdk/client-sfn';
import type { ExecutionEvent } from '../../core/workflow/local-runner';
import { HistoryProgress, progressLine } from '../../core/workflow/progress';

/** The cell Map's item as its child receives it: the position only (the plan names the group at it). */
const ref = { index: 0 };
const itemId = (index: number) => ['r6g-r1'][index];
/** A plain cell: a group of one. */
const group = {
  groupId: 'r6g-r1',
  index: 0,
  members: [
    {
      cellId: 'r6g-r1',
      index: 0,
      repeat: 1,
      variant: { instanceClass: 'db.r6g.large', readers: 1 },
      data: { tables: 2, tableSize: 1000 },
    },
  ],
  stepCount: 1,
  segments: [{ from: 0, to: 1 }],
};
const step = {
  stepId: 'rw-t2',
  index: 0,
  test: 'oltp_read_write',
  target: 'writer',
  threads: 2,
  clients: 1,
  rate: 0,
  warmupS: 0,
  durationS: 10,
};
const outcome = { stepId: 'rw-t2', index: 0, status: 'ok', error: null, tps: 622.88, qps: 12511.28 };
const provisioned = { group, resources: { notes: [] } };
const started = { step: { done: false, waitS: 10, started: { phase: 'run', step }, collected: [], startSpreadMs: 0 } };
const collected = {
  step: { done: true, waitS: 0, started: null, collected: [{ cellId: 'r6g-r1', outcome }], startSpreadMs: null },
};

describe('progressLine', () => {
  it("prints the same lines for an AWS history as for the local runner's events of the same states", () => {
    // Arrange
    const local: ExecutionEvent[] = [
      { type: 'StateEntered', timestamp: 1, state: { name: 'ProvisionCell', type: 'Task', input: { group: ref } } },
      {
        type: 'StateExited',
        timestamp: 2,
        state: { name: 'ProvisionCell', type: 'Task', input: { group: ref }, output: provisioned },
      },
      { type: 'StateEntered', timestamp: 3, state: { name: 'RunStep', type: 'Task', input: { group } } },
      {
        type: 'StateExited',
        timestamp: 4,
        state: { name: 'RunStep', type: 'Task', input: { group }, output: { group, ...started } },
      },
      { type: 'StateEntered', timestamp: 5, state: { name: 'RunStep', type: 'Task', input: { group } } },
      {
        type: 'StateExited',
        timestamp: 6,
        state: { name: 'RunStep', type: 'Task', input: { group }, output: { group, ...collected } },
      },
      { type: 'StateEntered', timestamp: 7, state: { name: 'TeardownCell', type: 'Task', input: { group } } },
      {
        type: 'StateFailed',
        timestamp: 8,
        state: { name: 'TeardownCell', type: 'Task', input: { group } },
        Error: 'ResourceStillInUseError',
        Cause: 'cluster busy\nmore',
      },
    ];
    const history: HistoryEvent[] = [
      {
        id: 1,
        timestamp: new Date(1),
        type: 'TaskStateEntered',
        stateEnteredEventDetails: { name: 'ProvisionCell', input: JSON.stringify({ group: ref }) },
      },
      {
        id: 2,
        timestamp: new Date(2),
        type: 'TaskStateExited',
        stateExitedEventDetails: { name: 'ProvisionCell', output: JSON.stringify(provisioned) },
      },
      {
        id: 3,
        timestamp: new Date(3),
        type: 'TaskStateEntered',
        stateEnteredEventDetails: { name: 'RunStep', input: JSON.stringify({ group }) },
      },
      {
        id: 4,
        timestamp: new Date(4),
        type: 'TaskStateExited',
        stateExitedEventDetails: { name: 'RunStep', output: JSON.stringify({ group, ...started }) },
      },
      {
        id: 5,
        timestamp: new Date(5),
        type: 'TaskStateEntered',
        stateEnteredEventDetails: { name: 'RunStep', input: JSON.stringify({ group }) },
      },
      {
        id: 6,
        timestamp: new Date(6),
        type: 'TaskStateExited',
        stateExitedEventDetails: { name: 'RunStep', output: JSON.stringify({ group, ...collected }) },
      },
      {
        id: 7,
        timestamp: new Date(7),
        type: 'TaskStateEntered',
        stateEnteredEventDetails: { name: 'TeardownCell', input: JSON.stringify({ group }) },
      },
      {
        id: 8,
        timestamp: new Date(8),
        type: 'TaskFailed',
        taskFailedEventDetails: {
          resourceType: 'lambda',
          resource: 'invoke',
          error: 'ResourceStillInUseError',
          cause: 'cluster busy\nmore',
        },
      },
    ];
    const progress = new HistoryProgress();

    // Act
    const localLines = local.map((ev) => progressLine(ev, () => 1, itemId)).filter((l) => l !== undefined);
    const awsLines = history
      .map((ev) => progress.toProgressEvent(ev))
      .map((ev) => ev && progressLine(ev, () => 1, itemId))
      .filter((l) => l !== undefined);

    // Assert
    expect(localLines).toEqual([
      '[1/1 r6g-r1] provisioning',
      '[1/1 r6g-r1] db.r6g.large writer + 1 reader(s), 1 step(s)',
      '[1/1 r6g-r1] step 1/1 rw-t2: oltp_read_write on writer, 2 threads x 1 client(s), 10s',
      '[1/1 r6g-r1]   ok: 622.9 tps, 12,511.3 qps',
      '[1/1 r6g-r1] tearing down',
      '[1/1 r6g-r1] TeardownCell failed: ResourceStillInUseError: cluster busy',
    ]);
    expect(awsLines).toEqual(localLines);
  });

  it('a run that prepares first (data.reuse step) says the prepare, then the step', () => {
    // Arrange
    const output = {
      group,
      step: { done: false, waitS: 12, started: { phase: 'run', withPrepare: true, step }, collected: [] },
    };

    // Act
    const line = progressLine(
      { type: 'StateExited', state: { name: 'RunStep', type: 'Task', input: { group }, output } },
      () => 1,
    );

    // Assert
    expect(line).toBe(
      [
        '[1/1 r6g-r1] preparing 2 x 1,000 rows',
        '[1/1 r6g-r1] step 1/1 rw-t2: oltp_read_write on writer, 2 threads x 1 client(s), 10s',
      ].join('\n'),
    );
  });

  it('writes a line with ? for fields an input lacks instead of failing', () => {
    // Act
    const line = progressLine(
      {
        type: 'StateExited',
        state: {
          name: 'ProvisionCell',
          type: 'Task',
          input: { group: { groupId: 'x' } },
          output: { group: { groupId: 'x' } },
        },
      },
      () => 3,
    );

    // Assert
    expect(line).toBe('[?/3 x] ? writer + ? reader(s), ? step(s)');
  });

  it(
    'says nothing when RunStep finds a step still running (a value, done false), but names RunStep retries ' +
      'and failures',
    () => {
      // Arrange
      const notDone: ExecutionEvent = {
        type: 'StateExited',
        timestamp: 1,
        state: {
          name: 'RunStep',
          type: 'Task',
          input: { group },
          output: { group, step: { done: false, waitS: 15, started: null, collected: [], running: 1 } },
        },
      };
      const retried: ExecutionEvent = {
        type: 'StateRetried',
        timestamp: 2,
        state: { name: 'RunStep', type: 'Task', input: { group } },
        retry: { attempt: 1 },
      };
      const failed: ExecutionEvent = {
        type: 'StateFailed',
        timestamp: 3,
        state: { name: 'RunStep', type: 'Task', input: { group } },
        Error: 'DataPrepareFailedError',
        Cause: 'prepare failed',
      };

      // Act
      const lines = [notDone, retried, failed].map((ev) => progressLine(ev, () => 1));

      // Assert
      expect(lines).toEqual([
        undefined,
        '[1/1 r6g-r1] RunStep failed, retrying (attempt 1)',
        '[1/1 r6g-r1] RunStep failed: DataPrepareFailedError: prepare failed',
      ]);
    },
  );
});

describe('the verdicts line', () => {
  it("prints the run's verdict counts and each regression listed, or why there are none", () => {
    // Arrange: ComputeVerdicts' result under $.verdicts, or its caught error under $.verdictsError
    const judged = {
      verdicts: {
        verdicts: 8,
        regressed: 1,
        improved: 0,
        withinNoise: 6,
        unknown: 1,
        notJudged: 0,
        regressions: ['r6g oltp_read_write t16 TPS 70.0%'],
      },
    };
    const failed = {
      verdictsError: { Error: 'VerdictError', Cause: 'the verdicts need the lake through Athena\nmore' },
    };
    const exited = (output: unknown) =>
      progressLine(
        { type: 'StateExited', state: { name: 'ComputeVerdicts', type: 'Task', input: {}, output } },
        () => 1,
      );

    // Act / Assert
    expect(exited(judged)).toBe(
      "verdicts against the experiment's history: 1 regressed, 0 improved, 6 within the noise, 1 noise " +
        'unknown, 0 not judged\n  REGRESSED: r6g oltp_read_write t16 TPS 70.0%',
    );
    expect(exited(failed)).toBe('verdicts not computed: VerdictError: the verdicts need the lake through Athena');
  });
});
