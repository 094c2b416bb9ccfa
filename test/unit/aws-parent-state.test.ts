/**
 * The cells of one AWS run travel through the workflow's parent execution as the cell Map's items,
 * out of PlanRun and into FinishRun (the cells' results are discarded and read from the lake), and a
 * state is at most 256 KiB (Step Functions Developer Guide, "Step Functions service quotas":
 * "Maximum input or output size for a task, state, or execution"). The items are positions only:
 * the state does not grow with the variant names, and a child execution reads which cell its
 * position is from the lake (namedGroup).
 */
import { preparePlan, parentStateBytesAtLeast } from '../../core/plan/prepare';
import type { SpecInput } from '../../core/experiment/schema';
import { validateSpec } from '../../core/experiment/validate';
import { InvalidTaskInputError } from '../../core/workflow/errors';
import { namedGroup } from '../../core/workflow/tasks/group';
import { planRunTask } from '../../core/workflow/tasks/plan-run';
import type { TaskDeps } from '../../core/workflow/tasks/types';
import { InProcessBenchBackend } from '../../bench/in-process-backend';

const NOW = new Date('2026-11-23T01:00:00Z');
const STATE_LIMIT = 256 * 1024;

function spec(variants: number, repeats: number, nameLength = 10): SpecInput {
  return {
    name: 'many-cells',
    engine: { version: '3.04.0' },
    variants: Array.from({ length: variants }, (_, i) => ({
      name: `variant-${String(i + 1).padStart(2, '0')}`.padEnd(nameLength, 'x'),
      instanceClass: 'db.r6g.large',
      readers: 0,
    })),
    repeats,
    maxConcurrency: 1,
    data: { tables: 1, tableSize: 1000 },
    defaults: { durationS: 60 },
    workloads: [{ name: 'rw', test: 'oltp_read_write', threads: [1] }],
  };
}

function taskDeps(): TaskDeps {
  return {
    backend: new InProcessBenchBackend(),
    now: () => NOW,
    toolVersion: 't',
    gitSha: null,
    serverVersion: null,
    readyTimeoutS: 60,
    judgeRun: () => Promise.resolve([]),
  };
}

describe('the parent execution state of an AWS run', () => {
  it.each([10, 40])(
    'plans 5,000 cells with %i-character variant names on AWS without a note, under a tenth of the limit',
    (nameLength) => {
      // Arrange: 40 characters is the longest name a spec allows.
      const loaded = { spec: validateSpec(spec(50, 100, nameLength)), scripts: {} };

      // Act
      const prepared = preparePlan(loaded, { backend: 'aws', now: NOW, source: 'many.json' });

      // Assert: the positions 0..4999 and a comma each, whatever the names.
      expect(prepared.plan.cells).toHaveLength(5000);
      expect(parentStateBytesAtLeast(prepared.plan)).toBe(23_890);
      expect(parentStateBytesAtLeast(prepared.plan) * 10).toBeLessThanOrEqual(STATE_LIMIT);
      expect(prepared.notes.some((n) => /state limit/.test(n.message))).toBe(false);
    },
  );

  it.each([
    ['one item per cell', undefined],
    ['one item per duet', 'duet' as const],
  ])('estimates no more than the real PlanRun output carries: its items, byte for byte (%s)', async (_what, order) => {
    // Arrange: PlanRun itself, over an in-memory lake (the local kind: no refusal).
    const input = { ...spec(20, 20, 40), ...(order ? { order } : {}) };
    const planned = await planRunTask(taskDeps(), { spec: input });

    // Act: FinishRun's input is PlanRun's output (RunCells discards the cells' results).
    const real = Buffer.byteLength(JSON.stringify(planned));
    const estimate = parentStateBytesAtLeast(
      preparePlan({ spec: validateSpec(input), scripts: {} }, { backend: 'aws', now: NOW }).plan,
    );

    // Assert: a lower bound, and exactly the items PlanRun hands
    // the Map (less the array's brackets, plus a comma each).
    expect(planned.items).toEqual(Array.from({ length: order === 'duet' ? 20 : 400 }, (_, i) => i));
    expect(estimate).toBeLessThanOrEqual(real);
    expect(estimate).toBe(Buffer.byteLength(JSON.stringify(planned.items)) - 1);
  });

  it.each([
    ['cell', undefined],
    ['duet', 'duet' as const],
  ])('names the group of a %s at each Map position from what PlanRun wrote, in plan order', async (_what, order) => {
    // Arrange
    const deps = taskDeps();
    const input = { ...spec(3, 2, 40), ...(order ? { order } : {}) };
    const planned = await planRunTask(deps, { spec: input });
    const plan = preparePlan({ spec: validateSpec(input), scripts: {} }, { backend: 'aws', now: NOW }).plan;

    // Act
    const named = await Promise.all(planned.items.map((index) => namedGroup(deps, planned.run, { index })));

    // Assert: the plan's items, by position: a duet's members, or a cell as a group of one.
    const expected = plan.duets
      ? plan.duets.map((d, index) => ({ groupId: d.cellId, index, members: d.members.map((cellId) => ({ cellId })) }))
      : plan.cells.map((c, index) => ({ groupId: c.cellId, index, members: [{ cellId: c.cellId }] }));
    expect(named).toEqual(expected);
    // Three variants: a duet groups a round's three cells, any other order one.
    expect(named.every((g) => g.members.length === (order === 'duet' ? 3 : 1))).toBe(true);
  });

  it('returns a state already naming its group as it is; refuses a position PlanRun wrote nothing for', async () => {
    // Arrange
    const deps = taskDeps();
    const planned = await planRunTask(deps, { spec: spec(2, 1) });
    const header = { groupId: 'variant-01-r1', index: 0, members: [{ cellId: 'variant-01-r1' }] };

    // Act
    const asIs = await namedGroup(deps, planned.run, header);
    const missing = namedGroup(deps, planned.run, { index: 2 });
    const malformed = namedGroup(deps, planned.run, { index: -1 });

    // Assert
    expect(asIs).toBe(header);
    await expect(missing).rejects.toThrow(InvalidTaskInputError);
    await expect(missing).rejects.toThrow(
      /item 2 of run .* has no group at .*workflow\/.*\/items\/2\.json \(PlanRun writes one per item\)/,
    );
    await expect(malformed).rejects.toThrow(/event\.group names no group: it needs groupId, or index/);
  });
});
