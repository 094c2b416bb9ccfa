/**
 * What a run really cost: resource lifetimes merged across the teardown's passes (creation times
 * from ClusterCreateTime / InstanceCreateTime / LaunchTime, deletion when a pass finds the resource
 * gone), the ACUs and volume I/O CloudWatch measured, and the bill priced from them beside the
 * plan's estimate (core/plan/bill.ts). Prices from prices/aws-prices.json; the billing minimums are
 * the table's assumptions (RDS 10 minutes, EC2 1 minute: Aurora User Guide, "DB instance billing
 * for Aurora"; EC2 On-Demand pricing).
 */
import { resolve } from 'node:path';
import {
  actualCellCost,
  measureUsage,
  mergeLifetimes,
  runCostLines,
  type ObservedResource,
  type ResourceLifetime,
} from '../../core/plan/bill';
import { costLines, estimatePlanCost, loadPrices, regionPrices, unconfirmedPricesUsed } from '../../core/plan/cost';
import { planRun } from '../../core/plan/plan';
import { validateSpec } from '../../core/experiment/validate';
import { makeContext } from '../../core/report/sections';
import { analyzePrice, priceSection } from '../../core/report/studies/price';
import { runData, stepResult } from '../helpers/step-results';

const repoRoot = resolve(__dirname, '../..');
const table = loadPrices(repoRoot);
const usEast = regionPrices(table, 'us-east-1').prices;
const minimums = table.assumptions;
const engine = { kind: 'aurora-mysql', version: '3.08.0' } as const;

const t = (min: number): string => new Date(Date.UTC(2026, 10, 27, 12, 0, 0) + min * 60_000).toISOString();

describe('resource lifetimes across the teardown passes', () => {
  const cluster: ObservedResource = { kind: 'db-cluster', id: 'c1', type: null, createdAt: t(0), state: 'live' };
  const writer: ObservedResource = {
    kind: 'db-instance',
    id: 'c1-w',
    type: 'db.r6g.large',
    createdAt: t(1),
    state: 'live',
  };
  const client: ObservedResource = {
    kind: 'ec2-instance',
    id: 'i-1',
    type: 'c5.large',
    createdAt: t(5),
    state: 'live',
  };

  it('opens each resource at its API creation time and closes it at the pass that found it gone', () => {
    let l: ResourceLifetime[] = mergeLifetimes([], [cluster, writer, client], t(60), false);
    expect(l.every((r) => r.deletedAt === null)).toBe(true);
    expect(l.find((r) => r.id === 'c1-w')!.createdAt).toBe(t(1));
    // The client is terminating and the writer deleting after the first pass.
    l = mergeLifetimes(l, [cluster, { ...writer, state: 'deleting' }, { ...client, state: 'gone' }], t(61), false);
    expect(l.find((r) => r.id === 'i-1')!.deletedAt).toBe(t(61));
    expect(l.find((r) => r.id === 'c1-w')!.deletedAt).toBeNull();
    // The next pass no longer lists the writer: gone at that pass.
    l = mergeLifetimes(l, [{ ...cluster, state: 'deleting' }], t(70), false);
    expect(l.find((r) => r.id === 'c1-w')!.deletedAt).toBe(t(70));
    expect(l.find((r) => r.id === 'i-1')!.deletedAt).toBe(t(61));
    // The teardown completes: what is still open closes then.
    l = mergeLifetimes(l, [], t(75), true);
    expect(l.find((r) => r.id === 'c1')!.deletedAt).toBe(t(75));
  });

  it('keeps the first creation time and adds resources seen late', () => {
    const l = mergeLifetimes(
      mergeLifetimes([], [writer], t(60), false),
      [{ ...writer, createdAt: t(30) }, client],
      t(61),
      false,
    );
    expect(l.find((r) => r.id === 'c1-w')!.createdAt).toBe(t(1));
    expect(l.map((r) => r.id)).toEqual(['c1-w', 'i-1']);
  });
});

