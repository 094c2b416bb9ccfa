/**
 * Chart options (ECharts) for the report, and their server-side rendering to SVG: the HTML page
 * embeds the SVG text, so it needs no script and no network to show its charts.
 */
import * as echarts from 'echarts';
import type { EChartsOption, SeriesOption } from 'echarts';
import type { ChartBlock } from './model';
import { CLIP_NOTE, clipRatio, ratioAxis, type RatioAxis } from './ratio-axis';

const CHART_WIDTH = 760;
const CHART_HEIGHT = 380;
const ERROR_COLOR = '#d62728';

/**
 * Colours and markers for series (colours: the Tableau 10 palette without its red, kept for errors),
 * so a variant reads the same in greyscale print too.
 */
const PALETTE = [
  '#1f77b4',
  '#ff7f0e',
  '#2ca02c',
  '#9467bd',
  '#8c564b',
  '#e377c2',
  '#7f7f7f',
  '#bcbd22',
  '#17becf',
] as const;
const SYMBOLS = ['circle', 'rect', 'triangle', 'diamond', 'pin', 'arrow', 'roundRect'] as const;

interface SeriesStyle {
  readonly color: string;
  readonly symbol: string;
}

/** Each variant's colour and marker, fixed once per report so a variant looks the same in every chart. */
export type VariantStyles = ReadonlyMap<string, SeriesStyle>;

function styleAt(i: number): SeriesStyle {
  return { color: PALETTE[i % PALETTE.length]!, symbol: SYMBOLS[i % SYMBOLS.length]! };
}

/** The styles of `names` in the order given (the spec's variant order). */
export function variantStyles(names: readonly string[]): VariantStyles {
  const out = new Map<string, SeriesStyle>();
  for (const n of names) if (!out.has(n)) out.set(n, styleAt(out.size));
  return out;
}

/**
 * The style of each of a chart's series: a variant's own; any other series (a workload, a thread
 * count) the next palette entry no variant of this chart uses.
 */
function chartStyles(names: readonly string[], styles: VariantStyles | undefined): SeriesStyle[] {
  const taken = new Set(names.flatMap((n) => (styles?.has(n) ? [styles.get(n)!.color] : [])));
  let next = 0;
  return names.map((n) => {
    const own = styles?.get(n);
    if (own !== undefined) return own;
    while (taken.has(styleAt(next).color) && next < PALETTE.length) next++;
    return styleAt(next++);
  });
}

export interface XYSeries {
  readonly name: string;
  readonly points: readonly (readonly [number, number | null])[];
  /** Points to mark as errors (connection errors, failed steps), drawn as red triangles. */
  readonly errorPoints?: readonly (readonly [number, number])[];
  readonly dashed?: boolean;
  /**
   * More marked points of this series (e.g. overloaded rate steps, the knee), each kind with its own
   * symbol, drawn in the series' colour unless one is given.
   */
  readonly marks?: readonly {
    readonly label: string;
    readonly symbol: string;
    readonly color?: string;
    readonly points: readonly (readonly [number, number])[];
  }[];
  /** Intervals drawn as error bars: [x, low, high] (a point's 95% interval, or its range over repeats). */
  readonly intervals?: readonly (readonly [number, number, number])[];
  /** Draw markers only, no line through them (points of several repeats at different x). */
  readonly scatter?: boolean;
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
  /** A linear x axis from 0 (offered rates: the ideal line starts at the origin). */
  readonly fromZero?: boolean;
  /** Where a linear x axis ends (points past it are the caller's to move to the edge and mark). */
  readonly xMax?: number;
  /** The y values are ratios in percent: a log axis with round bounds, intervals past them clipped and marked. */
  readonly ratioY?: boolean;
  /** The report's variant styles: a series named after a variant takes its style. */
  readonly styles?: VariantStyles;
  /** On a log x axis, ticks and labels at these values alone (the measured ones), not at every power. */
  readonly xTicks?: readonly number[];
}

/** Arrows at interval ends clipped at a ratio axis' edge, pointing the way the interval goes on. */
function clipArrows(
  name: string,
  color: string,
  ends: readonly { readonly at: readonly [number | string, number | string]; readonly rotate: number }[],
): SeriesOption {
  return {
    type: 'scatter',
    name,
    data: ends.map((e) => ({ value: [...e.at], symbolRotate: e.rotate })),
    symbol: 'arrow',
    symbolSize: 12,
    itemStyle: { color },
    silent: true,
  };
}

