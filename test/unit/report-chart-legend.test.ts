/**
 * A legend that wraps to several rows under a chart keeps clear of the x axis name: the rate-sweep
 * charts' legends (variants, their overloaded and knee marks, the ideal line) wrap to three rows.
 */
import { resolve } from 'node:path';
import { withLake } from '../../core/lake/duckdb';
import { loadPrices } from '../../core/plan/cost';
import { renderChartSvg } from '../../core/report/charts';
import { loadRun } from '../../core/report/load';
import { buildReport } from '../../core/report/report';

/** The y of each text of the SVG, by its content. */
function textYs(svg: string): { text: string; y: number }[] {
  return [...svg.matchAll(/<text[^>]*transform="translate\([\d.]+ ([\d.]+)\)"[^>]*>([^<]*)<\/text>/g)].map((m) => ({
    text: m[2]!,
    y: Number(m[1]),
  }));
}

describe('chart legends', () => {
  it('the wrapped legend of a rate-sweep chart sits below the x axis name', async () => {
    const repoRoot = resolve(__dirname, '../..');
    const lake = resolve(repoRoot, 'test', 'fixtures', 'lakes', 'local-small');
    const data = await withLake(lake, (l) => loadRun(l, 'rate-sweep-small-20261127-112604-f737'));
    const report = buildReport(data, loadPrices(repoRoot));
    const charts = report.sections.flatMap((s) => [...s.charts, ...(s.answer?.charts ?? [])]);
    const rateCharts = charts.filter((c) => c.id.startsWith('rate-'));
    expect(rateCharts.length).toBeGreaterThan(0);
    for (const chart of rateCharts) {
      const legend = (chart.option.legend as { data: string[] }).data;
      const texts = textYs(renderChartSvg(chart));
      const xName = (chart.option.xAxis as { name: string }).name;
      const name = texts.find((t) => t.text === xName);
      expect(name).toBeDefined();
      const legendTop = Math.min(...texts.filter((t) => legend.includes(t.text)).map((t) => t.y));
      // The name's 12-px line and the legend's first 14-px row, with room between.
      expect([chart.id, legendTop - name!.y]).toEqual([chart.id, expect.any(Number)]);
      expect(legendTop - name!.y).toBeGreaterThanOrEqual(20);
    }
  });
});
