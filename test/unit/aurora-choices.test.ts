/**
 * Aurora Serverless v2, Aurora I/O-Optimized and the current r classes: the spec refuses what the
 * engine version does not take (file, JSON path, fix), the plan's cost prices ACU-hours and the
 * storage configurations, the bill prices what ran, and the report answers provisioned vs
 * Serverless v2 and Standard vs I/O-Optimized. The AWS rules are cited in
 * core/aurora/aurora-configurations.ts; the prices in prices/aws-prices.json.
 */
import { resolve } from 'node:path';
import { ioOptimizedSupport, serverlessV2Support, zeroMinimumSupport } from '../../core/aurora/aurora-configurations';
import { SpecError, validateSpec, type SpecProblem } from '../../core/experiment/validate';
import type { SpecInput } from '../../core/experiment/schema';
import { billCell, storageBreakEven } from '../../core/plan/bill';
import { estimatePlanCost, loadPrices, regionPrices } from '../../core/plan/cost';
import { planRun } from '../../core/plan/plan';
import { localShape, serverlessStandIn } from '../../core/backends/local/instance-classes';
import { NO_AURORA_USAGE, scalingLagS, type AuroraUsage, type UsagePoint } from '../../core/report/aurora-usage';
import type { Context } from '../../core/report/context';
import type { ReportSection } from '../../core/report/model';
import { analyzeServerless, renderServerless } from '../../core/report/serverless-section';
import { analyzeStorage, renderStorage } from '../../core/report/storage-section';
import { analyzeBill, renderBill } from '../../core/report/bill-section';

/** The three Aurora-choices sections that apply, in the report's order. */
function auroraChoicesSections(ctx: Context, usage: AuroraUsage = NO_AURORA_USAGE): ReportSection[] {
  const serverless = analyzeServerless(ctx, usage);
  const storage = analyzeStorage(ctx, usage);
  const bill = analyzeBill(ctx, usage);
  return [
    serverless && renderServerless(serverless, ctx),
    storage && renderStorage(storage, ctx),
    bill && renderBill(bill, ctx),
  ].filter((s): s is ReportSection => s !== null);
}
import { makeContext } from '../../core/report/sections';
import { runData, stepResult } from '../helpers/step-results';

const repoRoot = resolve(__dirname, '../..');
const prices = loadPrices(repoRoot);
const usEast = regionPrices(prices, 'us-east-1').prices;

function spec(
  variants: SpecInput['variants'],
  version = '3.08.0',
  kind: 'aurora-mysql' | 'aurora-postgresql' | 'rds-mysql' = 'aurora-mysql',
): SpecInput {
  return {
    name: 'choices',
    engine: { kind, version },
    variants,
    data: { tables: 4, tableSize: 1_000_000 },
    workloads: [{ name: 'rw', test: 'oltp_read_write', threads: [16] }],
  };
}

function problemsOf(doc: unknown): SpecProblem[] {
  try {
    validateSpec(doc, 'exp.json');
  } catch (e) {
    expect(e).toBeInstanceOf(SpecError);
    expect((e as Error).message).toMatch(/^exp\.json: invalid experiment spec/);
    return [...(e as SpecError).problems];
  }
  throw new Error('expected the spec to be refused');
}

describe('engine versions with Aurora Serverless v2, auto-pause and I/O-Optimized', () => {
  it.each([
    ['aurora-mysql', '3.02.0', true],
    ['aurora-mysql', '3.01.1', false],
    ['aurora-mysql', '2.11.2', false],
    ['aurora-postgresql', '13.6', true],
    ['aurora-postgresql', '13.5', false],
    ['aurora-postgresql', '14.3', true],
    ['aurora-postgresql', '14.2', false],
    ['aurora-postgresql', '16.1', true],
    ['rds-mysql', '8.0.39', false],
  ] as const)('%s %s has db.serverless: %s', (kind, version, expected) => {
    expect(serverlessV2Support({ kind, version }).supported).toBe(expected);
  });

  it.each([
    ['aurora-mysql', '3.08.0', true],
    ['aurora-mysql', '3.07.1', false],
    ['aurora-postgresql', '16.3', true],
    ['aurora-postgresql', '16.2', false],
    ['aurora-postgresql', '15.7', true],
    ['aurora-postgresql', '14.11', false],
    ['aurora-postgresql', '13.15', true],
    ['aurora-postgresql', '17.1', true],
  ] as const)('%s %s takes a minimum of 0 ACUs: %s', (kind, version, expected) => {
    expect(zeroMinimumSupport({ kind, version }).supported).toBe(expected);
  });

  it.each([
    ['aurora-mysql', '3.03.1', true],
    ['aurora-mysql', '3.03.0', false],
    ['aurora-postgresql', '15.2', true],
    ['aurora-postgresql', '14.6', false],
    ['aurora-postgresql', '17.3', false],
    ['aurora-postgresql', '17.4', true],
    ['rds-mysql', '8.0.39', false],
  ] as const)('%s %s has I/O-Optimized: %s', (kind, version, expected) => {
    expect(ioOptimizedSupport({ kind, version }).supported).toBe(expected);
  });
});