/**
 * Vertical error bars with caps, one per [x, low, high], as a custom series (ECharts draws it in
 * the server-side SVG like any other series).
 */
function errorBars(name: string, color: string, bars: readonly (readonly [number, number, number])[]): SeriesOption {
  return {
    type: 'custom',
    name,
    data: bars.map(([x, lo, hi]) => [x, lo, hi]),
    encode: { x: 0, y: [1, 2] },
    z: 1,
    silent: true,
    renderItem: (_params: unknown, api: { value: (i: number) => number; coord: (p: number[]) => number[] }) => {
      const x = api.value(0);
      const lo = api.coord([x, api.value(1)]);
      const hi = api.coord([x, api.value(2)]);
      const cap = 4;
      const style = { stroke: color, lineWidth: 1.5 };
      return {
        type: 'group',
        children: [
          { type: 'line', shape: { x1: lo[0], y1: lo[1], x2: hi[0], y2: hi[1] }, style },
          { type: 'line', shape: { x1: lo[0]! - cap, y1: lo[1], x2: lo[0]! + cap, y2: lo[1] }, style },
          { type: 'line', shape: { x1: hi[0]! - cap, y1: hi[1], x2: hi[0]! + cap, y2: hi[1] }, style },
        ],
      };
    },
  } as SeriesOption;
}

/** Whether positive values span at least a decade (max >= 10 x min): then a log axis reads better. */
export function spansDecades(values: readonly (number | null | undefined)[]): boolean {
  const pos = values.filter((v): v is number => typeof v === 'number' && Number.isFinite(v) && v > 0);
  return pos.length >= 2 && Math.max(...pos) >= 10 * Math.min(...pos);
}

/** How many rows a bottom legend of `entries` wraps to (up to 8 px a character, a 25-px icon and the 28-px gap). */
function legendRows(entries: readonly string[], width: number): number {
  let rows = 1;
  let used = 0;
  for (const e of entries) {
    const w = e.length * 8 + 25 + 28;
    if (used > 0 && used + w > width * 0.9) {
      rows += 1;
      used = 0;
    }
    used += w;
  }
  return rows;
}

/**
 * Room under the plot for the x axis labels and name (50 px) and a legend of `entries` at the
 * bottom: ECharts puts the legend's itemGap between wrapped rows too, so each row after the first
 * takes its 14-px line and the 28-px gap, plus the legend's 5-px padding above and below.
 */
function bottomFor(entries: readonly string[], width: number): number {
  const rows = legendRows(entries, width);
  return 50 + rows * 14 + (rows - 1) * 28 + 10 + 6;
}

