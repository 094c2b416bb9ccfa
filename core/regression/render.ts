/** How `compare` and `history` look, as report models. The terminal tables and the HTML page are the report's own. */
import { historyTrendChart, type TrendLine, type TrendMark } from './trend-chart';
import { fixed, levelPercent, num, pct } from '../format';
import type { ChartBlock, Report, ReportSection, TableBlock } from '../report/model';
import type { ComparedMetric, Comparison } from './compare';
import type { History, HistoryChangePoint, LatestVerdict, MetricHistory, NearMiss } from './history';
import { VERDICT_TEXT, type Verdict } from './metrics';

const range = (low: number, high: number, fmt: (x: number) => string): string =>
  Number.isFinite(low) && Number.isFinite(high) ? ` (${fmt(low)}–${fmt(high)})` : '';
const pct1 = (x: number): string => pct(x, 1);

function comparedCell(m: ComparedMetric): string {
  if (m.metric === 'errors') {
    const d = m.difference;
    const head = d
      ? `${d.estimate >= 0 ? '+' : ''}${num(d.estimate, 3)}${range(d.low, d.high, (x) => num(x, 3))}`
      : m.a !== null && m.b !== null
        ? `${num(m.a, 3)} → ${num(m.b, 3)}`
        : '-';
    return `${head} ${VERDICT_TEXT[m.verdict]}`;
  }
  const r = m.ratio;
  const head = r ? `${pct(r.estimate, 1)}${range(r.low, r.high, pct1)}` : '-';
  return `${head} ${VERDICT_TEXT[m.verdict]}`;
}

const sourceText = (ms: readonly ComparedMetric[]): string => {
  const s = ms.find((m) => m.source !== 'none')?.source;
  return s === 'repeats' ? 'repeats' : s === 'intervals' ? 'interval batches' : '-';
};

/** 0.95 -> "95%", 0.999 -> "99.9%". */

const runLine = (r: Comparison['a']): string =>
  `${r.run_id} (${r.spec_name}, ${r.backend}, started ${r.started_at}, ${r.status})`;