describe('bad Serverless v2 and storage input', () => {
  it('takes db.serverless with a capacity range and a storage configuration on a version that has them', () => {
    const ok = validateSpec(
      spec([
        {
          name: 'sls',
          instanceClass: 'db.serverless',
          minAcu: 0,
          maxAcu: 256,
          storage: 'io-optimized',
          readers: 1,
          readerScaling: 'independent',
        },
      ]),
    );
    expect(ok.variants[0]).toMatchObject({
      minAcu: 0,
      maxAcu: 256,
      storage: 'io-optimized',
      readerScaling: 'independent',
    });
  });

  it.each([
    [{ maxAcu: 300 }, 'variants[0].maxAcu', /256/],
    [{ maxAcu: 16.25 }, 'variants[0].maxAcu', /multiple of 0\.5/],
    [{ minAcu: -1, maxAcu: 8 }, 'variants[0].minAcu', /0/],
    [{}, 'variants[0].maxAcu', /needs a capacity range: add "maxAcu"/],
    [{ minAcu: 16, maxAcu: 8 }, 'variants[0].minAcu', /above maxAcu 8/],
  ])('refuses capacity range %j at %s with the fix', (range, path, message) => {
    const problems = problemsOf(spec([{ name: 'sls', instanceClass: 'db.serverless', ...range }]));
    expect(problems).toContainEqual({ path, message: expect.stringMatching(message) });
  });

  it('refuses a minimum of 0 ACUs on a version without auto-pause, naming the version to raise', () => {
    const problems = problemsOf(
      spec([{ name: 'sls', instanceClass: 'db.serverless', minAcu: 0, maxAcu: 8 }], '3.06.0'),
    );
    expect(problems).toEqual([
      {
        path: 'variants[0].minAcu',
        message: expect.stringMatching(
          /needs Aurora MySQL 3\.08\.0 or higher, but the version is 3\.06\.0 \(engine\.version\): use minAcu 0\.5/,
        ),
      },
    ]);
  });

  it('refuses db.serverless on an Aurora version without Serverless v2 and on RDS for MySQL', () => {
    expect(
      problemsOf(spec([{ name: 'sls', instanceClass: 'db.serverless', maxAcu: 8 }], '13.4', 'aurora-postgresql')),
    ).toEqual([
      {
        path: 'variants[0].instanceClass',
        message: expect.stringMatching(
          new RegExp(
            /needs Aurora PostgreSQL 13\.6 .* but the version is 13\.4 \(engine\.version\): raise the/.source +
              / engine version, or choose a provisioned class/.source,
          ),
        ),
      },
    ]);
    expect(
      problemsOf(spec([{ name: 'sls', instanceClass: 'db.serverless', maxAcu: 8 }], '8.0.39', 'rds-mysql')),
    ).toContainEqual({
      path: 'variants[0].instanceClass',
      message: expect.stringMatching(/Aurora feature; RDS for MySQL does not have it.*choose a provisioned class/),
    });
  });

  it('refuses a capacity setting on a provisioned class', () => {
    expect(problemsOf(spec([{ name: 'p', instanceClass: 'db.r8g.large', maxAcu: 8 }]))).toEqual([
      {
        path: 'variants[0].maxAcu',
        message: expect.stringMatching(/remove maxAcu, or set instanceClass to "db\.serverless"/),
      },
    ]);
  });

  it('refuses a storage configuration on RDS for MySQL and I/O-Optimized on a version without it', () => {
    expect(
      problemsOf(spec([{ name: 'r', instanceClass: 'db.r6g.large', storage: 'standard' }], '8.0.39', 'rds-mysql')),
    ).toEqual([
      { path: 'variants[0].storage', message: expect.stringMatching(/RDS for MySQL does not have it.*remove storage/) },
    ]);
    expect(problemsOf(spec([{ name: 'a', instanceClass: 'db.r6g.large', storage: 'io-optimized' }], '3.02.0'))).toEqual(
      [
        {
          path: 'variants[0].storage',
          message: expect.stringMatching(
            /needs Aurora MySQL 3\.03\.1 or higher.*raise the engine version, or use "standard"/,
          ),
        },
      ],
    );
  });
});