/** A taller chart for a legend of several rows, so the plot keeps its height. */
function heightFor(entries: readonly string[], width: number): number {
  return CHART_HEIGHT + (legendRows(entries, width) - 1) * 42;
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

export function lineChart(
  id: string,
  title: string,
  xName: string,
  yName: string,
  series: readonly XYSeries[],
  options: LineChartOptions = {},
): ChartBlock {
  const out: SeriesOption[] = [];
  // A log axis cannot show 0 or negative values: those points are left out of it.
  const keepX = (x: number): boolean => !options.logX || x > 0;
  const logY = options.logY === true || options.ratioY === true;
  const keepY = (y: number | null): boolean => !logY || y === null || y > 0;
  series = series.map((s) => ({
    ...s,
    points: s.points.filter(([x, y]) => keepX(x) && keepY(y)),
    // A ratio axis clips an interval at its edge (and marks it) instead of dropping it.
    ...(s.intervals ? { intervals: s.intervals.filter(([x, lo]) => keepX(x) && (options.ratioY || keepY(lo))) } : {}),
    ...(s.errorPoints ? { errorPoints: s.errorPoints.filter(([x, y]) => keepX(x) && keepY(y)) } : {}),
    ...(s.marks
      ? { marks: s.marks.map((m) => ({ ...m, points: m.points.filter(([x, y]) => keepX(x) && keepY(y)) })) }
      : {}),
  }));
  const yAxisRatio: RatioAxis | null = options.ratioY
    ? ratioAxis(
        series.flatMap((s) => s.points.map(([, y]) => y).filter((y): y is number => y !== null)),
        series.flatMap((s) => (s.intervals ?? []).flatMap(([, lo, hi]) => [lo, hi])),
      )
    : null;
  let anyClipped = false;
  const solid = series.filter((s) => !s.dashed).map((s) => s.name);
  const solidList = chartStyles(solid, options.styles);
  const solidStyles = new Map(solid.map((n, i) => [n, solidList[i]!]));
  for (const s of series) {
    const style = s.dashed ? { color: '#555', symbol: 'none' } : solidStyles.get(s.name)!;
    out.push({
      type: s.scatter ? 'scatter' : 'line',
      name: s.name,
      data: s.points.map(([x, y]) => [x, y]),
      symbol: style.symbol,
      symbolSize: 8,
      itemStyle: { color: style.color },
      ...(s.scatter
        ? {}
        : {
            showSymbol: true,
            connectNulls: false,
            lineStyle: { color: style.color, ...(s.dashed ? { type: 'dashed' as const } : {}) },
          }),
      ...(s.dashed ? { showSymbol: false } : {}),
    });
    if (s.intervals && s.intervals.length > 0 && yAxisRatio !== null) {
      const clipped: { at: readonly [number, number]; rotate: number }[] = [];
      const bars = s.intervals.map(([x, lo, hi]) => {
        const l = clipRatio(yAxisRatio, lo);
        const h = clipRatio(yAxisRatio, hi);
        if (l.clipped) clipped.push({ at: [x, l.value], rotate: 180 });
        if (h.clipped) clipped.push({ at: [x, h.value], rotate: 0 });
        return [x, l.value, h.value] as const;
      });
      out.push(errorBars(`${s.name}: interval`, style.color, bars));
      if (clipped.length > 0) {
        anyClipped = true;
        out.push(clipArrows(`${s.name}: interval clipped`, style.color, clipped));
      }
    } else if (s.intervals && s.intervals.length > 0) {
      out.push(errorBars(`${s.name}: interval`, style.color, s.intervals));
    }
    if (s.errorPoints && s.errorPoints.length > 0) {
      out.push({
        type: 'scatter',
        name: `${s.name}: errors`,
        data: s.errorPoints.map(([x, y]) => [x, y]),
        symbol: 'triangle',
        symbolSize: 12,
        itemStyle: { color: ERROR_COLOR, borderColor: style.color, borderWidth: 2 },
      });
    }
    for (const m of s.marks ?? []) {
      if (m.points.length === 0) continue;
      out.push({
        type: 'scatter',
        name: `${s.name}: ${m.label}`,
        data: m.points.map(([x, y]) => [x, y]),
        symbol: m.symbol,
        symbolSize: 14,
        itemStyle: { color: m.color ?? 'transparent', borderColor: style.color, borderWidth: 2.5 },
      });
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
        // Alternate ends and sides of the line, so labels of close values do not sit on each other.
        data: options.hLines.map((l, i) => ({
          yAxis: l.value,
          label: {
            formatter: l.label,
            position: (['insideEndTop', 'insideStartBottom', 'insideStartTop', 'insideEndBottom'] as const)[i % 4],
            fontSize: 11,
          },
          lineStyle: { type: 'dashed', color: l.color ?? '#555' },
        })),
      },
    });
  }
  const base = baseOption(title);
  const markLabels = series.flatMap((s) =>
    (s.marks ?? []).filter((m) => m.points.length > 0).map((m) => `${s.name}: ${m.label}`),
  );
  const legend = [...series.map((s) => s.name), ...markLabels];
  return {
    id,
    title,
    height: heightFor(legend, CHART_WIDTH),
    option: {
      ...base,
      ...(anyClipped ? { title: { ...(base.title as object), subtext: CLIP_NOTE } } : {}),
      // Error markers are explained by the title; keeping them out of the legend keeps it one line.
      legend: { ...(base.legend as object), data: legend },
      grid: { ...(base.grid as object), bottom: bottomFor(legend, CHART_WIDTH), ...(anyClipped ? { top: 62 } : {}) },
      xAxis: options.logX
        ? {
            type: 'log',
            logBase: options.logBase ?? 2,
            name: xName,
            nameLocation: 'middle',
            nameGap: 28,
            axisLabel: { hideOverlap: true },
            ...(options.xTicks !== undefined && options.xTicks.length > 0
              ? {
                  min: Math.min(...options.xTicks),
                  max: Math.max(...options.xTicks),
                  axisTick: { customValues: [...options.xTicks] },
                  axisLabel: { hideOverlap: true, customValues: [...options.xTicks] },
                  splitLine: { show: false },
                }
              : {}),
          }
        : {
            type: 'value',
            name: xName,
            nameLocation: 'middle',
            nameGap: 28,
            scale: options.fromZero !== true,
            ...(options.xMax !== undefined ? { max: options.xMax } : {}),
            axisLabel: { hideOverlap: true },
          },
      yAxis: yAxisRatio
        ? {
            type: 'log',
            logBase: 10,
            min: yAxisRatio.min,
            max: yAxisRatio.max,
            name: yName,
            nameLocation: 'middle',
            nameGap: 55,
            axisLabel: { formatter: '{value}%', hideOverlap: true },
          }
        : options.logY
          ? {
              type: 'log',
              logBase: 10,
              name: yName,
              nameLocation: 'middle',
              nameGap: 55,
              axisLabel: { hideOverlap: true },
            }
          : { type: 'value', name: yName, nameLocation: 'middle', nameGap: 55, axisLabel: { hideOverlap: true } },
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
  styles?: VariantStyles,
): ChartBlock {
  const colors = chartStyles(
    series.map((s) => s.name),
    styles,
  );
  const bars: SeriesOption[] = series.map((s, i) => ({
    type: 'bar',
    name: s.name,
    data: [...s.values],
    itemStyle: { color: colors[i]!.color },
  }));
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
      grid: {
        left: 70,
        right: 30,
        top: 45,
        bottom:
          bottomFor([...series.map((s) => s.name), ...(limits !== undefined ? [limits.name] : [])], CHART_WIDTH) +
          (categories.length > 4 ? 30 : 0) +
          // A category of several lines (a workload and its ratio) pushes the legend down by a line each.
          14 * (Math.max(...categories.map((c) => c.split('\n').length)) - 1),
        containLabel: false,
      },
      tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' } },
      xAxis: {
        type: 'category',
        data: [...categories],
        axisLabel: { interval: 0, rotate: categories.length > 4 ? 20 : 0 },
      },
      yAxis: { type: 'value', name: yName, nameLocation: 'middle', nameGap: 55 },
      series: bars,
    },
  };
}

