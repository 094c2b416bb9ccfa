/**
 * The cells of one AWS run travel through the workflow's parent execution as the cell Map's items,
 * an id each, out of PlanRun and into FinishRun (the cells' results are discarded and read from the
 * lake), and a state is at most 256 KiB (Step Functions Developer Guide, "Step Functions service
 * quotas": "Maximum input or output size for a task, state, or execution"). A plan over that is
 * refused on AWS before anything starts, a plan over half of it is warned about.
 */
import { preparePlan, parentStateBytesAtLeast } from '../../core/plan/prepare';
import type { SpecInput } from '../../core/experiment/schema';
import { validateSpec } from '../../core/experiment/validate';
import { planRunTask, type TaskDeps } from '../../core/workflow/tasks';
import { InProcessBenchBackend } from '../../bench/in-process-backend';

const NOW = new Date('2026-11-23T01:00:00Z');

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

describe('the parent execution state of an AWS run', () => {
  it('plans 5,000 cells on AWS without a note: the cells travel as ids only, under half the limit', () => {
    // Arrange
    const loaded = { spec: validateSpec(spec(50, 100)), scripts: {} };

    // Act
    const prepared = preparePlan(loaded, { backend: 'aws', now: NOW, source: 'many.json' });

    // Assert
    expect(prepared.plan.cells).toHaveLength(5000);
    expect(parentStateBytesAtLeast(prepared.plan) * 2).toBeLessThanOrEqual(256 * 1024);
    expect(prepared.notes.some((n) => /state limit/.test(n.message))).toBe(false);
  });

  it('warns when the longest variant names put 5,000 cell ids above half the limit, and refuses nothing', () => {
    // Arrange: 40 characters, the longest name a spec allows.
    const long = spec(50, 100, 40);
    const loaded = { spec: validateSpec(long), scripts: {} };

    // Act
    const prepared = preparePlan(loaded, { backend: 'aws', now: NOW, source: 'long-names.json' });

    // Assert
    const bytes = parentStateBytesAtLeast(prepared.plan);
    expect(bytes * 2).toBeGreaterThan(256 * 1024);
    expect(bytes).toBeLessThanOrEqual(256 * 1024);
    expect(prepared.notes.filter((n) => /state limit/.test(n.message)).map((n) => [n.level, n.path])).toEqual([['warning', 'repeats']]);
    expect(prepared.notes.find((n) => /state limit/.test(n.message))?.message).toMatch(/5000 cells \(50 variant\(s\) x 100 repeat\(s\)\): .* at least \d+ KiB, more than half/);
  });

  it.each([
    ['one item per cell', undefined],
    ['one item per duet', 'duet' as const],
  ])('estimates no more than the real PlanRun output carries: its items, byte for byte (%s)', async (_what, order) => {
    // Arrange: PlanRun itself, over an in-memory lake (the local kind: no refusal).
    const deps: TaskDeps = {
      backend: new InProcessBenchBackend(),
      now: () => NOW,
      toolVersion: 't',
      gitSha: null,
      serverVersion: null,
      readyTimeoutS: 60,
      judgeRun: () => Promise.resolve([]),
    };
    const input = { ...spec(20, 20), ...(order ? { order } : {}) };
    const planned = await planRunTask(deps, { spec: input });

    // Act: FinishRun's input is PlanRun's output (RunCells discards the cells' results).
    const real = Buffer.byteLength(JSON.stringify(planned));
    const estimate = parentStateBytesAtLeast(preparePlan({ spec: validateSpec(input), scripts: {} }, { backend: 'aws', now: NOW }).plan);

    // Assert: a lower bound, and exactly the items PlanRun hands the Map (less the array's brackets, plus a comma each).
    expect(planned.cells).toHaveLength(order === 'duet' ? 20 : 400);
    expect(estimate).toBeLessThanOrEqual(real);
    expect(estimate).toBe(Buffer.byteLength(JSON.stringify(planned.cells)) - 1);
  });
});