export function comparisonReport(c: Comparison): Report {
  const metricsHead = c.steps[0]?.metrics.map((m) => (m.metric === 'errors' ? `${m.label} B−A` : `${m.label} B/A`)) ?? [
    'TPS B/A',
    'QPS B/A',
    'latency B/A',
    'errors/s B−A',
  ];
  const rows = c.steps.map((s) => [
    s.label,
    `${s.repeats.a}/${s.repeats.b}`,
    ...s.metrics.map(comparedCell),
    s.judged ? sourceText(s.metrics) : 'not judged',
  ]);
  const notes = c.steps.flatMap((s) => s.notes.map((n) => `${s.label}: ${n}`));
  const table: TableBlock = {
    title: `B/A per step (${levelPercent(c.level)} interval)`,
    head: ['step', 'repeats A/B', ...metricsHead, 'interval from'],
    rows,
    numeric: [1],
    notes: [
      ...notes,
      ...(c.onlyInA.length > 0 ? [`only in A (not compared): ${c.onlyInA.join(', ')}`] : []),
      ...(c.onlyInB.length > 0 ? [`only in B (not compared): ${c.onlyInB.join(', ')}`] : []),
    ],
  };
  const findings: string[] = [];
  for (const s of c.steps) {
    for (const m of s.metrics) {
      if (m.verdict !== 'regressed' && m.verdict !== 'improved') continue;
      findings.push(
        (m.verdict === 'regressed' ? 'REGRESSED' : 'improved') +
          `: ${s.label} ${m.label} ` +
          comparedCell(m).replace(/ (REGRESSED|improved)$/, '') +
          ` (B/A)`,
      );
    }
  }
  const judged = c.steps.flatMap((s) => (s.judged ? s.metrics : []));
  const within = judged.filter((m) => m.verdict === 'within-noise').length;
  const unknown = judged.filter((m) => m.verdict === 'unknown').length;
  const notJudged = c.steps.filter((s) => !s.judged).length;
  findings.push(
    `${c.regressions} regressed, ${c.improvements} improved, ${within} within the noise` +
      (unknown > 0 ? `, ${unknown} with the noise unknown` : '') +
      (notJudged > 0 ? `; ${notJudged} step${notJudged === 1 ? '' : 's'} not judged (failed or client-bound)` : '') +
      (c.steps.length === 0 ? '; the runs have no step in common' : ''),
  );
  if (c.judgedMetrics > 0) {
    const expected = c.expectedFalseCalls;
    findings.push(
      `${c.judgedMetrics} metric${c.judgedMetrics === 1 ? '' : 's'} judged at ${levelPercent(c.level)}: if ` +
        `nothing had changed, about ${num(expected, expected < 10 ? 1 : 0)} of them would still be called ` +
        `improved or regressed by chance (1 in ${num(1 / (1 - c.level), 0)} each)` +
        (c.regressions + c.improvements > 0 && c.regressions + c.improvements <= 2 * expected
          ? `; ${c.regressions + c.improvements} call${c.regressions + c.improvements === 1 ? ' is' : 's are'} ` +
            `no more than chance alone gives: confirm with another run or a higher --level`
          : ''),
    );
  }
  if (c.sameRun) findings.unshift(`WARNING: run ${c.a.run_id} is compared with itself: nothing can differ.`);
  // The whole distribution where both runs recorded one. The verdicts above judge the configured percentile.
  const withDistribution = c.steps.filter((s) => s.latency.a !== null && s.latency.b !== null);
  const distribution: TableBlock = {
    title: 'Latency distribution, A → B (ms; mean over repeats)',
    head: ['step', 'p50', 'p90', 'p95', 'p99', 'p99.9', 'max'],
    rows: withDistribution.map((s) => [
      s.label,
      ...s.latency.a!.map((a, i) => `${fixed(a)} → ${fixed(s.latency.b![i])}`),
    ]),
    numeric: [],
    notes:
      c.steps.length > withDistribution.length
        ? [
            'steps without a latency histogram in either run (failed, or recorded before percentiles were ' +
              'kept) are left out',
          ]
        : [],
  };
  const configuration: TableBlock = {
    title: 'Configuration differences (what the servers ran with, read at prepare)',
    head: ['variant', 'name', 'A', 'B'],
    rows: c.configDifferences.map((d) => [d.variant, d.name, d.a || '-', d.b || '-']),
    numeric: [],
  };
  const section: ReportSection = {
    id: 'compare',
    title: 'B compared with A',
    question: 'Did anything change from run A to run B beyond the noise?',
    findings,
    tables: [
      table,
      ...(withDistribution.length > 0 ? [distribution] : []),
      ...(c.configDifferences.length > 0 ? [configuration] : []),
    ],
    charts: [],
  };
  return {
    title: `aurora-bench compare: ${c.a.run_id} → ${c.b.run_id}`,
    meta: [
      ['A', runLine(c.a)],
      ['B', runLine(c.b)],
    ],
    notes: [...c.notes],
    sections: [section],
  };
}

// ---------------------------------------------------------------------------------------------
// history

const pValueText = (p: number, permutations: number): string =>
  p === 0 ? `p < ${num(1 / (permutations + 1), 3)}` : `p = ${num(p, 3)}`;

function changeText(cp: HistoryChangePoint): string {
  const c = cp.change;
  if (c.kind === 'ratio') return `${pct(c.estimate, 1)}${range(c.low, c.high, pct1)}`;
  return `${c.estimate >= 0 ? '+' : ''}${num(c.estimate, 3)}${range(c.low, c.high, (x) => num(x, 3))}`;
}

/** The change as a signed relative size for chart marks, or a signed difference. */
function signedChange(cp: HistoryChangePoint): string {
  const c = cp.change;
  if (c.kind === 'ratio') {
    const r = (c.estimate - 1) * 100;
    return `${r >= 0 ? '+' : '-'}${Math.abs(r).toFixed(1)}%`;
  }
  return `${c.estimate >= 0 ? '+' : '-'}${num(Math.abs(c.estimate), 3)}`;
}

const directionText = (d: HistoryChangePoint['direction']): string =>
  d === 'regressed' ? 'REGRESSED' : d === 'improved' ? 'improved' : 'changed (level within the noise)';

