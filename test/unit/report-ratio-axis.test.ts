/**
 * Ratio charts read on a log axis with round bounds around the estimates: an interval reaching far
 * past them is clipped at the edge and marked, never stretching the axis so far that the estimates
 * sit within a few pixels of 100%.
 */
import { resolve } from 'node:path';
import { withLake } from '../../core/lake/duckdb';
import { loadPrices } from '../../core/plan/cost';
import { lineChart, ratioChart, renderChartSvg } from '../../core/report/charts';
import { loadRun } from '../../core/report/load';
import { buildReport } from '../../core/report/report';
import type { ChartBlock } from '../../core/report/model';

interface Axis {
  type?: string;
  min?: number;
  max?: number;
}

function expectRatioAxis(axis: Axis, lowest: number, highest: number): void {
  expect(axis.type).toBe('log');
  expect(Number.isFinite(axis.min)).toBe(true);
  expect(Number.isFinite(axis.max)).toBe(true);
  expect(axis.min!).toBeGreaterThan(0);
  expect(axis.min!).toBeLessThanOrEqual(Math.min(lowest, 100));
  expect(axis.max!).toBeGreaterThanOrEqual(Math.max(highest, 100));
  // Around the data: at most a factor 4 past the estimates each way, then rounded.
  expect(axis.max! / axis.min!).toBeLessThan((Math.max(highest, 100) / Math.min(lowest, 100)) * 16 * 1.5);
}

const ROWS = [
  { label: 'a', estimate: 0.877, low: 0.02, high: 40.69 },
  { label: 'b', estimate: 1.247, low: 1.1, high: 1.4 },
  { label: 'c', estimate: 1.0, low: null, high: null },
];

describe('ratio charts', () => {
  it('a forest of ratios has a log axis with finite bounds around the estimates, and marks clipped intervals', () => {
    const chart = ratioChart('r', 'ratios', ROWS);
    expectRatioAxis(chart.option.xAxis as Axis, 87.7, 124.7);
    const text = JSON.stringify(chart.option);
    expect(text).toContain('interval clipped');
    expect(text).toContain('runs past the axis edge');
    expect(renderChartSvg(chart)).toContain('<svg');
  });

  it('narrow ratios get a narrow axis', () => {
    const chart = ratioChart('r', 'ratios', [{ label: 'a', estimate: 0.98, low: 0.95, high: 1.02 }]);
    const axis = chart.option.xAxis as Axis;
    expect(axis.min).toBe(90);
    expect(axis.max).toBe(110);
    expect(JSON.stringify(chart.option)).not.toContain('interval clipped');
  });

  it('a line chart of ratios has a log y axis with finite bounds, and clips its error bars', () => {
    const chart = lineChart(
      'l',
      'ratio by share',
      'share',
      'ratio %',
      [
        {
          name: 's',
          points: [
            [50, 90],
            [80, 130],
          ],
          intervals: [
            [50, 0, 5000],
            [80, 120, 140],
          ],
        },
      ],
      { ratioY: true },
    );
    expectRatioAxis(chart.option.yAxis as Axis, 90, 130);
    expect(JSON.stringify(chart.option)).toContain('interval clipped');
  });

  const repoRoot = resolve(__dirname, '../..');
  const lake = resolve(repoRoot, 'test', 'fixtures', 'lakes', 'local-small');
  it.each([
    ['graviton-vs-intel-small-20261127-112059-afed', 'price-performance', 'xAxis'],
    ['write-forwarding-small-20261127-113707-596c', 'fwd-ratio', 'yAxis'],
  ] as const)('the report of %s draws %s on a log ratio axis', async (runId, id, axisKey) => {
    const data = await withLake(lake, (l) => loadRun(l, runId));
    const report = buildReport(data, loadPrices(repoRoot));
    const charts: ChartBlock[] = [
      ...(report.answer?.charts ?? []),
      ...report.sections.flatMap((s) => [...s.charts, ...(s.answer?.charts ?? [])]),
    ];
    const chart = charts.find((c) => c.id === id);
    expect(chart).toBeDefined();
    const axis = chart!.option[axisKey] as Axis;
    expect(axis.type).toBe('log');
    expect(Number.isFinite(axis.min) && Number.isFinite(axis.max)).toBe(true);
  });
});
