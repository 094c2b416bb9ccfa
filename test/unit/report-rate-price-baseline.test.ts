/**
 * S5's price and rate sections compare the variants the same way round as S1's (each later variant
 * over the spec's first), the price table says its TPS is the sweep's capacity, and no latency row
 * averages repeats that were offered different rates or shows a percentile above the exact max.
 */
import { loadPrices } from '../../core/plan/cost';
import { buildReport } from '../../core/report/report';
import type { Report, ReportSection } from '../../core/report/model';
import { experiment, plantedRunData, recordedNoise } from '../helpers/planted-lakes';
import { resolve } from 'node:path';
import { withLake } from '../../core/lake/duckdb';
import { loadRun } from '../../core/report/load';

const prices = loadPrices(resolve(__dirname, '../..'));

function reportOf(study: string): Report {
  const data = plantedRunData(
    experiment(study),
    (cell) => ({ tps: cell.variant.name.startsWith('r6g') ? 1100 : 1000 }),
    {
      seed: 3,
      runId: `${study}-3`,
      noise: recordedNoise(),
    },
  );
  return buildReport(data, prices);
}

function section(report: Report, id: ReportSection['id']): ReportSection {
  const s = report.sections.find((x) => x.id === id);
  expect(s).toBeDefined();
  return s!;
}

const text = (s: ReportSection): string =>
  [...s.findings, ...(s.answer?.lines ?? []), ...s.tables.map((t) => t.title)].join('\n');

describe('S5 reads like S1', () => {
  it.each(['graviton-vs-intel', 'rate-sweep'])('%s: price puts r6g over r5, as the comparison does', (study) => {
    const report = reportOf(study);
    const price = text(section(report, 'price'));
    // Locally the same server: the pair is priced, not ranked ("r6g-a is priced at 89.5% of r5-a").
    expect(price).toMatch(/r6g-\w+ is priced at [\d.]+% of r5-\w+/);
    expect(price).not.toMatch(/r5-\w+ is priced at [\d.]+% of r6g/);
    const comparison = text(section(report, study === 'rate-sweep' ? 'rate' : 'ab'));
    expect(comparison).toMatch(/r6g-\w+\/r5-\w+/);
    expect(comparison).not.toMatch(/r5-\w+\/r6g-\w+/);
  });

  it('the price table of a rate sweep says its TPS is the capacity', () => {
    const titles = section(reportOf('rate-sweep'), 'price').tables.map((t) => t.title);
    expect(titles.join('\n')).toContain('capacity');
    expect(titles.join('\n')).not.toContain("mean over each workload's steps");
  });

  it('latency rows never average repeats offered different rates, nor exceed the max', async () => {
    const lake = resolve(__dirname, '../fixtures/lakes/local-small');
    const real = await withLake(lake, (l) => loadRun(l, 'rate-sweep-small-20261127-112604-f737'));
    // A p99.9 read off a bucket bound past the slowest transaction, as sysbench's histogram can give.
    const steps = real.steps.map((s, i) =>
      i === 0 && typeof s.lat_max_ms === 'number' ? { ...s, lat_p999_ms: s.lat_max_ms * 1.5 } : s,
    );
    const report = buildReport({ ...real, steps }, prices);
    const table = section(report, 'latency').tables[0]!;
    const numberOf = (c: string): number => Number(c.replace(/[≤,\s]/g, ''));
    const rated = table.rows.filter((r) => / at [\d,]+\/s/.test(r[1]!));
    expect(rated.length).toBeGreaterThan(0);
    for (const r of rated) expect(r[2]).toBe('1');
    for (const r of table.rows) {
      // An overloaded step stopped before sysbench printed its histogram: no max, no percentile but p99.
      if (r[1]!.endsWith('(overloaded)')) continue;
      const max = numberOf(r[8]!);
      for (const c of r.slice(3, 8)) if (c !== '-') expect(numberOf(c)).toBeLessThanOrEqual(max);
    }
    expect(table.rows.some((r) => r[7]!.startsWith('≤'))).toBe(true);
    expect(table.notes?.join(' ')).toContain('≤ max');
  });
});
