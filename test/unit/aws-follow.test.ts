/**
 * Following an AWS run through its child executions (core/cli/aws-follow.ts): the parent's
 * history starts the cells' Map Run, each cell's child execution starts its steps' Map Run, and the
 * cell and step lines come from those children's histories, found with ListExecutions' mapRunArn.
 *
 * A mock of the Step Functions client (aws-sdk-client-mock), because nothing else has Map Run child
 * executions: moto's ListExecutions ignores mapRunArn (moto/stepfunctions/models.py
 * list_executions(state_machine_arn, status_filter)) and runs a Distributed Map's items inline, and
 * the local runner has no executions to list. Ctrl-C against a real (moto) execution is in
 * test/aws/cli-aws.test.ts.
 */
import {
  DescribeExecutionCommand,
  GetExecutionHistoryCommand,
  ListExecutionsCommand,
  SFNClient,
  type HistoryEvent,
} from '@aws-sdk/client-sfn';
import { mockClient } from 'aws-sdk-client-mock';
import { followExecution } from '../../core/cli/aws-follow';
import type { CellPlan, StepPlan } from '../../core/plan/types';

const PARENT = 'arn:aws:states:us-east-1:123456789012:execution:bench:run-1';
const CELLS_MAP_RUN = 'arn:aws:states:us-east-1:123456789012:mapRun:bench/RunCells:1';
const CELL_CHILD = 'arn:aws:states:us-east-1:123456789012:execution:bench/RunCells:cell-1';
const STEPS_MAP_RUN = 'arn:aws:states:us-east-1:123456789012:mapRun:bench/RunStepSegments:2';
const SEGMENT_CHILD = 'arn:aws:states:us-east-1:123456789012:execution:bench/RunStepSegments:seg-1';

const planStep: StepPlan = {
  stepId: 'rw-t2',
  index: 0,
  workload: 'rw',
  test: 'oltp_read_write',
  options: {},
  threads: 2,
  rate: 0,
  durationS: 60,
  warmupS: 0,
  reportIntervalS: 1,
  percentile: 95,
  target: 'writer',
  clients: 1,
  prepare: false,
  waitS: 60,
};
const planCell: CellPlan = {
  cellId: 'r6g-r1',
  index: 0,
  repeat: 1,
  variant: {
    name: 'r6g',
    instanceClass: 'db.r6g.large',
    readers: 0,
    clusterParameters: {},
    instanceParameters: {},
    performanceInsights: false,
    clients: { count: 1, instanceType: 'c6g.large', placement: 'same-az' },
  },
  data: { tables: 0, tableSize: 0, reuse: 'cell', prepareThreads: 1 },
  steps: [planStep],
};
/** A plain cell: a group of one. */
const header = {
  groupId: 'r6g-r1',
  index: 0,
  members: [
    {
      cellId: 'r6g-r1',
      index: 0,
      repeat: 1,
      variant: { instanceClass: 'db.r6g.large', readers: 0 },
      data: { tables: 0, tableSize: 0 },
    },
  ],
  stepCount: 1,
};
const summary = {
  stepId: 'rw-t2',
  index: 0,
  test: 'oltp_read_write',
  target: 'writer',
  threads: 2,
  clients: 1,
  rate: 0,
  warmupS: 0,
  durationS: 60,
};

const entered = (id: number, name: string, input: unknown): HistoryEvent => ({
  id,
  timestamp: new Date(id),
  type: 'TaskStateEntered',
  stateEnteredEventDetails: { name, input: JSON.stringify(input) },
});
const exited = (id: number, name: string, output: unknown): HistoryEvent => ({
  id,
  timestamp: new Date(id),
  type: 'TaskStateExited',
  stateExitedEventDetails: { name, output: JSON.stringify(output) },
});
const mapRunStarted = (id: number, mapRunArn: string): HistoryEvent => ({
  id,
  timestamp: new Date(id),
  type: 'MapRunStarted',
  mapRunStartedEventDetails: { mapRunArn },
});

