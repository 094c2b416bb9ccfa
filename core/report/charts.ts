/**
 * Chart options (ECharts) for the report, and their server-side rendering to SVG: the HTML page
 * embeds the SVG text, so it needs no script and no network to show its charts.
 */
import * as echarts from 'echarts';
import type { EChartsOption, SeriesOption } from 'echarts';
import type { ChartBlock } from './model';

const CHART_WIDTH = 760;
const CHART_HEIGHT = 380;
const ERROR_COLOR = '#d62728';

export interface XYSeries {
  readonly name: string;
  readonly points: readonly (readonly [number, number | null])[];
  /** Points to mark as errors (connection errors, failed steps), drawn as red triangles. */
  readonly errorPoints?: readonly (readonly [number, number])[];
  readonly dashed?: boolean;
  /** More marked points of this series (e.g. overloaded rate steps), each kind with its own symbol. */
  readonly marks?: readonly { readonly label: string; readonly symbol: string; readonly color: string; readonly points: readonly (readonly [number, number])[] }[];
}

/** A horizontal reference line (a capacity, 100%). */
interface ReferenceLine {
  readonly value: number;
  readonly label: string;
  readonly color?: string;
}

export interface LineChartOptions {
  readonly logX?: boolean;
  readonly logY?: boolean;
  readonly logBase?: number;
  readonly hLines?: readonly ReferenceLine[];
}

/** Whether positive values span at least a decade (max >= 10 x min): then a log axis reads better. */
export function spansDecades(values: readonly (number | null | undefined)[]): boolean {
  const pos = values.filter((v): v is number => typeof v === 'number' && Number.isFinite(v) && v > 0);
  return pos.length >= 2 && Math.max(...pos) >= 10 * Math.min(...pos);
}

function baseOption(title: string): EChartsOption {
  return {
    animation: false,
    title: { text: title, left: 'center', textStyle: { fontSize: 14 } },
    legend: { bottom: 0, left: 'center', type: 'plain', itemGap: 28, width: '90%' },
    grid: { left: 70, right: 30, top: 45, bottom: 90, containLabel: false },
    tooltip: { trigger: 'axis' },
  };
}

export function lineChart(id: string, title: string, xName: string, yName: string, series: readonly XYSeries[], options: LineChartOptions = {}): ChartBlock {
  const out: SeriesOption[] = [];
  // A log axis cannot show 0 or negative values: those points are left out of it.
  const keepX = (x: number): boolean => !options.logX || x > 0;
  const keepY = (y: number | null): boolean => !options.logY || y === null || y > 0;
  series = series.map((s) => ({
    ...s,
    points: s.points.filter(([x, y]) => keepX(x) && keepY(y)),
    ...(s.errorPoints ? { errorPoints: s.errorPoints.filter(([x, y]) => keepX(x) && keepY(y)) } : {}),
    ...(s.marks ? { marks: s.marks.map((m) => ({ ...m, points: m.points.filter(([x, y]) => keepX(x) && keepY(y)) })) } : {}),
  }));
  for (const s of series) {
    out.push({
      type: 'line',
      name: s.name,
      data: s.points.map(([x, y]) => [x, y]),
      showSymbol: true,
      symbolSize: 6,
      connectNulls: false,
      ...(s.dashed ? { lineStyle: { type: 'dashed' }, showSymbol: false } : {}),
    });
    if (s.errorPoints && s.errorPoints.length > 0) {
      out.push({
        type: 'scatter',
        name: `${s.name}: errors`,
        data: s.errorPoints.map(([x, y]) => [x, y]),
        symbol: 'triangle',
        symbolSize: 12,
        itemStyle: { color: ERROR_COLOR },
      });
    }
    for (const m of s.marks ?? []) {
      if (m.points.length === 0) continue;
      out.push({ type: 'scatter', name: `${s.name}: ${m.label}`, data: m.points.map(([x, y]) => [x, y]), symbol: m.symbol, symbolSize: 13, itemStyle: { color: m.color } });
    }
  }
  if (options.hLines && options.hLines.length > 0) {
    out.push({
      type: 'line',
      name: 'reference',
      data: [],
      markLine: {
        silent: true,
        symbol: 'none',
        data: options.hLines.map((l) => ({
          yAxis: l.value,
          label: { formatter: l.label, position: 'insideEndTop', fontSize: 11 },
          lineStyle: { type: 'dashed', color: l.color ?? '#555' },
        })),
      },
    });
  }
  const base = baseOption(title);
  const markLabels = series.flatMap((s) => (s.marks ?? []).filter((m) => m.points.length > 0).map((m) => `${s.name}: ${m.label}`));
  return {
    id,
    title,
    option: {
      ...base,
      // Error markers are explained by the title; keeping them out of the legend keeps it one line.
      legend: { ...(base.legend as object), data: [...series.map((s) => s.name), ...markLabels] },
      xAxis: options.logX
        ? { type: 'log', logBase: options.logBase ?? 2, min: 'dataMin', max: 'dataMax', name: xName, nameLocation: 'middle', nameGap: 28 }
        : { type: 'value', name: xName, nameLocation: 'middle', nameGap: 28, scale: true },
      yAxis: options.logY ? { type: 'log', logBase: 10, name: yName, nameLocation: 'middle', nameGap: 55 } : { type: 'value', name: yName, nameLocation: 'middle', nameGap: 55 },
      series: out,
    },
  };
}

