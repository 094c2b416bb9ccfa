/**
 * A variant has one colour in every chart of a report, fixed from the spec's variant order, whatever
 * order a chart lists its series in.
 */
import { resolve } from 'node:path';
import { withLake } from '../../core/lake/duckdb';
import { loadPrices } from '../../core/plan/cost';
import { barChart, lineChart, variantStyles } from '../../core/report/charts';
import { loadRun } from '../../core/report/load';
import type { ChartBlock } from '../../core/report/model';
import { buildReport } from '../../core/report/report';

interface Series {
  name?: string;
  type?: string;
  itemStyle?: { color?: string };
}

function colours(chart: ChartBlock): Map<string, string | undefined> {
  const series = chart.option.series as Series[];
  return new Map(series.filter((s) => s.type !== 'custom').map((s) => [s.name ?? '', s.itemStyle?.color]));
}

describe('one colour per variant', () => {
  it('two charts listing the variants in different orders give each variant the same colour', () => {
    const styles = variantStyles(['r6g', 'r5', 'm7g']);
    const line = lineChart(
      'a',
      'a',
      'x',
      'y',
      [
        { name: 'm7g', points: [[1, 1]] },
        { name: 'r5', points: [[1, 2]] },
        { name: 'r6g', points: [[1, 3]] },
      ],
      { styles },
    );
    const bars = barChart(
      'b',
      'b',
      ['w'],
      [
        { name: 'r5', values: [1] },
        { name: 'r6g', values: [2] },
      ],
      'y',
      undefined,
      styles,
    );
    const l = colours(line);
    const b = colours(bars);
    expect(l.get('r6g')).toBe(styles.get('r6g')!.color);
    expect(b.get('r6g')).toBe(l.get('r6g'));
    expect(b.get('r5')).toBe(l.get('r5'));
    expect(new Set([l.get('r6g'), l.get('r5'), l.get('m7g')]).size).toBe(3);
  });

  const repoRoot = resolve(__dirname, '../..');
  const lake = resolve(repoRoot, 'test', 'fixtures', 'lakes', 'local-small');
  it.each([
    'graviton-vs-intel-small-20261127-112059-afed',
    'thread-sweep-small-20261127-114932-da85',
    'rate-sweep-small-20261127-112604-f737',
  ])('every chart of the report of %s draws a variant in one colour', async (runId) => {
    const data = await withLake(lake, (l) => loadRun(l, runId));
    const report = buildReport(data, loadPrices(repoRoot));
    const variants = new Set(data.steps.map((s) => s.variant));
    const charts = report.sections.flatMap((s) => [...s.charts, ...(s.answer?.charts ?? [])]);
    const seen = new Map<string, Set<string | undefined>>();
    for (const chart of charts)
      for (const [name, colour] of colours(chart))
        if (variants.has(name)) seen.set(name, new Set([...(seen.get(name) ?? []), colour]));
    expect(seen.size).toBeGreaterThan(0);
    for (const [name, cs] of seen) expect([name, [...cs]]).toEqual([name, [expect.any(String)]]);
    const distinct = new Set([...seen.values()].map((cs) => [...cs][0]));
    expect(distinct.size).toBe(seen.size);
  });
});
