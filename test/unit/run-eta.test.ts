/**
 * The run's ETA from its plan (core/plan/eta.ts) and where it is printed: on each step's start line
 * of a run's progress (RunProgressLines), the same for a local run and an AWS one.
 */
import { PassThrough } from 'node:stream';
import { askOnInterrupt } from '../../core/cli/interrupt-choice';
import { durationText, etaText, RunEta } from '../../core/plan/eta';
import type { CellPlan, Plan, StepPlan } from '../../core/plan/types';
import type { ExecutionEvent } from '../../core/workflow/local-runner';
import { RunProgressLines } from '../../core/workflow/progress';

/**
 * A local plan's step: 10 s, no warm-up, nothing to prepare; with the local backend's 2 s step overhead it counts 12 s.
 */
const step = (stepId: string, index: number, durationS = 10): StepPlan => ({
  stepId,
  index,
  workload: 'rw',
  test: 'oltp_read_write',
  options: {},
  threads: 2,
  rate: 0,
  durationS,
  warmupS: 0,
  reportIntervalS: 1,
  percentile: 95,
  target: 'writer',
  clients: 1,
  prepare: false,
  waitS: durationS,
});
const cell = (cellId: string, index: number, steps: StepPlan[], duet?: string): CellPlan => ({
  cellId,
  index,
  repeat: 1,
  variant: {
    name: cellId,
    instanceClass: 'db.r6g.large',
    readers: 0,
    clusterParameters: {},
    instanceParameters: {},
    performanceInsights: false,
    clients: { count: 1, instanceType: 'c6g.large', placement: 'same-az' },
  },
  data: { tables: 0, tableSize: 0, reuse: 'cell', prepareThreads: 1 },
  steps,
  ...(duet !== undefined ? { duet } : {}),
});
const plan = (
  maxConcurrency: number,
  cells: CellPlan[],
  duets?: Plan['duets'],
): Pick<Plan, 'backend' | 'cells' | 'maxConcurrency' | 'duets'> => ({
  backend: 'local',
  maxConcurrency,
  cells,
  ...(duets ? { duets } : {}),
});
const s = (seconds: number): number => seconds * 1000;

// Local times (core/plan/plan.ts BACKEND_TIMES): 5 s a cell's set-up and teardown (1 s of it teardown), 2 s per step.
const two = () =>
  plan(1, [cell('a-r1', 0, [step('x', 0), step('y', 1)]), cell('b-r1', 1, [step('x', 0), step('y', 1)])]);

describe('RunEta', () => {
  it('is the plan’s estimate before anything started, and counts lanes', () => {
    // Act
    const oneLane = new RunEta(two()).remainingS(0);
    const twoLanes = new RunEta({ ...two(), maxConcurrency: 2 }).remainingS(0);
    // Assert: each cell 5 + 2 x 12 = 29 s.
    expect(oneLane).toBe(58);
    expect(twoLanes).toBe(29);
  });

  it('moves with what the run really took: time of a started cell, a step running long, a finished cell', () => {
    // Arrange
    const eta = new RunEta(two());
    // Act
    eta.itemStarted('a-r1', s(0));
    const settingUp = eta.remainingS(s(3)); // 4 s set-up + 12 s first step - 3 s, + 12 s + 1 s teardown, + 29 s queued
    eta.stepDone('a-r1', s(20)); // the first step took 20 s, not 16
    const afterSlowStep = eta.remainingS(s(20)); // 12 s + 1 s + 29 s
    const overdue = eta.remainingS(s(40)); // the second step is past its 12 s: 0 + 1 s + 29 s
    eta.itemFinished('a-r1');
    const oneLeft = eta.remainingS(s(41));
    // Assert
    expect([settingUp, afterSlowStep, overdue, oneLeft]).toEqual([55, 42, 30, 29]);
    expect(eta.stepCounts()).toEqual({ done: 1, planned: 4 });
  });

  it('times a duet by its slowest member per step, as its members run each step together', () => {
    // Arrange: a 10 s and a 40 s member (12 s and 42 s with the overhead).
    const duetPlan = plan(
      1,
      [cell('a-r1', 0, [step('x', 0, 10)], 'r1-duet'), cell('b-r1', 1, [step('x', 0, 40)], 'r1-duet')],
      [{ cellId: 'r1-duet', index: 0, repeat: 1, members: ['a-r1', 'b-r1'], stepCount: 1 }],
    );
    // Act
    const remaining = new RunEta(duetPlan).remainingS(0);
    // Assert
    expect(remaining).toBe(5 + 42);
  });

  it('says the time left, the clock time and the steps done', () => {
    // Act
    const text = etaText(new RunEta(two()), Date.UTC(2026, 0, 1, 23, 59, 30));
    // Assert
    expect([durationText(40), durationText(720), durationText(3900)]).toEqual(['40 s', '12 min', '1 h 05 min']);
    expect(text).toBe('ETA 58 s (about 00:00 UTC on 2026-01-02), 0 of 4 steps done');
  });
});