describe('what CloudWatch measured', () => {
  it('takes each step average ACUs (summed over instances) for its length, and each 5-minute I/O window once', () => {
    const steps = [
      { stepId: 's1', start: t(10), end: t(20) },
      { stepId: 's2', start: t(20), end: t(25) },
    ];
    const points = [
      { step_id: 's1', instance_id: 'w', metric: 'ServerlessDatabaseCapacity', ts: t(10), value: 2 },
      { step_id: 's1', instance_id: 'w', metric: 'ServerlessDatabaseCapacity', ts: t(11), value: 6 },
      { step_id: 's1', instance_id: 'r', metric: 'ServerlessDatabaseCapacity', ts: t(10), value: 1 },
      { step_id: 's2', instance_id: 'w', metric: 'ServerlessDatabaseCapacity', ts: t(20), value: 8 },
      // The window at t(20) is collected for both steps: once in the bill.
      { step_id: 's1', instance_id: 'c', metric: 'VolumeWriteIOPs', ts: t(20), value: 1000 },
      { step_id: 's2', instance_id: 'c', metric: 'VolumeWriteIOPs', ts: t(20), value: 1000 },
      { step_id: 's2', instance_id: 'c', metric: 'VolumeReadIOPs', ts: t(20), value: 500 },
    ];
    const m = measureUsage(steps, points);
    expect(m.acuSecondsInSteps).toBeCloseTo((4 + 1) * 600 + 8 * 300, 9);
    expect(m.measuredStepS).toBe(900);
    expect(m.ioRequests).toBe(1500);
  });

  it('says when nothing was measured', () => {
    expect(measureUsage([{ stepId: 's', start: t(0), end: t(1) }], [])).toEqual({
      acuSecondsInSteps: null,
      measuredStepS: 0,
      ioRequests: null,
    });
  });
});