/** A row of a forest plot: an estimate and its interval (null bounds: no interval). */
export interface ForestRow {
  readonly label: string;
  readonly estimate: number;
  readonly low: number | null;
  readonly high: number | null;
  /** A second reference for this row alone (a price ratio), drawn as a short vertical bar. */
  readonly mark?: number;
}

/**
 * A forest plot of ratios: each row's estimate as a dot and its 95% interval as a horizontal
 * segment, with a reference line at 100%. A segment that crosses the line is within the noise.
 */
export function ratioChart(id: string, title: string, rows: readonly ForestRow[], markName?: string): ChartBlock {
  const scaled = rows.map((r) => ({
    label: r.label,
    estimate: r.estimate * 100,
    low: r.low === null ? null : r.low * 100,
    high: r.high === null ? null : r.high * 100,
    ...(r.mark !== undefined ? { mark: r.mark * 100 } : {}),
  }));
  return forestChart(id, title, scaled, {
    reference: { value: 100, label: '100%' },
    unit: '%',
    ratio: true,
    ...(markName !== undefined ? { markName } : {}),
  });
}

/**
 * A forest plot: one row per estimate, a dot with its interval as a horizontal segment, and an
 * optional vertical reference line. Used for ratios (reference 100%) and for values whose table
 * shows intervals (latency per consistency level).
 */
