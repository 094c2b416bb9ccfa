/**
 * Price-performance of a local A/A run (every server the same MariaDB on this machine), on planted
 * runs (test/helpers/planted-lakes.ts): no per-USD winner is named, the ratio is read as the price
 * list (1 / price ratio) plus the A/A noise, the price basis is said once with one date, and the
 * instances each price counts are said.
 */
import { resolve } from 'node:path';
import { loadPrices } from '../../core/plan/cost';
import { buildReport, renderTerminal } from '../../core/report/report';
import type { Report } from '../../core/report/model';
import type { NoiseModel } from '../../bench/noise-model';
import { experiment, plantedRunData, type Truth } from '../helpers/planted-lakes';

const prices = loadPrices(resolve(__dirname, '../..'));

/** Little noise (0.5% a run), so what the report says follows from the planted truth. */
const quiet: NoiseModel = {
  runs: { sigma: 0.005, phi: 0, df: 100 },
  intervals: { sigma: 0.005, phi: 0, df: 100 },
  levels: {},
};

const report = (name: string, truth: Truth, runId: string): Report =>
  buildReport(plantedRunData(experiment(name), truth, { seed: 1, runId, scale: 'small', noise: quiet }), prices);

const priceLines = (r: Report): readonly string[] => r.sections.find((s) => s.id === 'price')?.findings ?? [];

describe('price-performance of a local A/A run', () => {
  it('names no per-USD winner and reads the ratio as 1 / the price ratio plus A/A noise (S1, two AZs)', () => {
    // Arrange: identical servers: equal TPS, so per USD r6g reads 1 / (1.038 / 1.16) = 111.8%.
    const r = report('graviton-vs-intel', () => ({ tps: 1000, latPctMs: 40 }), 'aa-price-s1');
    // Assert: the Answer's price line.
    const line = (r.answer?.lines ?? []).find((l) => l.startsWith('Price:')) ?? '';
    expect(line).toContain('no per-USD winner can show here');
    // Each region priced alike, the experiment's first, with figures the reader can recompute (1 / 89.48%),
    // in plain words (what equal throughput would give), and the region apart from the date.
    expect(line).toContain(
      "Equal throughput would give the variant 111.76% of its baseline's transactions per unit of money at " +
        "us-east-1 (the experiment's region; on-demand list prices, collected 2026-11-21: price ratio 89.48%) and ",
    );
    expect(line).toContain(
      "at cn-northwest-1 (the S1 study author's table of unit prices, which states no year, pricing model or unit: ",
    );
    expect(line).toMatch(/: price ratio 92\.\d\d%\); every interval includes that figure at either region’s prices\.$/);
    // The author's table states no year, pricing model or unit: the report gives none.
    expect(line).not.toMatch(/2021|Ningxia region, /);
    expect(line).not.toContain('reads 1');
    // The section's per-AZ lines: the price list, not a class "better" per dollar.
    const lines = priceLines(r);
    expect(lines).toHaveLength(2);
    for (const l of lines) {
      expect(l).toMatch(/^AZ [ab]: r6g-[ab] is priced at 89\.48% of r5-[ab] per hour; here they are the same server/);
      expect(l).toContain('equal throughput would give 111.76% transactions per USD (1 / 89.48%)');
      expect(l).toMatch(/; every interval includes 111\.76%\.$/);
      expect(l).not.toMatch(/\bbetter\b|costs/);
    }
  });

  it("gives the author's region its own price-performance columns, from the same performance interval", () => {
    // Act
    const r = report('graviton-vs-intel', () => ({ tps: 1000, latPctMs: 40 }), 'aa-cn');
    const t = r.answer!.tables.find((x) => x.title.startsWith('Performance ratio vs price ratio'))!;
    // Assert: us-east-1 and cn-northwest-1 side by side; each cell the performance interval over its price ratio.
    expect(t.head.slice(4)).toEqual([
      'price, us-east-1',
      'price-performance, us-east-1 (95% CI)',
      'price, cn-northwest-1',
      'price-performance, cn-northwest-1 (95% CI)',
    ]);
    const num = (x: string): number[] => [...x.matchAll(/([\d.]+)%/g)].map((m) => Number(m[1]));
    for (const row of t.rows) {
      expect(row[6]).toBe('92.61%');
      const [perf, low, high] = num(row[3]!);
      const [there, thereLow, thereHigh] = num(row[7]!);
      const cn = 8.872 / 9.58;
      expect(there).toBeCloseTo(perf! / cn, 0);
      expect(thereLow).toBeCloseTo(low! / cn, 0);
      expect(thereHigh).toBeCloseTo(high! / cn, 0);
    }
    // The chart's axis is logarithmic, and its red bars are the experiment region's prices: both said.
    expect(r.answer!.charts[0]!.title).toContain('(log scale); red bar: the price ratio at us-east-1');
  });

  it('says the price basis once with one date and how many instances each price counts', () => {
    // Act
    const text = renderTerminal(report('graviton-vs-intel', () => ({ tps: 1000, latPctMs: 40 }), 'aa-basis'));
    // Assert
    expect(text.match(/collected 2026-11-21/g)).toHaveLength(2); // the Answer's line and the table's note
    expect(text).not.toContain('as of 2025-2026');
    expect(text).toContain('1 DB instance each (the writer, no readers)');
    expect(text).toContain('TPS × 3600 s/h ÷ USD/hour');
    expect(text).toContain("Transactions per USD (TPS: each workload's one step)");
    expect(text).toMatch(/│ priced as +│/);
  });

  it('names no "most transactions per USD" winner between identical servers in one AZ', () => {
    // Arrange: nightly-regression: r6g-large and r7g-large in one AZ, the same server locally.
    const r = report('nightly-regression', () => ({ tps: 1000, latPctMs: 40 }), 'aa-winner');
    // Assert
    const lines = priceLines(r);
    expect(lines.some((l) => l.startsWith('Most transactions per'))).toBe(false);
    const same = /here they are the same server, so equal throughput would give [\d.]+% transactions per USD/;
    expect(lines.some((l) => same.test(l))).toBe(true);
  });
});

describe('a per-USD lead in a local run of differently configured servers', () => {
  it('says in the bullet itself that the lead is the price list times local noise', () => {
    // Arrange: thread-sweep: servers that differ in configuration, all one engine on this machine.
    const r = report('thread-sweep', () => ({ tps: 1000, latPctMs: 40 }), 'local-lead');
    // Assert
    const lead = priceLines(r).find((l) => l.startsWith('Most transactions per')) ?? '';
    expect(lead).not.toBe('');
    expect(lead).toContain('locally every server is the same engine on this machine, so this lead is the price');
  });
});
