/**
 * The trend chart of one step of a history.
 * TPS and latency share ONE y axis from 0, each as a percentage of its first stable segment's mean.
 * Two auto-scaled axes made a 594 -> 601 TPS wobble fill the chart like a crash.
 * Here a 1% wobble looks like 1% and a 30% drop like 30%.
 * Change points are vertical lines, coloured by what changed there.
 */
import type { EChartsOption, SeriesOption } from 'echarts';
import { num } from '../format';
import type { ChartBlock } from '../report/model';

export interface TrendLine {
  /** The metric's name. */
  readonly name: string;
  readonly unit: string;
  /** Time in ms since the epoch, and the value. Null values are gaps. */
  readonly points: readonly (readonly [number, number | null])[];
  /** Segment means between change points, in order. The first one is the line's 100%. */
  readonly segments: readonly { readonly from: number; readonly to: number; readonly mean: number }[];
}

export interface TrendMark {
  /** Time in ms since the epoch. */
  readonly at: number;
  readonly label: string;
  readonly kind: 'regressed' | 'improved' | 'changed';
}

const MARK_COLORS: Readonly<Record<TrendMark['kind'], string>> = {
  regressed: '#d62728',
  improved: '#2ca02c',
  changed: '#7f7f7f',
};
/** One colour per metric, from ECharts' first palette colours. Its segment means share it. */
const LINE_COLORS = ['#5470c6', '#fac858', '#91cc75', '#ee6666'];

/** A y-axis maximum in 25% steps that shows every point, at least 125%. */
function axisMax(values: readonly number[]): number {
  const top = values.reduce((m, v) => Math.max(m, v), 125);
  return Math.ceil(top / 25) * 25;
}

/** The trend chart's ECharts option. */
export function historyTrendChart(
  id: string,
  title: string,
  lines: readonly TrendLine[],
  marks: readonly TrendMark[],
): ChartBlock {
  const series: SeriesOption[] = [];
  const legend: string[] = [];
  const plotted: number[] = [];
  lines.forEach((l, i) => {
    const base = l.segments[0]?.mean;
    if (base === undefined || !(base > 0)) return;
    const color = LINE_COLORS[i % LINE_COLORS.length]!;
    const rel = (v: number): number => (v / base) * 100;
    const name = `${l.name} (100% = ${num(base, base >= 100 ? 0 : 2)}${l.unit ? ` ${l.unit}` : ''})`;
    const data = l.points.map(([x, y]) => [x, y === null ? null : rel(y)] as [number, number | null]);
    plotted.push(...data.map(([, y]) => y).filter((y): y is number => y !== null));
    legend.push(name);
    series.push({
      type: 'line',
      name,
      data,
      color,
      showSymbol: true,
      symbolSize: 5,
      connectNulls: false,
      ...(series.length === 0 && marks.length > 0
        ? {
            markLine: {
              silent: true,
              symbol: 'none',
              data: marks.map((m) => ({
                xAxis: m.at,
                label: { formatter: m.label, position: 'end', fontSize: 10 },
                lineStyle: { color: MARK_COLORS[m.kind], type: 'solid', width: 1.5 },
              })),
            },
          }
        : {}),
    });
    const segmentName = `${l.name} segment mean`;
    const segments: [number, number | null][] = [];
    for (const s of l.segments) segments.push([s.from, rel(s.mean)], [s.to, rel(s.mean)], [s.to, null]);
    legend.push(segmentName);
    series.push({
      type: 'line',
      name: segmentName,
      data: segments,
      color,
      showSymbol: false,
      connectNulls: false,
      lineStyle: { type: 'dashed', width: 1 },
    });
  });
  const option: EChartsOption = {
    animation: false,
    title: { text: title, left: 'center', textStyle: { fontSize: 14 } },
    legend: { bottom: 0, left: 'center', type: 'plain', itemGap: 20, width: '90%', data: legend },
    grid: { left: 70, right: 30, top: 60, bottom: 100, containLabel: false },
    tooltip: { trigger: 'axis' },
    xAxis: { type: 'time', name: 'run started', nameLocation: 'middle', nameGap: 28 },
    yAxis: {
      type: 'value',
      name: '% of its first segment mean',
      nameLocation: 'middle',
      nameGap: 50,
      min: 0,
      max: axisMax(plotted),
      interval: 25,
      axisLabel: { formatter: '{value}%' },
    },
    series,
  };
  return { id, title, option };
}