describe('the plan and its cost', () => {
  it('plans db.serverless locally at the r class of its largest capacity, saying it does not scale', () => {
    const plan = planRun(validateSpec(spec([{ name: 'sls', instanceClass: 'db.serverless', minAcu: 1, maxAcu: 16 }])), {
      backend: 'local',
    });
    expect(plan.cells[0]!.variant.serverless).toEqual({ minAcu: 1, maxAcu: 16, readerScaling: 'with-writer' });
    expect(plan.notes.map((n) => n.message).join('\n')).toMatch(/no Aurora capacity scaling locally/);
    expect(serverlessStandIn(16)).toBe('db.r6g.xlarge');
    expect(localShape('db.serverless', { cpus: 8, memoryBytes: 32 * 2 ** 30 }, 16).memoryGiB).toBe(32);
  });

  it('prices Serverless v2 at ACU-hours and I/O-Optimized with its own instance and storage prices and no I/O', () => {
    // Arrange: the same cluster three ways.
    const s = validateSpec(
      spec([
        { name: 'std', instanceClass: 'db.r6g.large' },
        { name: 'iopt', instanceClass: 'db.r6g.large', storage: 'io-optimized' },
        { name: 'sls', instanceClass: 'db.serverless', minAcu: 1, maxAcu: 8 },
      ]),
    );
    // Act
    const cost = estimatePlanCost(planRun(s, { backend: 'aws' }), prices);
    // Assert
    const [std, iopt, sls] = ['std', 'iopt', 'sls'].map((v) => cost.cells.find((c) => c.cellId === `${v}-r1`)!);
    expect(iopt!.dbCost! / std!.dbCost!).toBeCloseTo(usEast.ioOptimizedInstanceMultiplier!, 9);
    expect(iopt!.storageCost / std!.storageCost).toBeCloseTo(
      usEast.storageGbMonthIoOptimized! / usEast.storageGbMonth!,
      9,
    );
    expect(std!.ioCost).toBeGreaterThan(0);
    expect(iopt!.ioCost).toBe(0);
    const hours = sls!.hours;
    // 30 minutes of set-up and teardown at minAcu, the rest at maxAcu.
    expect(sls!.dbCost).toBeCloseTo(usEast.acuHourly! * (8 * (hours - 0.5) + 1 * 0.5), 9);
    expect(cost.notes.join('\n')).toMatch(/maxAcu \(an upper bound\)/);
  });

  it('prices db.r8g as an unconfirmed price, and has no price for db.r7i (no sourced figure)', () => {
    const plan = (instanceClass: string) =>
      planRun(validateSpec(spec([{ name: 'v', instanceClass }])), { backend: 'aws' });
    const r8g = estimatePlanCost(plan('db.r8g.2xlarge'), prices);
    expect(r8g.missing).toEqual([]);
    expect(r8g.total).not.toBeNull();
    expect(r8g.unconfirmed).toContain('dbInstanceHourly.db.r8g.2xlarge');
    const r7i = estimatePlanCost(plan('db.r7i.2xlarge'), prices);
    expect(r7i.missing).toEqual(['db.r7i.2xlarge']);
    expect(r7i.total).toBeNull();
    // The I/O-Optimized figures are sourced (prices/aws-prices.json auroraConfigurationsSource).
    const io = estimatePlanCost(
      planRun(validateSpec(spec([{ name: 'v', instanceClass: 'db.r6g.large', storage: 'io-optimized' }])), {
        backend: 'aws',
      }),
      prices,
    );
    expect(io.unconfirmed).toEqual([]);
  });
});