function latestCells(l: LatestVerdict, metric: MetricHistory['metric']): string[] {
  const b = l.baseline;
  return [
    l.value === null ? '-' : fixed(l.value),
    b ? `${fixed(b.mean)} ±${fixed(b.sd)} (${b.n} runs${l.sinceRunId ? `, before ${l.sinceRunId}` : ''})` : '-',
    l.ratio === null ? '-' : pct(l.ratio, 1),
    // An error rate cannot be negative, so the interval's low end is shown from 0.
    l.interval
      ? `${fixed(metric === 'errors' ? Math.max(0, l.interval.low) : l.interval.low)}–${fixed(l.interval.high)}`
      : '-',
    VERDICT_TEXT[l.verdict],
  ];
}

function historyTables(h: History): { latest: TableBlock; changes: TableBlock; series: TableBlock } {
  const current = h.steps.filter((s) => s.current);
  const latestRows: string[][] = [];
  const latestNotes: string[] = [];
  for (const s of current) {
    for (const m of s.metrics) {
      if (!m.latest) continue;
      latestRows.push([s.label, m.label, ...latestCells(m.latest, m.metric)]);
      if (m.latest.verdict === 'not-judged' || m.latest.verdict === 'unknown')
        latestNotes.push(`${s.label} ${m.label}: ${m.latest.reason}`);
    }
  }
  const level = levelPercent(h.options.predictionLevel);
  const changeRows: string[][] = [];
  for (const s of h.steps) {
    for (const m of s.metrics) {
      for (const cp of m.changePoints) {
        changeRows.push([
          s.label + (s.current ? '' : ' (earlier series)'),
          m.label,
          `${cp.runId} (${cp.startedAt.slice(0, 16).replace('T', ' ')})`,
          `${cp.before.runIds.length} runs, ${fixed(cp.before.mean)}`,
          `${cp.after.runIds.length} runs, ${fixed(cp.after.mean)}`,
          changeText(cp),
          pValueText(cp.pValue, cp.permutations),
          directionText(cp.direction),
        ]);
      }
    }
  }
  const seriesRows = h.steps.map((s) => {
    const judged = s.points.filter((p) => p.repeats > 0).length;
    const cps = s.metrics.reduce((acc, m) => acc + m.changePoints.length, 0);
    return [
      s.label,
      s.measurementHash,
      s.current ? 'yes' : 'no',
      `${s.points.length} (${judged} judged)`,
      `${s.points[0]!.runId} … ${s.points[s.points.length - 1]!.runId}`,
      String(cps),
    ];
  });
  return {
    latest: {
      title: `Latest run ${h.latestRunId ?? '-'} against the last stable segment (${level} prediction interval)`,
      head: [
        'step',
        'metric',
        'latest',
        'stable segment mean ±sd',
        'latest/segment',
        `${level} prediction interval`,
        'verdict',
      ],
      rows: latestRows,
      numeric: [2, 4],
      notes: latestNotes,
    },
    changes: {
      title:
        `Change points (E-Divisive means, permutation test ` +
        `at ${h.options.significance}, ${h.options.permutations} permutations)`,
      head: ['step', 'metric', 'first run after', 'before', 'after', 'after/before (95% CI)', 'p', 'direction'],
      rows: changeRows,
      notes: changeRows.length === 0 ? ['No change point in any series.'] : [],
    },
    series: {
      title: 'Series (one per step and measurement definition)',
      head: ['step', 'measurement', 'current', 'runs', 'first … last', 'change points'],
      rows: seriesRows,
      numeric: [5],
    },
  };
}