export function barChart(
  id: string,
  title: string,
  categories: readonly string[],
  series: readonly { name: string; values: readonly (number | null)[] }[],
  yName: string,
  /** Per-category reference values drawn as a dashed line with markers (e.g. each class's network limit). */
  limits?: { readonly name: string; readonly values: readonly (number | null)[] },
): ChartBlock {
  const bars: SeriesOption[] = series.map((s) => ({ type: 'bar', name: s.name, data: [...s.values] }));
  if (limits !== undefined && limits.values.some((v) => v !== null)) {
    bars.push({
      type: 'line',
      name: limits.name,
      data: [...limits.values],
      symbol: 'rect',
      symbolSize: 10,
      lineStyle: { type: 'dashed', color: ERROR_COLOR },
      itemStyle: { color: ERROR_COLOR },
    });
  }
  return {
    id,
    title,
    option: {
      ...baseOption(title),
      tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' } },
      xAxis: { type: 'category', data: [...categories], axisLabel: { interval: 0, rotate: categories.length > 4 ? 20 : 0 } },
      yAxis: { type: 'value', name: yName, nameLocation: 'middle', nameGap: 55 },
      series: bars,
    },
  };
}

/**
 * A forest plot of ratios: each row's estimate as a dot and its 95% interval as a horizontal
 * segment, with a reference line at 100%. A segment that crosses the line is within the noise.
 */
export function ratioChart(id: string, title: string, rows: readonly { label: string; estimate: number; low: number | null; high: number | null }[]): ChartBlock {
  const labels = rows.map((r) => r.label);
  const width = Math.max(CHART_WIDTH, Math.min(420, 24 + Math.max(...labels.map((l) => l.length)) * 6.5) + 520);
  const series: SeriesOption[] = [];
  rows.forEach((r) => {
    if (r.low === null || r.high === null || !Number.isFinite(r.low) || !Number.isFinite(r.high)) return;
    series.push({
      type: 'line',
      name: '95% CI',
      data: [
        [r.low * 100, r.label],
        [r.high * 100, r.label],
      ],
      showSymbol: false,
      lineStyle: { width: 3, color: '#7f7f7f' },
      tooltip: { show: false },
    });
  });
  series.push({
    type: 'scatter',
    name: 'ratio',
    data: rows.map((r) => [r.estimate * 100, r.label]),
    symbolSize: 10,
    itemStyle: { color: '#1f77b4' },
    markLine: { silent: true, symbol: 'none', lineStyle: { type: 'dashed', color: '#333' }, data: [{ xAxis: 100 }], label: { formatter: '100%', position: 'start' } },
  });
  const all = rows
    .flatMap((r) => [r.estimate, r.low, r.high])
    .filter((x): x is number => x !== null && Number.isFinite(x))
    .map((x) => x * 100);
  const lo = Math.min(100, ...all);
  const hi = Math.max(100, ...all);
  const pad = Math.max(2, (hi - lo) * 0.1);
  // Room for the longest row label (about 6.5 px per character at the default 12 px font).
  const labelWidth = Math.min(420, 24 + Math.max(...labels.map((l) => l.length)) * 6.5);
  return {
    id,
    title,
    width,
    height: Math.max(200, 70 + rows.length * 34),
    option: {
      ...baseOption(title),
      legend: { show: false },
      tooltip: { trigger: 'item' },
      grid: { left: labelWidth, right: 40, top: 55, bottom: 40 },
      xAxis: { type: 'value', min: Math.max(0, Math.floor((lo - pad) / 10) * 10), max: Math.ceil((hi + pad) / 10) * 10, axisLabel: { formatter: '{value}%', hideOverlap: true } },
      yAxis: { type: 'category', data: labels, inverse: true },
      series,
    },
  };
}

/** Server-side SVG of a chart (no DOM, no network). */
export function renderChartSvg(chart: ChartBlock): string {
  const width = chart.width ?? CHART_WIDTH;
  const height = chart.height ?? CHART_HEIGHT;
  const instance = echarts.init(null, null, { renderer: 'svg', ssr: true, width, height });
  try {
    instance.setOption(chart.option);
    return instance.renderToSVGString();
  } finally {
    instance.dispose();
  }
}

/** How many data points the chart's series hold (nulls excluded), for checks and alt text. */
export function chartPointCount(chart: ChartBlock): number {
  const series = (chart.option.series ?? []) as { data?: unknown[] }[];
  return (Array.isArray(series) ? series : [series]).reduce(
    (acc, s) => acc + (s.data ?? []).filter((d) => d !== null && !(Array.isArray(d) && d.some((v) => v === null))).length,
    0,
  );
}