describe('the bill and the storage break-even', () => {
  const engine = { kind: 'aurora-mysql', version: '3.08.0' } as const;

  it('bills Standard for the I/O really made and I/O-Optimized for none, each at its own prices', () => {
    const usage = { cellId: 'c', engine, instanceS: 7200, ioRequests: 50_000_000, dataGb: 100 };
    const std = billCell(usEast, { ...usage, variant: { instanceClass: 'db.r6g.large', readers: 1 } });
    const iopt = billCell(usEast, {
      ...usage,
      variant: { instanceClass: 'db.r6g.large', readers: 1, storage: 'io-optimized' },
    });
    expect(std.compute).toBeCloseTo(2 * 0.26 * 2, 9);
    expect(std.io).toBeCloseTo(50 * usEast.ioPerMillion!, 9);
    expect(std.storage).toBeCloseTo((100 * usEast.storageGbMonth! * 2) / 730, 9);
    expect(iopt.io).toBe(0);
    expect(iopt.compute).toBeCloseTo(std.compute! * 1.3, 9);
  });

  it('bills Serverless v2 for the ACU-hours measured', () => {
    const bill = billCell(usEast, {
      cellId: 'c',
      engine,
      instanceS: 3600,
      acuSeconds: 6 * 3600,
      dataGb: 0,
      variant: {
        instanceClass: 'db.serverless',
        readers: 0,
        serverless: { minAcu: 1, maxAcu: 16, readerScaling: 'with-writer' },
      },
    });
    expect(bill.compute).toBeCloseTo(6 * usEast.acuHourly!, 9);
    expect(bill.computeWhat).toMatch(/6\.00 ACU-hours measured/);
  });

  it('puts the break-even where both configurations cost the same', () => {
    const variant = { instanceClass: 'db.r6g.xlarge', readers: 0 };
    const be = storageBreakEven(usEast, engine, variant, { ioPerS: 0, dataGb: 50 })!;
    const at = storageBreakEven(usEast, engine, variant, { ioPerS: be.breakEvenIoPerS, dataGb: 50 })!;
    expect(at.standardHourly).toBeCloseTo(at.ioOptimizedHourly, 9);
    const above = storageBreakEven(usEast, engine, variant, { ioPerS: be.breakEvenIoPerS * 1.5, dataGb: 50 })!;
    expect(above.ioOptimizedHourly).toBeLessThan(above.standardHourly);
  });
});

