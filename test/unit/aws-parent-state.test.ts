/**
 * The cells of one AWS run travel through the workflow's parent execution (a reference out of
 * PlanRun, a result back from each cell, both into FinishRun), and a state is at most 256 KiB (Step
 * Functions service quotas). A plan over that is refused on AWS before anything starts, a plan over
 * half of it is warned about; the local runner has no such limit.
 */
import { preparePlan, parentStateBytesAtLeast } from '../../core/plan/prepare';
import { PlanError } from '../../core/plan/plan';
import type { SpecInput } from '../../core/experiment/schema';
import { validateSpec } from '../../core/experiment/validate';
import { planRunTask, type TaskDeps } from '../../core/workflow/tasks';
import { InProcessBenchBackend } from '../../bench/in-process-backend';

const NOW = new Date('2026-11-23T01:00:00Z');

function spec(variants: number, repeats: number): SpecInput {
  return {
    name: 'many-cells',
    engine: { version: '3.04.0' },
    variants: Array.from({ length: variants }, (_, i) => ({ name: `variant-${String(i + 1).padStart(2, '0')}`, instanceClass: 'db.r6g.large', readers: 0 })),
    repeats,
    maxConcurrency: 1,
    data: { tables: 1, tableSize: 1000 },
    defaults: { durationS: 60 },
    workloads: [{ name: 'rw', test: 'oltp_read_write', threads: [1] }],
  };
}

describe('the parent execution state of an AWS run', () => {
  it('refuses 5,000 cells on AWS before anything starts, names the limit and a size that fits; plans them locally', () => {
    // Arrange
    const loaded = { spec: validateSpec(spec(50, 100)), scripts: {} };

    // Act
    const run = () => preparePlan(loaded, { backend: 'aws', now: NOW, source: 'many.json' });
    const shown = preparePlan(loaded, { backend: 'aws', now: NOW, refusals: 'show' });
    const local = preparePlan(loaded, { backend: 'local', now: NOW });

    // Assert
    expect(run).toThrow(PlanError);
    expect(run).toThrow(
      /many\.json: .*repeats: 5000 cells \(50 variant\(s\) x 100 repeat\(s\)\): .* at least \d+ KiB, over Step Functions' 256 KiB state limit: .* under about \d+ cells/s,
    );
    expect(shown.notes.filter((n) => n.level === 'refused').map((n) => n.path)).toEqual(['repeats']);
    expect(local.plan.cells).toHaveLength(5000);
    expect(local.notes.some((n) => /state limit/.test(n.message))).toBe(false);
  });

  it('warns above half the limit and says nothing well below it', () => {
    // Act
    const near = preparePlan({ spec: validateSpec(spec(50, 40)), scripts: {} }, { backend: 'aws', now: NOW });
    const small = preparePlan({ spec: validateSpec(spec(10, 10)), scripts: {} }, { backend: 'aws', now: NOW });

    // Assert
    const bytes = parentStateBytesAtLeast(near.plan);
    expect(bytes * 2).toBeGreaterThan(256 * 1024);
    expect(bytes).toBeLessThanOrEqual(256 * 1024);
    expect(near.notes.filter((n) => /state limit/.test(n.message)).map((n) => [n.level, n.path])).toEqual([['warning', 'repeats']]);
    expect(small.notes.some((n) => /state limit/.test(n.message))).toBe(false);
  });

  it('estimates no more than the real PlanRun output and collected results carry', async () => {
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
    const planned = await planRunTask(deps, { spec: spec(20, 20) });

    // Act
    const real = Buffer.byteLength(JSON.stringify({ ...planned, cellResults: planned.cells.map((c) => ({ cellId: c.cellId, status: 'succeeded' })) }));
    const estimate = parentStateBytesAtLeast(preparePlan({ spec: validateSpec(spec(20, 20)), scripts: {} }, { backend: 'aws', now: NOW }).plan);

    // Assert: a lower bound, and a close one.
    expect(estimate).toBeLessThanOrEqual(real);
    expect(estimate).toBeGreaterThan(real * 0.8);
  });
});
