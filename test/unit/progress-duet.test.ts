/**
 * The progress lines of a duet (a group of two cells): the item names its member cells, a started
 * step says it started on all of them and how far apart, and each member's collected step gets its line.
 */
import type { ExecutionEvent } from '../../core/workflow/local-runner';
import { progressLine } from '../../core/workflow/progress';

const member = (variant: string) => ({
  cellId: `${variant}-r1`,
  index: variant === 'a' ? 0 : 1,
  repeat: 1,
  variant: { instanceClass: 'db.r6g.large', readers: 0 },
  data: { tables: 1, tableSize: 100 },
});
const duet = {
  groupId: 'r1-duet',
  index: 0,
  members: [member('a'), member('b')],
  stepCount: 2,
  segments: [{ from: 0, to: 2 }],
};
const step = {
  stepId: 'ro-t2',
  index: 1,
  test: 'oltp_read_only',
  target: 'writer',
  threads: 2,
  clients: 1,
  rate: 0,
  warmupS: 0,
  durationS: 10,
};
const outcome = (tps: number) => ({ stepId: 'ro-t1', index: 0, status: 'ok', error: null, tps, qps: tps * 16 });

describe('progressLine of a duet', () => {
  it('names the members, the start spread of a step and each member outcome', () => {
    // Arrange
    const events: ExecutionEvent[] = [
      {
        type: 'StateExited',
        timestamp: 1,
        state: {
          name: 'ProvisionCell',
          type: 'Task',
          input: { group: duet },
          output: { group: duet, resources: { notes: [] } },
        },
      },
      {
        type: 'StateExited',
        timestamp: 2,
        state: {
          name: 'RunStep',
          type: 'Task',
          input: { group: duet },
          output: {
            step: {
              done: false,
              waitS: 11,
              started: { phase: 'run', step },
              collected: [
                { cellId: 'a-r1', outcome: outcome(600) },
                { cellId: 'b-r1', outcome: outcome(550.5) },
              ],
              startSpreadMs: 12,
            },
          },
        },
      },
    ];
    // Act
    const lines = events.map((ev) => progressLine(ev, () => 2));
    // Assert
    expect(lines).toEqual([
      '[1/2 r1-duet] duet of a-r1 + b-r1: 2 step(s), each started on all 2 at once',
      [
        '[1/2 r1-duet] a-r1   ok: 600.0 tps, 9,600.0 qps',
        '[1/2 r1-duet] b-r1   ok: 550.5 tps, 8,808.0 qps',
        '[1/2 r1-duet] step 2/2 ro-t2: oltp_read_only on writer, 2 threads x 1 client(s), 10s, started on 2 ' +
          'variants within 12 ms',
      ].join('\n'),
    ]);
  });
});