function verdictFindings(h: History): string[] {
  const out: string[] = [];
  const latest = h.steps
    .filter((s) => s.current)
    .flatMap((s) => s.metrics.filter((m) => m.latest !== null).map((m) => ({ s, m })));
  const byVerdict = (v: Verdict) => latest.filter(({ m }) => m.latest!.verdict === v);
  for (const { s, m } of byVerdict('regressed'))
    out.push(
      `REGRESSED in the latest run: ${s.label} ${m.label} ${fixed(m.latest!.value)} ` +
        `is ${pct(m.latest!.ratio, 1)} of the stable segment (${m.latest!.reason}).`,
    );
  for (const { s, m } of byVerdict('improved'))
    out.push(
      `improved in the latest run: ${s.label} ${m.label} ${fixed(m.latest!.value)} ` +
        `is ${pct(m.latest!.ratio, 1)} of the stable segment.`,
    );
  const within = byVerdict('within-noise').length;
  const regressed = byVerdict('regressed').length;
  const improved = byVerdict('improved').length;
  const unknown = byVerdict('unknown').length;
  const notJudged = byVerdict('not-judged').length;
  const metrics = (n: number): string => `${n} step metric${n === 1 ? '' : 's'}`;
  const unjudged = [
    ...(unknown > 0
      ? [
          `${metrics(unknown)} with the noise unknown (fewer than ${h.options.minStableRuns} earlier runs in a ` +
            `stable segment)`,
        ]
      : []),
    ...(notJudged > 0 ? [`${metrics(notJudged)} not judged (failed, client-bound or missing in the latest run)`] : []),
  ];
  if (within + regressed + improved === 0) {
    out.push(
      latest.length === 0
        ? 'Nothing could be judged: no series includes the latest run.'
        : `Nothing could be judged in the latest run yet: ${unjudged.join('; ')}. A verdict needs at ` +
            `least ${h.options.minStableRuns} earlier runs of the same measurement.`,
    );
    return out;
  }
  out.push(
    (regressed === 0
      ? `No regression in the latest run (${metrics(within)} within the noise`
      : `${regressed} regression${regressed === 1 ? '' : 's'} in the latest run (${metrics(within)} within the noise`) +
      (unjudged.length > 0 ? `; not judged yet: ${unjudged.join('; ')}` : '') +
      ').',
  );
  return out;
}

const whyText = (n: NearMiss, h: History): string =>
  n.why === 'p-value'
    ? `not significant: ${pValueText(n.pValue, n.permutations)} > ${h.options.significance}`
    : `smaller than --magnitude ${pct(h.options.magnitude, 1)} (significant, ${pValueText(n.pValue, n.permutations)})`;

/** The near misses of every series. Null when there are none, which one line says instead. */
function nearMissTable(h: History): TableBlock | null {
  const rows: string[][] = [];
  for (const s of h.steps)
    for (const m of s.metrics)
      for (const n of m.nearMisses)
        rows.push([
          s.label + (s.current ? '' : ' (earlier series)'),
          m.label,
          `${n.runId} (${n.startedAt.slice(0, 16).replace('T', ' ')})`,
          Number.isFinite(n.relativeChange) ? pct(n.relativeChange, 1) : 'from 0',
          whyText(n, h),
        ]);
  if (rows.length === 0) return null;
  return {
    title:
      `Near misses (p above ${h.options.significance} up ` +
      `to ${h.options.nearMissUpTo}${h.options.magnitude > 0 ? ', or smaller than --magnitude' : ''})`,
    head: ['step', 'metric', 'first run after', '|after/before − 1|', 'why not a change point'],
    rows,
    notes: [
      'a p-value just above the threshold can fall below it with other permutations (--seed) or more of them ' +
        '(--permutations): watch these series',
    ],
  };
}

const nearMissNone = (h: History): string =>
  `No near miss: no split had a p-value above ${h.options.significance} up ` +
  `to ${h.options.nearMissUpTo}${h.options.magnitude > 0 ? ' or a change smaller than --magnitude' : ''}.`;

