/**
 * The price table says when its figures were current (not when the file was written), plan and
 * report print that; the cost estimate sizes the data by each workload's rows (S4's ~1 KB rows).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { planRun } from '../../core/plan/plan';
import { costLines, declaredBytesPerRow, estimatePlanCost, loadPrices, pricesAsOfText } from '../../core/plan/cost';
import { makeContext } from '../../core/report/sections';
import { analyzePrice, priceSection } from '../../core/report/studies/price';
import { validateSpec } from '../../core/experiment/validate';
import { runData, stepResult } from '../helpers/step-results';

const repoRoot = resolve(__dirname, '../..');
const fullscan = readFileSync(join(repoRoot, 'client', 'workloads', 'fullscan_1kb.lua'), 'utf8');

function plan(workload: Record<string, unknown>, scripts: Record<string, string> = {}) {
  const spec = validateSpec(
    {
      name: 'rows',
      engine: { version: '3.04.0' },
      variants: [{ name: 'a', instanceClass: 'db.r6g.large', clients: { count: 1, instanceType: 'c6i.large' } }],
      data: { tables: 1, tableSize: 100000 },
      workloads: [{ threads: [1], durationS: 60, ...workload }],
    },
    'rows-spec',
  );
  return planRun(spec, { backend: 'aws', scripts });
}

describe('cost estimate: bytes per row from the workload', () => {
  it("sizes fullscan_1kb.lua's data by the 1040 bytes per row the script declares", () => {
    // Arrange
    const scan = plan({ name: 'scan', script: 'fullscan_1kb.lua' }, { 'fullscan_1kb.lua': fullscan });
    const prices = loadPrices(repoRoot);

    // Act
    const cost = estimatePlanCost(scan, prices);

    // Assert: a read-only scan: the only I/O is the prepare writing 100,000 rows of 1040 bytes.
    expect(declaredBytesPerRow(fullscan)).toBe(1040);
    expect(cost.cells[0]!.ioRequests).toBe(Math.ceil((100000 * 1040) / 4096));
    expect(cost.notes.some((n) => n.includes('fullscan_1kb.lua: 1040, as it declares'))).toBe(true);
  });

  it("keeps the table's 250 bytes per row for stock sysbench tables", () => {
    // Arrange
    const ro = plan({ name: 'ro', test: 'oltp_read_only' });

    // Act
    const cost = estimatePlanCost(ro, loadPrices(repoRoot));

    // Assert
    expect(cost.cells[0]!.ioRequests).toBe(Math.ceil((100000 * 250) / 4096));
    expect(cost.notes.some((n) => n.includes('as it declares'))).toBe(false);
  });
});

describe('price table date: when the figures were current', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'aurora-bench-asof-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("ships the figures' own date, apart from the day the table was put together", () => {
    // Act
    const prices = loadPrices(repoRoot);
    // Assert
    expect(prices.pricesAsOf).toBe('2025-2026');
    expect(prices.collectedOn).toBe('2026-11-21');
    expect(prices).not.toHaveProperty('pricesDate');
  });

  it("prints it in the plan's cost line and in the report's price section", () => {
    // Arrange
    const prices = loadPrices(repoRoot);
    const ro = plan({ name: 'ro', test: 'oltp_read_only' });
    // Two variants: a single-variant study has no price section (nothing to weigh its price against).
    const data = runData(
      ['a', 'b'].map((variant) => stepResult({ variant, step_id: 'ro-t1', workload: 'ro', test: 'oltp_read_only' })),
    );

    // Act
    const lines = costLines(estimatePlanCost(ro, prices), undefined, 'aws');
    const ctx = makeContext(data, prices);
    const section = priceSection(analyzePrice(ctx)!, ctx);

    // Assert
    expect(pricesAsOfText(prices)).toBe('as of 2025-2026 (collected 2026-11-21)');
    expect(lines[0]).toMatch(/us-east-1 on-demand prices as of 2025-2026 \(collected 2026-11-21\)\)$/);
    expect(JSON.stringify(section)).toContain(
      'us-east-1 on-demand list prices, collected 2026-11-21 (prices/aws-prices.json',
    );
  });

  it("takes a user table's date, and names pricesAsOf when it is empty", () => {
    // Arrange
    const dated = join(dir, 'dated.json');
    writeFileSync(dated, JSON.stringify({ pricesAsOf: '2026-03', collectedOn: '2026-03-15' }));
    const empty = join(dir, 'empty.json');
    writeFileSync(empty, JSON.stringify({ pricesAsOf: '' }));

    // Act
    const prices = loadPrices(repoRoot, dated);
    const load = () => loadPrices(repoRoot, empty);

    // Assert
    expect(pricesAsOfText(prices)).toBe('as of 2026-03 (collected 2026-03-15)');
    expect(load).toThrow(/pricesAsOf: when the figures were current/);
  });
});