it('prints cell and step lines from the child executions of both Map Runs, with the ETA, once each', async () => {
  // Arrange: first poll: the parent runs, the cell child is provisioning and has started its steps' Map Run,
  // whose segment child started the step; second poll: all ended, the step collected.
  const sfn = new SFNClient({ region: 'us-east-1' });
  const mock = mockClient(sfn);
  mock.on(DescribeExecutionCommand).resolvesOnce({ status: 'RUNNING' }).resolves({ status: 'SUCCEEDED' });
  mock
    .on(GetExecutionHistoryCommand, { executionArn: PARENT })
    .resolves({ events: [entered(1, 'RunCells', {}), mapRunStarted(2, CELLS_MAP_RUN)] });
  mock.on(GetExecutionHistoryCommand, { executionArn: CELL_CHILD }).resolves({
    events: [
      entered(1, 'ProvisionCell', { group: { index: 0 } }),
      exited(2, 'ProvisionCell', { group: header, resources: { notes: [] } }),
      entered(3, 'RunStepSegments', { group: header }),
      mapRunStarted(4, STEPS_MAP_RUN),
    ],
  });
  const segmentEvents = [
    entered(1, 'RunStep', { group: header }),
    exited(2, 'RunStep', { step: { done: false, started: { phase: 'run', step: summary }, collected: [] } }),
  ];
  const collected = [
    entered(3, 'RunStep', { group: header }),
    exited(4, 'RunStep', {
      step: {
        done: true,
        started: null,
        collected: [
          {
            cellId: 'r6g-r1',
            outcome: { stepId: 'rw-t2', index: 0, status: 'ok', error: null, tps: 622.88, qps: 12511.28 },
          },
        ],
      },
    }),
  ];
  mock
    .on(GetExecutionHistoryCommand, { executionArn: SEGMENT_CHILD })
    .resolvesOnce({ events: segmentEvents })
    .resolves({ events: [...segmentEvents, ...collected] });
  mock
    .on(ListExecutionsCommand, { mapRunArn: CELLS_MAP_RUN })
    .resolvesOnce({
      executions: [
        { executionArn: CELL_CHILD, status: 'RUNNING', name: 'cell-1', stateMachineArn: 'x', startDate: new Date(0) },
      ],
    })
    .resolves({
      executions: [
        { executionArn: CELL_CHILD, status: 'SUCCEEDED', name: 'cell-1', stateMachineArn: 'x', startDate: new Date(0) },
      ],
    });
  mock
    .on(ListExecutionsCommand, { mapRunArn: STEPS_MAP_RUN })
    .resolvesOnce({
      executions: [
        { executionArn: SEGMENT_CHILD, status: 'RUNNING', name: 'seg-1', stateMachineArn: 'x', startDate: new Date(0) },
      ],
    })
    .resolves({
      executions: [
        {
          executionArn: SEGMENT_CHILD,
          status: 'SUCCEEDED',
          name: 'seg-1',
          stateMachineArn: 'x',
          startDate: new Date(0),
        },
      ],
    });
  const lines: string[] = [];
  const now = Date.UTC(2026, 0, 1, 12, 0, 0);

  // Act
  const code = await followExecution({
    sfn,
    executionArn: PARENT,
    plan: { runId: 'run-1', backend: 'aws', region: 'us-east-1', maxConcurrency: 1, cells: [planCell] },
    log: (l) => lines.push(l),
    pollMs: 1,
    now: () => now,
  });

  // Assert: AWS times (core/plan/plan.ts BACKEND_TIMES): 30 min a cell, of which 10 min teardown; 30 s per step:
  // 1800 + 60 + 30 s = 31.5 min. The steps' Map Run has no line of its own (its steps do).
  expect(code).toBe(0);
  expect(lines).toEqual([
    'plan: ETA 32 min (about 12:31 UTC), 0 of 1 steps done',
    `cells started as map run ${CELLS_MAP_RUN}`,
    '[1/1 r6g-r1] provisioning',
    '[1/1 r6g-r1] db.r6g.large writer + 0 reader(s), 1 step(s)',
    '[1/1 r6g-r1] step 1/1 rw-t2: oltp_read_write on writer, 2 threads x 1 client(s), 60s · ETA 32 min (about ' +
      '12:31 UTC), 0 of 1 steps done',
    '[1/1 r6g-r1]   ok: 622.9 tps, 12,511.3 qps',
    'execution SUCCEEDED',
    'results: aurora-bench results --aws --run run-1',
  ]);
  // Every Map Run listed by its ARN, never by state machine.
  expect(
    mock
      .commandCalls(ListExecutionsCommand)
      .every((c) => c.args[0].input.mapRunArn !== undefined && c.args[0].input.stateMachineArn === undefined),
  ).toBe(true);
  mock.restore();
  sfn.destroy();
});