function trendCharts(h: History): ChartBlock[] {
  const charts: ChartBlock[] = [];
  h.steps.forEach((s, i) => {
    if (s.points.length < 2) return;
    const at = s.points.map((p) => Date.parse(p.startedAt));
    const lineOf = (m: MetricHistory, unit: string): TrendLine => {
      const from = m.searchedFrom === null ? 0 : s.points.findIndex((p) => p.runId === m.searchedFrom);
      const bounds = [
        from,
        ...m.changePoints.map((cp) => s.points.findIndex((p) => p.runId === cp.runId)),
        s.points.length,
      ];
      const segments = [];
      for (let k = 0; k + 1 < bounds.length; k++) {
        const vs = m.values.slice(bounds[k], bounds[k + 1]).filter((v): v is number => v !== null);
        if (vs.length > 0)
          segments.push({
            from: at[bounds[k]!]!,
            to: at[bounds[k + 1]! - 1]!,
            mean: vs.reduce((a, b) => a + b, 0) / vs.length,
          });
      }
      return { name: m.label, unit, points: m.values.map((v, k) => [at[k]!, v] as const), segments };
    };
    const tps = s.metrics.find((m) => m.metric === 'tps')!;
    const lat = s.metrics.find((m) => m.metric === 'latency')!;
    // One line per run where something changed, naming every metric that changed there.
    const byRun = new Map<number, { labels: string[]; kinds: Set<HistoryChangePoint['direction']> }>();
    for (const m of s.metrics) {
      for (const cp of m.changePoints) {
        const at = Date.parse(cp.startedAt);
        const mark = byRun.get(at) ?? { labels: [], kinds: new Set() };
        mark.labels.push(`${m.label} ${signedChange(cp)}`);
        mark.kinds.add(cp.direction);
        byRun.set(at, mark);
      }
    }
    const marks: TrendMark[] = [...byRun].map(([at, m]) => ({
      at,
      label: m.labels.join(', '),
      kind: m.kinds.has('regressed') ? 'regressed' : m.kinds.has('improved') ? 'improved' : 'changed',
    }));
    charts.push(
      historyTrendChart(
        `trend-${i}`,
        `${s.label}${s.current ? '' : ' (earlier series)'}`,
        [lineOf(tps, 'TPS'), lineOf(lat, 'ms')],
        marks,
      ),
    );
  });
  return charts;
}

export function historyReport(h: History, options: { charts?: boolean } = {}): Report {
  const t = historyTables(h);
  const nearMisses = nearMissTable(h);
  const first = h.runs[0];
  const last = h.runs[h.runs.length - 1];
  const backends = [...new Set(h.runs.map((r) => r.backend))].join(', ');
  const sections: ReportSection[] = [
    {
      id: 'latest',
      title: 'Latest run',
      question: 'Is the latest run beyond the noise of the last stable segment of each series?',
      findings: verdictFindings(h),
      tables: [t.latest],
      charts: [],
    },
    {
      id: 'change-points',
      title: 'Change points',
      question: 'Where did each series change, by how much, and between which runs?',
      findings: nearMisses === null ? [nearMissNone(h)] : [],
      tables: [t.changes, ...(nearMisses === null ? [] : [nearMisses]), t.series],
      charts: [],
    },
  ];
  if (options.charts)
    sections.push({
      id: 'trends',
      title: 'Trends',
      question:
        "Each step over time: TPS and latency as a percentage of their first segment's mean (the legend says " +
        'what 100% is), on one axis from 0; change points marked, segment means dashed.',
      findings: [],
      tables: [],
      charts: trendCharts(h),
    });
  return {
    title: `aurora-bench history: ${h.experiment}`,
    meta: [
      [
        'runs',
        `${h.runs.length} on ${backends || '-'}${first && last ? `, ${first.startedAt} … ${last.startedAt}` : ''}`,
      ],
      ['latest run', h.latestRunId ?? '-'],
      [
        'method',
        `E-Divisive means (${h.options.statistic}), ` +
          `significance ${h.options.significance}, ${h.options.permutations} permutations, seed ${h.options.seed}` +
          (h.options.magnitude > 0 ? `, change points of at least ${pct(h.options.magnitude, 1)} (--magnitude)` : '') +
          `; the latest run against the ${levelPercent(h.options.predictionLevel)} prediction interval of the ` +
          `last stable segment (at least ${h.options.minStableRuns} runs)`,
      ],
    ],
    notes: [...h.notices],
    sections,
  };
}

/** The step series of a history as plain JSON, as --json prints. */
export function historyJson(h: History): string {
  return JSON.stringify(h, (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? null : v), 2) + '\n';
}

export function comparisonJson(c: Comparison): string {
  return JSON.stringify(c, (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? null : v), 2) + '\n';
}