describe('the report sections', () => {
  it(
    'measures the scaling lag from the step start to the first minute at 90% of the peak, and none when ' +
      'capacity did not rise',
    () => {
      const point = (minute: number, value: number): UsagePoint => ({
        cell_id: 'c',
        step_id: 's',
        instance_id: 'w',
        metric: 'ServerlessDatabaseCapacity',
        ts: new Date(Date.parse('2024-05-01T10:00:00Z') + minute * 60000).toISOString(),
        value,
      });
      expect(
        scalingLagS({ started_at: '2024-05-01T10:00:00.000Z' }, [
          point(0, 1),
          point(1, 4),
          point(2, 9.5),
          point(3, 10),
        ]),
      ).toBe(120);
      expect(scalingLagS({ started_at: '2024-05-01T10:00:00.000Z' }, [point(0, 8), point(1, 8)])).toBeNull();
    },
  );

  it(
    'answers provisioned vs Serverless v2 first with throughput, p99, scaling lag and cost per million ' +
      'transactions, and bills the run',
    () => {
      // Arrange: three repeats each; Serverless v2 at 90% of the
      // throughput, its capacity rising to 8 ACUs in two minutes.
      const s = validateSpec(
        spec(
          [
            { name: 'prov', instanceClass: 'db.r6g.xlarge' },
            { name: 'sls', instanceClass: 'db.serverless', minAcu: 1, maxAcu: 16 },
          ],
          '3.08.0',
        ),
      );
      s.workloads[0]!.threads = [16];
      const plan = planRun({ ...s, repeats: 3 }, { backend: 'aws', runId: 'unit-run' });
      const steps = plan.cells.map((cell, i) =>
        stepResult({
          variant: cell.variant.name,
          cell_id: cell.cellId,
          repeat: cell.repeat,
          step_id: cell.steps[0]!.stepId,
          workload: 'rw',
          threads: 16,
          instance_class: cell.variant.instanceClass,
          started_at: '2024-05-01T10:00:00.000Z',
          ended_at: '2024-05-01T10:05:00.000Z',
          tps: (cell.variant.name === 'sls' ? 900 : 1000) + (i % 3) * 10,
          lat_p95_ms: 20,
          lat_p99_ms: cell.variant.name === 'sls' ? 40 : 30,
        }),
      );
      const capacity: UsagePoint[] = plan.cells
        .filter((c) => c.variant.name === 'sls')
        .flatMap((c) =>
          [1, 4, 8, 8, 8].map((value, minute) => ({
            cell_id: c.cellId,
            step_id: c.steps[0]!.stepId,
            instance_id: `${c.cellId}-w`,
            metric: 'ServerlessDatabaseCapacity',
            ts: new Date(Date.parse('2024-05-01T10:00:00Z') + minute * 60000).toISOString(),
            value,
          })),
        );
      const data = { ...runData(steps, { ...s, repeats: 3 }), plan, auroraUsage: { capacity, volumeIo: [] } };
      // Act
      const sections = auroraChoicesSections(makeContext(data, prices), data.auroraUsage);
      // Assert
      const serverless = sections.find((x) => x.id === 'serverless')!;
      expect(serverless.answer!.lines[0]).toMatch(
        new RegExp(
          /sls \(Serverless v2 1-16 ACU\) vs prov \(db\.r6g\.xlarge\): throughput 9\d% \(95% CI/.source +
            / 9\d%–9\d%\), p99 133%.*scaling lag 120 ±0 s; cost per million transactions 0\.21 ±0\.00/.source +
            / vs 0\.14 ±0\.00 USD/.source,
        ),
      );
      const row = serverless.tables[0]!.rows.find((r) => r[1]!.startsWith('sls'))!;
      // Average capacity (1 + 4 + 8 + 8 + 8) / 5 = 5.8 ACUs: 5.8 x $0.12 / (~910 TPS x 3600
      // s) x 1e6 = $0.21 per million; db.r6g.xlarge $0.519 / (~1,010 x 3600) x 1e6 = $0.14.
      expect(row[6]).toBe('5.8 ±0.0');
      const bill = sections.find((x) => x.id === 'bill')!;
      expect(bill.findings[0]).toMatch(/cost \$\d+\.\d\d from what really ran .* against \$\d+\.\d\d estimated/);
      expect(bill.tables[0]!.rows.find((r) => r[0] === 'sls-r1')![1]).toMatch(/ACU-hours measured on 1 instance/);
    },
  );

  it('says which storage is cheaper from the measured I/O per transaction, with the break-even', () => {
    const s = validateSpec(spec([{ name: 'std', instanceClass: 'db.r6g.xlarge', storage: 'standard' }]));
    const plan = planRun(s, { backend: 'aws', runId: 'unit-run' });
    const cell = plan.cells[0]!;
    const steps = [
      stepResult({
        variant: 'std',
        cell_id: cell.cellId,
        step_id: cell.steps[0]!.stepId,
        started_at: '2024-05-01T10:00:00.000Z',
        ended_at: '2024-05-01T10:10:00.000Z',
        tps: 1000,
      }),
    ];
    // 600 s x 1,000 TPS = 600,000 transactions; 30 I/O per transaction.
    const io = (metric: string, minute: number, value: number): UsagePoint => ({
      cell_id: cell.cellId,
      step_id: cell.steps[0]!.stepId,
      instance_id: 'cluster',
      metric,
      ts: new Date(Date.parse('2024-05-01T10:00:00Z') + minute * 60000).toISOString(),
      value,
    });
    const volumeIo = [
      io('VolumeReadIOPs', 0, 3_000_000),
      io('VolumeWriteIOPs', 0, 6_000_000),
      io('VolumeReadIOPs', 5, 3_000_000),
      io('VolumeWriteIOPs', 5, 6_000_000),
    ];
    const data = { ...runData(steps, s), plan, auroraUsage: { capacity: [], volumeIo } };
    const storage = auroraChoicesSections(makeContext(data, prices), data.auroraUsage).find((x) => x.id === 'storage')!;
    // 30,000 I/O/s costs 30,000 x 3600 x $0.2/1e6 = $21.6/h: far above the break-even.
    expect(storage.answer!.lines[0]).toMatch(
      new RegExp(
        /30\.00 I\/O requests per transaction at 1,000 TPS → Standard \$2\d\.\d\d\/h, I\/O-Optimized/.source +
          / \$0\.\d\d\/h: I\/O-Optimized is cheaper; they break even at \d+ I\/O requests\/s/.source,
      ),
    );
  });
});