describe('the bill from lifetimes', () => {
  const provisioned = { cellId: 'cell', variant: { instanceClass: 'db.r6g.large', readers: 1 } };
  const lifetimes: ResourceLifetime[] = [
    { kind: 'db-cluster', id: 'c', type: null, createdAt: t(0), deletedAt: t(120) },
    { kind: 'db-instance', id: 'c-w', type: 'db.r6g.large', createdAt: t(2), deletedAt: t(110) },
    // A reader that lived 5 minutes: billed the RDS minimum of 10.
    { kind: 'db-instance', id: 'c-r1', type: 'db.r6g.large', createdAt: t(10), deletedAt: t(15) },
    { kind: 'ec2-instance', id: 'i-1', type: 'c5.large', createdAt: t(20), deletedAt: t(80) },
    // A client that lived 20 seconds: billed the EC2 minimum of 60.
    {
      kind: 'ec2-instance',
      id: 'i-2',
      type: 'c5.large',
      createdAt: t(20),
      deletedAt: new Date(Date.parse(t(20)) + 20_000).toISOString(),
    },
  ];
  const measured = { acuSecondsInSteps: null, measuredStepS: 0, ioRequests: 2_000_000 };

  it('prices each DB instance for its own life, the volume for the cluster, the I/O measured and each client', () => {
    const c = actualCellCost(usEast, minimums, provisioned, engine, lifetimes, measured, 10, 1.5);
    const dbH = (108 * 60 + minimums.rdsMinimumBillingS) / 3600;
    expect(c.db.compute).toBeCloseTo(0.26 * dbH, 9);
    expect(c.db.storage).toBeCloseTo((10 * usEast.storageGbMonth! * 2) / 730, 9);
    expect(c.db.io).toBeCloseTo(2 * usEast.ioPerMillion!, 9);
    expect(c.ec2).toBeCloseTo((usEast.ec2Hourly['c5.large']! * (3600 + minimums.ec2MinimumBillingS)) / 3600, 9);
    expect(c.total).toBeCloseTo(c.db.total! + c.ec2!, 9);
    expect(c.estimate).toBe(1.5);
    expect(c.unknownLifetimes).toEqual([]);
  });

  it('prices Serverless v2 at the ACUs measured in steps and minAcu for the rest of each instance life', () => {
    const serverless = {
      cellId: 'cell',
      variant: {
        instanceClass: 'db.serverless',
        readers: 0,
        serverless: { minAcu: 1, maxAcu: 16, readerScaling: 'with-writer' as const },
      },
    };
    const life: ResourceLifetime[] = [
      { kind: 'db-instance', id: 'c-w', type: 'db.serverless', createdAt: t(0), deletedAt: t(60) },
    ];
    const c = actualCellCost(
      usEast,
      minimums,
      serverless,
      engine,
      life,
      { acuSecondsInSteps: 8 * 1200, measuredStepS: 1200, ioRequests: null },
      0,
      null,
    );
    expect(c.db.compute).toBeCloseTo(((8 * 1200 + 1 * 2400) / 3600) * usEast.acuHourly!, 9);
    expect(c.db.computeWhat).toMatch(/3\.33 ACU-hours measured/);
  });

  it('names what has no time and leaves it out', () => {
    const c = actualCellCost(
      usEast,
      minimums,
      provisioned,
      engine,
      [...lifetimes, { kind: 'ec2-instance', id: 'i-9', type: 'c5.large', createdAt: null, deletedAt: t(9) }],
      measured,
      10,
      null,
    );
    expect(c.unknownLifetimes).toEqual(['ec2-instance:i-9']);
  });

  it('closes the run output with the actual cost beside the estimate, and marks unconfirmed prices', () => {
    const r8g = { cellId: 'r8g', variant: { instanceClass: 'db.r8g.large', readers: 0 } };
    const c = actualCellCost(usEast, minimums, r8g, engine, lifetimes.slice(0, 2), measured, 10, 2);
    const lines = runCostLines([c]);
    expect(lines[0]).toMatch(
      /^What the run cost, from what really ran: \$[0-9.]+ .*the plan estimated \$2\.00 for the same 1 cell/,
    );
    const unconfirmed = unconfirmedPricesUsed(usEast, ['dbInstanceHourly.db.r8g.large']).length > 0;
    expect(lines[0]!.includes('unconfirmed price: dbInstanceHourly.db.r8g.large')).toBe(unconfirmed);
    expect(lines[1]).toMatch(/^ {2}r8g: \$/);
    expect(lines[0]).toMatch(/I\/O \$0\.40 for 2,000,000 requests measured/);
    const unmeasured = actualCellCost(
      usEast,
      minimums,
      r8g,
      engine,
      lifetimes.slice(0, 2),
      { ...measured, ioRequests: null },
      10,
      2,
    );
    expect(runCostLines([unmeasured])[0]).toMatch(/I\/O not measured \(no VolumeReadIOPs/);
  });
});

describe('unconfirmed prices', () => {
  it('matches keys by the table patterns, * any run of characters', () => {
    const prices = { ...usEast, unconfirmedPrices: ['dbInstanceHourly.db.r7g.*xlarge', 'acuHourlyIoOptimized'] };
    expect(
      unconfirmedPricesUsed(prices, [
        'dbInstanceHourly.db.r7g.16xlarge',
        'dbInstanceHourly.db.r7g.large',
        'acuHourlyIoOptimized',
        'acuHourly',
      ]),
    ).toEqual(['dbInstanceHourly.db.r7g.16xlarge', 'acuHourlyIoOptimized']);
  });

  it('the plan says "unconfirmed price" next to an estimate that uses one', () => {
    const spec = validateSpec(
      {
        name: 'u',
        engine: { kind: 'aurora-mysql', version: '3.08.0' },
        variants: [{ name: 'v', instanceClass: 'db.r6g.large', storage: 'io-optimized' }],
        data: { tables: 1, tableSize: 1000 },
        workloads: [{ name: 'ro', test: 'oltp_read_only', threads: [1] }],
      },
      'u.json',
    );
    const plan = planRun(spec, { backend: 'aws', runId: 'r', now: new Date(t(0)) });
    const flagged = {
      ...table,
      regions: { ...table.regions, 'us-east-1': { ...usEast, unconfirmedPrices: ['ioOptimizedInstanceMultiplier'] } },
    };
    expect(costLines(estimatePlanCost(plan, flagged), undefined, 'aws')[0]).toMatch(
      /unconfirmed price: ioOptimizedInstanceMultiplier/,
    );
    const none = { ...table, regions: { ...table.regions, 'us-east-1': { ...usEast, unconfirmedPrices: [] } } };
    expect(costLines(estimatePlanCost(plan, none), undefined, 'aws')[0]).not.toMatch(/unconfirmed/);
  });
});

describe('the report marks an unconfirmed price', () => {
  it('in the price-performance table, sentences and notes of r8g against r7g', () => {
    const spec = validateSpec(
      {
        name: 'g',
        engine: { kind: 'aurora-mysql', version: '3.10.4' },
        variants: [
          { name: 'r7g', instanceClass: 'db.r7g.2xlarge' },
          { name: 'r8g', instanceClass: 'db.r8g.2xlarge' },
        ],
        data: { tables: 1, tableSize: 1000 },
        workloads: [{ name: 'ro', test: 'oltp_read_only', threads: [1] }],
      },
      'g.json',
    );
    const data = runData(
      ['r7g', 'r8g'].map((variant) =>
        stepResult({ variant, step_id: 'ro-t1', workload: 'ro', test: 'oltp_read_only' }),
      ),
      spec,
    );
    const ctx = makeContext(data, table);
    const text = JSON.stringify(priceSection(analyzePrice(ctx)!, ctx));
    expect(text).toMatch(/1\.104 USD \(unconfirmed price\)/);
    expect(text).toMatch(
      /r8g \(aurora-mysql db\.r8g\.2xlarge\) costs [0-9.]+% of r7g .* per hour \(unconfirmed price\)/,
    );
    expect(text).toMatch(/Unconfirmed price: db\.r8g\.2xlarge/);
    expect(text).not.toMatch(/1\.106 USD \(unconfirmed/);
  });
});
