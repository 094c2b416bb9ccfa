import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { planRun } from '../../core/plan/plan';
import { budgetRefusal } from '../helpers/budget';
import {
  BudgetExceededError,
  bundledPrices,
  checkBudget,
  costLines,
  estimatePlanCost,
  loadPrices,
  networkLimitGbps,
  variantHourly,
  regionPrices,
} from '../../core/plan/cost';
import { validateSpec } from '../../core/experiment/validate';

const repoRoot = resolve(__dirname, '../..');

function spec(over: Record<string, unknown> = {}) {
  return validateSpec({
    name: 'cost-test',
    engine: { version: '3.04.0' },
    variants: [
      { name: 'a', instanceClass: 'db.r6g.large', readers: 1, clients: { count: 1, instanceType: 'c6i.large' } },
    ],
    data: { tables: 1, tableSize: 1000 },
    workloads: [{ name: 'ro', test: 'oltp_read_only', threads: [1], durationS: 60 }],
    ...over,
  });
}

describe('AWS cost estimate and budget', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'aurora-bench-prices-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('prices DB instances for provisioning + run time, clients for the run, and I/O for the data written', () => {
    // Arrange: AWS plan: 1800 s provisioning + 1 s prepare + 60 s step + 30 s overhead = 1891 s
    const s = spec();
    const plan = planRun(s, { backend: 'aws' });
    const prices = loadPrices(repoRoot);
    // Act
    const cost = estimatePlanCost(plan, prices);
    // Assert
    const cell = cost.cells[0]!;
    expect(cell.hours).toBeCloseTo(1891 / 3600, 9);
    expect(cell.dbCost).toBeCloseTo((2 * 0.26 * 1891) / 3600, 9);
    expect(cell.clientCost).toBeCloseTo((0.085 * (91 + 120)) / 3600, 9);
    expect(cell.ioRequests).toBe(Math.ceil((1000 * 250) / 4096));
    expect(cost.total).toBeCloseTo(cell.dbCost! + cell.clientCost! + cell.ioCost + cell.storageCost, 12);
    expect(cost).toMatchObject({ currency: 'USD', region: 'us-east-1', missing: [] });
  });

  it('refuses a run whose estimate exceeds the budget, and one it cannot price', () => {
    // Arrange
    const prices = loadPrices(repoRoot);
    const cheap = spec({ budget: { maxUsd: 0.1 } });
    const unknown = spec({ variants: [{ name: 'a', instanceClass: 'db.x2g.large' }], budget: { maxUsd: 100 } });
    // Act / Assert
    expect(() => checkBudget(planRun(cheap, { backend: 'aws' }), cheap.budget, prices)).toThrow(BudgetExceededError);
    expect(() => checkBudget(planRun(cheap, { backend: 'aws' }), cheap.budget, prices)).toThrow(
      /estimated cost \$0\.\d\d exceeds budget.maxUsd \$0\.10/,
    );
    expect(() => checkBudget(planRun(unknown, { backend: 'aws' }), unknown.budget, prices)).toThrow(
      /no price for db\.x2g\.large/,
    );
    expect(checkBudget(planRun(cheap, { backend: 'aws' }), { maxUsd: 5 }, prices).total).toBeGreaterThan(0);
  });

  it('gives the budget verdict as a refused plan note from the bundled table', () => {
    // Arrange
    const s = spec({ budget: { maxUsd: 0.1 } });
    const plan = planRun(s, { backend: 'aws' });
    // Act / Assert
    expect(budgetRefusal(plan, s.budget)).toMatchObject({
      level: 'refused',
      path: 'budget.maxUsd',
      message: expect.stringMatching(/exceeds budget/),
    });
    expect(budgetRefusal(plan, { maxUsd: 100 })).toBeNull();
    expect(budgetRefusal(plan, undefined)).toBeNull();
    expect(bundledPrices()).toEqual(loadPrices(repoRoot));
  });

  it('merges a user price file over the repo table and validates it', () => {
    // Arrange
    const override = join(dir, 'prices.json');
    writeFileSync(override, JSON.stringify({ regions: { 'us-east-1': { dbInstanceHourly: { 'db.r6g.large': 1 } } } }));
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ regions: { 'us-east-1': { dbInstanceHourly: { 'db.r6g.large': -1 } } } }));
    // Act
    const merged = loadPrices(repoRoot, override);
    // Assert
    expect(merged.regions['us-east-1']!.dbInstanceHourly['db.r6g.large']).toBe(1);
    expect(merged.regions['us-east-1']!.dbInstanceHourly['db.r5.large']).toBe(0.29);
    expect(() => loadPrices(repoRoot, bad)).toThrow(
      /bad\.json .*regions\.us-east-1\.dbInstanceHourly\.db\.r6g\.large/s,
    );
    expect(() => loadPrices(repoRoot, join(dir, 'none.json'))).toThrow(/price file not found/);
  });

  it("keeps the original study's own prices: r6g/r5 2xlarge = 92.61% in cn-northwest-1", () => {
    // Arrange
    const table = loadPrices(repoRoot);
    // Act
    const cn = regionPrices(table, 'cn-northwest-1').prices;
    const ratio = variantHourly(cn, 'db.r6g.2xlarge', 0)! / variantHourly(cn, 'db.r5.2xlarge', 0)!;
    // Assert
    expect(cn.currency).toBe('CNY');
    expect(ratio).toBeCloseTo(0.9261, 4);
    expect(networkLimitGbps(table, 'db.r6i.2xlarge')).toBe(12.5);
    expect(regionPrices(table, 'eu-west-9').fallbackNote).toMatch(/no prices for eu-west-9/);
  });

  it('prints what a local plan would cost on AWS, with the budget verdict', () => {
    // Arrange
    const s = spec({ budget: { maxUsd: 0.2 } });
    const cost = estimatePlanCost(planRun(s, { backend: 'aws' }), loadPrices(repoRoot));
    // Act
    const lines = costLines(cost, s.budget, 'local');
    // Assert
    expect(lines[0]).toMatch(/^On AWS the same experiment would cost about \$0\.\d\d \(DB instances/);
    expect(lines.join('\n')).toMatch(/budget \$0\.20: EXCEEDED/);
  });
});