describe('RunProgressLines', () => {
  it('adds the ETA to each line that starts a step, and follows the cells through the events', () => {
    // Arrange
    let now = 0;
    const lines = new RunProgressLines(two(), () => now);
    /** A plain cell: a group of one. */
    const header = {
      groupId: 'a-r1',
      index: 0,
      members: [
        {
          cellId: 'a-r1',
          index: 0,
          repeat: 1,
          variant: { instanceClass: 'db.r6g.large', readers: 0 },
          data: { tables: 0, tableSize: 0 },
        },
      ],
      stepCount: 2,
    };
    const x = {
      stepId: 'x',
      index: 0,
      test: 'oltp_read_write',
      target: 'writer',
      threads: 2,
      clients: 1,
      rate: 0,
      warmupS: 0,
      durationS: 10,
    };
    const y = { ...x, stepId: 'y', index: 1 };
    const events: [number, ExecutionEvent][] = [
      [
        0,
        {
          type: 'StateEntered',
          timestamp: 0,
          state: { name: 'ProvisionCell', type: 'Task', input: { group: { index: 0 } } },
        },
      ],
      [
        4,
        {
          type: 'StateExited',
          timestamp: 0,
          state: {
            name: 'RunStep',
            type: 'Task',
            input: { group: header },
            output: { step: { done: false, started: { phase: 'run', step: x }, collected: [] } },
          },
        },
      ],
      [
        16,
        {
          type: 'StateExited',
          timestamp: 0,
          state: {
            name: 'RunStep',
            type: 'Task',
            input: { group: header },
            output: {
              step: {
                done: false,
                started: { phase: 'run', step: y },
                collected: [
                  {
                    cellId: 'a-r1',
                    outcome: { stepId: 'x', index: 0, status: 'ok', error: null, tps: 100, qps: 2000 },
                  },
                ],
              },
            },
          },
        },
      ],
    ];
    // Act
    const printed = events.map(([at, ev]) => {
      now = s(at);
      return lines.line(ev);
    });
    // Assert
    expect(printed).toEqual([
      '[1/2 a-r1] provisioning',
      '[1/2 a-r1] step 1/2 x: oltp_read_write on writer, 2 threads x 1 client(s), 10s · ETA 54 s (about 00:00 ' +
        'UTC), 0 of 4 steps done',
      '[1/2 a-r1]   ok: 100.0 tps, 2,000.0 qps\n[1/2 a-r1] step 2/2 y: oltp_read_write on writer, 2 threads x ' +
        '1 client(s), 10s · ETA 42 s (about 00:00 UTC), 1 of 4 steps done',
    ]);
  });
});

describe('askOnInterrupt', () => {
  const io = (tty: boolean) => {
    const input = Object.assign(new PassThrough(), { isTTY: tty });
    const output = new PassThrough();
    let said = '';
    output.on('data', (d: Buffer) => (said += d.toString()));
    return { input, output, said: () => said };
  };

  it('asks at a terminal, again on an answer it does not know, and takes "l" as leave', async () => {
    // Arrange
    const t = io(true);
    // Act
    const answer = askOnInterrupt(t, 'arn:x');
    t.input.write('maybe\n');
    t.input.write('l\n');
    // Assert
    await expect(answer).resolves.toBe('leave');
    expect(t.said()).toMatch(
      new RegExp(
        /stop execution arn:x \(its cells are torn down\) or leave it running\? \[S\]top \//.source +
          / \[l\]eave: "maybe": answer s \(stop\) or l \(leave\)\n/.source,
      ),
    );
  });

  it('stops without asking when stdin is not a terminal, and says that this default was taken', async () => {
    // Arrange
    const t = io(false);
    // Act
    const answer = await askOnInterrupt(t, 'arn:x');
    // Assert
    expect(answer).toBe('stop');
    expect(t.said()).toMatch(
      new RegExp(
        /stdin is not a terminal, so nobody can be asked: stopping the execution \(the default/.source +
          / without a terminal\) arn:x/.source,
      ),
    );
  });
});