export function forestChart(
  id: string,
  title: string,
  rows: readonly ForestRow[],
  options: {
    readonly reference?: { readonly value: number; readonly label: string };
    readonly unit?: string;
    readonly axisName?: string;
    /** Percent ratios: a log axis with round bounds, intervals past them clipped and marked. */
    readonly ratio?: boolean;
    /** What the rows' marks are (e.g. "price ratio"). */
    readonly markName?: string;
  } = {},
): ChartBlock {
  const axis = options.ratio
    ? ratioAxis(
        rows.flatMap((r) => [r.estimate, ...(r.mark !== undefined ? [r.mark] : [])]),
        rows.flatMap((r) => [r.low ?? NaN, r.high ?? NaN]).filter((x) => !Number.isNaN(x)),
      )
    : null;
  const clippedEnds: { at: readonly [number, string]; rotate: number }[] = [];
  if (axis !== null)
    rows = rows.map((r) => {
      if (r.low === null || r.high === null) return r;
      const low = clipRatio(axis, r.low);
      const high = clipRatio(axis, r.high);
      // Arrows along the row: pointing left at a clipped low end, right at a clipped high end.
      if (low.clipped) clippedEnds.push({ at: [low.value, r.label], rotate: 90 });
      if (high.clipped) clippedEnds.push({ at: [high.value, r.label], rotate: -90 });
      return { ...r, low: low.value, high: high.value };
    });
  const labels = rows.map((r) => r.label);
  // Room for the longest row label (about 6.5 px per character at the default 12 px font).
  const labelWidth = Math.min(420, 24 + Math.max(...labels.map((l) => l.length)) * 6.5);
  const width = Math.max(CHART_WIDTH, labelWidth + 520);
  const series: SeriesOption[] = [];
  rows.forEach((r) => {
    if (r.low === null || r.high === null || !Number.isFinite(r.low) || !Number.isFinite(r.high)) return;
    series.push({
      type: 'line',
      name: '95% CI',
      data: [
        [r.low, r.label],
        [r.high, r.label],
      ],
      showSymbol: false,
      lineStyle: { width: 3, color: '#7f7f7f' },
      tooltip: { show: false },
    });
  });
  const marks = rows.filter((r) => r.mark !== undefined);
  if (marks.length > 0)
    series.push({
      type: 'scatter',
      name: options.markName ?? 'mark',
      data: marks.map((r) => [r.mark!, r.label]),
      symbol: 'rect',
      symbolSize: [3, 22],
      itemStyle: { color: '#d62728' },
    });
  const ref = options.reference;
  series.push({
    type: 'scatter',
    name: 'estimate',
    data: rows.map((r) => [r.estimate, r.label]),
    symbolSize: 10,
    itemStyle: { color: PALETTE[0] },
    ...(ref !== undefined
      ? {
          markLine: {
            silent: true,
            symbol: 'none',
            lineStyle: { type: 'dashed', color: '#333' },
            data: [{ xAxis: ref.value }],
            label: { formatter: ref.label, position: 'start' },
          },
        }
      : {}),
  });
  const all = rows
    .flatMap((r) => [r.estimate, r.low, r.high, r.mark ?? null])
    .filter((x): x is number => x !== null && Number.isFinite(x));
  const lo = Math.min(ref?.value ?? Infinity, ...all);
  const hi = Math.max(ref?.value ?? -Infinity, ...all);
  const step = niceStep((hi - lo) / 5);
  const unit = options.unit ?? '';
  if (clippedEnds.length > 0) series.push(clipArrows('interval clipped', '#7f7f7f', clippedEnds));
  const base = baseOption(title);
  return {
    id,
    title,
    width,
    height: Math.max(
      200,
      70 + rows.length * 34 + (options.axisName !== undefined ? 20 : 0) + (clippedEnds.length > 0 ? 20 : 0),
    ),
    option: {
      ...base,
      ...(clippedEnds.length > 0 ? { title: { ...(base.title as object), subtext: CLIP_NOTE } } : {}),
      legend: { show: false },
      tooltip: { trigger: 'item' },
      // The clip note under the title needs its own line above the reference line's label.
      grid: {
        left: labelWidth,
        right: 40,
        top: clippedEnds.length > 0 ? 75 : 55,
        bottom: options.axisName !== undefined ? 55 : 40,
      },
      xAxis: {
        ...(axis !== null
          ? { type: 'log' as const, logBase: 10, min: axis.min, max: axis.max }
          : {
              type: 'value' as const,
              min: Math.max(0, Math.floor(lo / step - 0.5) * step),
              max: Math.ceil(hi / step + 0.5) * step,
            }),
        axisLabel: { formatter: `{value}${unit}`, hideOverlap: true },
        ...(options.axisName !== undefined
          ? { name: options.axisName, nameLocation: 'middle' as const, nameGap: 28 }
          : {}),
      },
      yAxis: { type: 'category', data: labels, inverse: true },
      series,
    },
  };
}

/** A round step near `raw`: 1, 2 or 5 times a power of ten. */
function niceStep(raw: number): number {
  if (!(raw > 0) || !Number.isFinite(raw)) return 1;
  const p = 10 ** Math.floor(Math.log10(raw));
  const m = raw / p;
  return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
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
    (acc, s) =>
      acc + (s.data ?? []).filter((d) => d !== null && !(Array.isArray(d) && d.some((v) => v === null))).length,
    0,
  );
}
