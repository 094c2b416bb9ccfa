import { orderCells, planRun, PlanError, estimate } from '../../core/plan/plan';
import { validateSpec } from '../../core/experiment/validate';
import type { SpecInput } from '../../core/experiment/schema';

const NOW = new Date('2026-11-21T10:20:30Z');

function spec(over: Partial<SpecInput> = {}) {
  return validateSpec({
    name: 'plan-test',
    engine: { version: '3.04.0' },
    variants: [
      { name: 'r5', instanceClass: 'db.r5.large', readers: 1 },
      { name: 'r6g', instanceClass: 'db.r6g.large', readers: 1 },
    ],
    data: { tables: 2, tableSize: 1000 },
    defaults: { durationS: 10, warmupS: 2 },
    workloads: [
      { name: 'ro', test: 'oltp_read_only', threads: [1, 8], target: 'reader' },
      { name: 'rw', test: 'oltp_read_write', threads: [4], rates: [0, 100] },
    ],
    repeats: 3,
    ...over,
  });
}

describe('plan', () => {
  it('interleaves variants across repeats, rotating who goes first', () => {
    expect(orderCells(2, 3, 'interleaved')).toEqual([
      { variantIndex: 0, repeat: 1 },
      { variantIndex: 1, repeat: 1 },
      { variantIndex: 1, repeat: 2 },
      { variantIndex: 0, repeat: 2 },
      { variantIndex: 0, repeat: 3 },
      { variantIndex: 1, repeat: 3 },
    ]);
    expect(orderCells(2, 2, 'sequential').map((c) => c.variantIndex)).toEqual([0, 0, 1, 1]);
  });

  it('expands cells and steps with stable ids', () => {
    // Act
    const plan = planRun(spec(), { backend: 'aws', now: NOW, runId: 'fixed' });
    // Assert
    expect(plan.runId).toBe('fixed');
    expect(plan.dt).toBe('2026-11-21');
    expect(plan.cells.map((c) => c.cellId)).toEqual(['r5-r1', 'r6g-r1', 'r6g-r2', 'r5-r2', 'r5-r3', 'r6g-r3']);
    const steps = plan.cells[0]!.steps;
    expect(steps.map((s) => s.stepId)).toEqual(['ro-t1', 'ro-t8', 'rw-t4', 'rw-t4-r100']);
    expect(steps.map((s) => s.index)).toEqual([0, 1, 2, 3]);
    expect(steps.map((s) => s.prepare)).toEqual([true, false, false, false]);
    expect(steps[0]).toMatchObject({
      durationS: 10,
      warmupS: 2,
      waitS: 13,
      target: 'reader',
      percentile: 95,
      clients: 1,
    });
    expect(steps[3]!.rate).toBe(100);
  });

  it('gives the same spec the same hash whatever the key order', () => {
    const a = planRun(spec(), { backend: 'aws', now: NOW });
    const b = planRun(validateSpec(JSON.parse(JSON.stringify({ ...spec() }))), { backend: 'aws', now: NOW });
    expect(a.specSha256).toBe(b.specSha256);
    expect(a.runId).not.toBe(b.runId);
    expect(a.runId).toMatch(/^plan-test-20261121-102030-[0-9a-f]{4}$/);
  });

  it('prepares before every step when data.reuse is step', () => {
    const plan = planRun(spec({ data: { tables: 1, tableSize: 10, reuse: 'step' } }), { backend: 'local', now: NOW });
    expect(plan.cells[0]!.steps.every((s) => s.prepare)).toBe(true);
  });

  it('warns that Aurora MySQL 2 is past the end of standard support, on both backends', () => {
    // Arrange
    const v2 = spec({ engine: { version: '5.7.mysql_aurora.2.12.5' } });
    // Act
    const notes = (['aws', 'local'] as const).map((backend) =>
      planRun(v2, { backend, now: NOW }).notes.filter((n) => n.path === 'engine.version'),
    );
    const v3 = planRun(spec(), { backend: 'aws', now: NOW }).notes.filter((n) => n.path === 'engine.version');
    // Assert
    for (const n of notes)
      expect(n).toEqual([
        {
          level: 'warning',
          path: 'engine.version',
          message: expect.stringMatching(
            /^Aurora MySQL 2 \(MySQL 5\.7 compatible\) is past the end of standard support \(2024-10-31\)/,
          ),
        },
      ]);
    expect(v3).toEqual([]);
  });

  it('merges parameter templates under variant parameters', () => {
    const s = spec({
      parameterTemplates: {
        tuned: {
          clusterParameters: { auto_increment_increment: 2, innodb_print_all_deadlocks: 1 },
          instanceParameters: {},
        },
      },
      variants: [
        {
          name: 'v',
          instanceClass: 'db.r5.large',
          readers: 1,
          parameterTemplate: 'tuned',
          clusterParameters: { auto_increment_increment: 1 },
        },
      ],
    });
    const plan = planRun(s, { backend: 'aws', now: NOW });
    expect(plan.cells[0]!.variant.clusterParameters).toEqual({
      auto_increment_increment: 1,
      innodb_print_all_deadlocks: 1,
    });
  });

  it('locally emulates write forwarding client-side, says so, and refuses what it cannot emulate', () => {
    const s = spec({
      variants: [
        {
          name: 'wf',
          instanceClass: 'db.r5.xlarge',
          readers: 1,
          writeForwarding: { enabled: true, consistency: 'SESSION' },
        },
      ],
      workloads: [
        { name: 'fwd', test: 'oltp_write_only', target: 'reader' },
        { name: 'ins', test: 'oltp_insert', target: 'reader' },
        { name: 'direct', test: 'oltp_write_only', target: 'writer' },
      ],
    });
    const local = planRun(s, { backend: 'local', now: NOW });
    expect(local.cells[0]!.steps.map((s) => [s.stepId, s.forwardedWrites])).toEqual([
      ['fwd-t1', { consistency: 'SESSION' }],
      ['direct-t1', undefined],
    ]);
    expect(local.cells[0]!.steps[0]!.prepare).toBe(true);
    expect(local.notes).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          level: 'warning',
          path: 'workloads[0]',
          message: expect.stringMatching(/client-side EMULATION of Aurora write forwarding/),
        }),
        expect.objectContaining({
          level: 'refused',
          path: 'workloads[1]',
          message: expect.stringMatching(/needs AWS.*emulation covers only/),
        }),
        expect.objectContaining({ level: 'warning', path: 'variants[0].writeForwarding' }),
      ]),
    );
    // The plan records the intent on every backend; Aurora forwards natively, so nothing is refused or said
    const aws = planRun(s, { backend: 'aws', now: NOW });
    expect(aws.cells[0]!.steps.map((s) => [s.stepId, s.forwardedWrites])).toEqual([
      ['fwd-t1', { consistency: 'SESSION' }],
      ['ins-t1', { consistency: 'SESSION' }],
      ['direct-t1', undefined],
    ]);
    expect(aws.notes).toEqual([]);
    // A backend that declares it cannot forward writes refuses every such step
    const none = planRun(s, { backend: 'local', writeForwarding: 'none', now: NOW });
    expect(none.cells[0]!.steps.map((s) => s.stepId)).toEqual(['direct-t1']);
    expect(none.notes.filter((n) => n.level === 'refused').map((n) => n.path)).toEqual([
      'workloads[0]',
      'workloads[1]',
    ]);
  });

  it('fails the plan when nothing is left to run locally', () => {
    const s = spec({
      variants: [{ name: 'wf', instanceClass: 'db.r5.xlarge', readers: 1, writeForwarding: { enabled: true } }],
      workloads: [{ name: 'fwd', test: 'oltp_insert', target: 'reader' }],
    });
    expect(() => planRun(s, { backend: 'local', now: NOW })).toThrow(PlanError);
    expect(() => planRun(s, { backend: 'local', now: NOW })).toThrow(/workloads\[0\]: .*needs AWS/);
  });

  it('estimates wall time with concurrency lanes', () => {
    const plan = planRun(spec({ repeats: 1 }), { backend: 'local', now: NOW });
    const serial = estimate(plan.cells, 'local', 1);
    const parallel = estimate(plan.cells, 'local', 2);
    // 4 steps x (2 warm-up + 10 run + 2 overhead) + one prepare of 2,000 rows (1 s) = 57 s per cell, +5 s provisioning.
    expect(serial.stepTimeS).toBe(2 * 57);
    expect(serial.wallTimeS).toBe(2 * 62);
    expect(parallel.wallTimeS).toBe(62);
  });

  it('refuses sysbench options sysbench would reject, by JSON path, before anything runs', () => {
    const s = spec({
      workloads: [
        { name: 'ok', test: 'oltp_read_write' },
        { name: 'typo', test: 'oltp_read_write', options: { rnage_size: 10 } },
        { name: 'reserved', test: 'oltp_read_only', options: { time: 5 } },
      ],
    });
    let error: unknown;
    try {
      planRun(s, { backend: 'aws', now: NOW });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(PlanError);
    expect((error as PlanError).notes.map((n) => n.path)).toEqual(['workloads[1].options', 'workloads[2].options']);
    expect((error as PlanError).notes[0]!.message).toMatch(/"rnage_size"/);
  });

  it('warns when all-readers has fewer clients than readers', () => {
    const s = spec({
      variants: [{ name: 'two-readers', instanceClass: 'db.r5.large', readers: 2, clients: { count: 1 } }],
      workloads: [{ name: 'ro', test: 'oltp_read_only', target: 'all-readers' }],
    });
    const plan = planRun(s, { backend: 'aws', now: NOW });
    expect(plan.notes).toEqual([
      expect.objectContaining({
        level: 'warning',
        path: 'workloads[0].clients',
        message: expect.stringMatching(/loads only 1 of the 2 readers/),
      }),
    ]);
  });
});
