/**
 * The latency distribution of every step: p50, p90, p95, p99, p99.9 and max from the histogram
 * sysbench prints at the end of a run (core/sysbench/parser.ts, LatencySummary.percentiles), the
 * mean over the step's successful repeats; and p99 against the offered rate, one chart per workload,
 * where the rate section does not already draw it. An overloaded rate step (sysbench stopped it when its
 * event queue filled, before printing a histogram) keeps its row, marked, with the worst interval's p99.
 * Applies when some step recorded a histogram (runs before percentiles were kept did not).
 */
import type { StepResult } from '../lake/results';
import { lineChart, type XYSeries } from './charts';
import { fixed, num } from '../format';
import { whole } from './findings';
import type { ChartBlock, ReportSection } from './model';
import { mean } from './stats';
import { rateSweepKeys, stepLabel, sweepKeyOf, uniqueInOrder, type Context, type StepGroup } from './context';

const FIELDS = [
  'lat_p50_ms',
  'lat_p90_ms',
  'lat_p95_ms',
  'lat_p99_ms',
  'lat_p999_ms',
  'lat_max_ms',
] as const satisfies readonly (keyof StepResult)[];

/**
 * A repeat's percentile; the step's own percentile (lat_pct) as sysbench's summary prints it. The histogram
 * prints each bucket's bound to 3 decimals (97.555), sysbench's summary the same bound to 2 (97.55):
 * rounding the histogram's figure again would show 97.56 here beside 97.55 in the study's tables.
 */
function ownFigure(r: StepResult, field: (typeof FIELDS)[number]): number | null {
  const v = r[field];
  if (typeof v !== 'number' || !Number.isFinite(v)) return null;
  const own = r.lat_pct_ms;
  const same = field === `lat_p${r.lat_pct}_ms` && typeof own === 'number' && Math.abs(own - v) < 0.01;
  return same ? own : v;
}

/**
 * A repeat's percentile, capped at its exact max: a percentile is read off a histogram bucket's
 * bound, which can lie past the slowest transaction recorded (sysbench's log-scale buckets).
 */
function capped(r: StepResult, field: (typeof FIELDS)[number]): { value: number | null; capped: boolean } {
  const v = ownFigure(r, field);
  if (v === null) return { value: null, capped: false };
  const max = r.lat_max_ms;
  if (field !== 'lat_max_ms' && typeof max === 'number' && Number.isFinite(max) && v > max)
    return { value: max, capped: true };
  return { value: v, capped: false };
}

/** The mean of a field over the repeats that have it (each capped at its max); null when none has. */
function meanOf(rows: readonly StepResult[], field: (typeof FIELDS)[number]): number | null {
  const values = rows.map((r) => capped(r, field).value).filter((v): v is number => v !== null);
  return values.length > 0 ? mean(values) : null;
}

/** Below this many transactions a run, its p99 is a handful of transactions: the sentence says how few. */
const FEW_EVENTS = 2000;

/**
 * A short step's p99 rests on its slowest few transactions; say how many, so a tail is not read as a pattern.
 * A step's events are all its clients' together, its percentiles one client's histogram (the slowest
 * client's): with several clients, the count is a client's. Several tied steps: the range of their counts.
 */
function fewEvents(steps: readonly (readonly StepResult[])[]): string {
  const counts = steps.flatMap((rows) => {
    const events = rows.map((r) => r.events).filter((e): e is number => typeof e === 'number' && e > 0);
    const clients = Math.max(1, rows[0]?.clients ?? 1);
    return events.length > 0 ? [{ perRun: mean(events) / clients, clients }] : [];
  });
  if (counts.length === 0 || counts.length < steps.length || counts.some((c) => c.perRun >= FEW_EVENTS)) return '';
  const [lo, hi] = [Math.min(...counts.map((c) => c.perRun)), Math.max(...counts.map((c) => c.perRun))];
  const slowest = [...new Set(counts.map((c) => Math.max(1, Math.round(c.perRun / 100))))];
  const n = slowest.length === 1 ? `${slowest[0]}` : `${Math.min(...slowest)}–${Math.max(...slowest)}`;
  const s = n === '1' ? '' : 's';
  const several = counts.some((c) => c.clients > 1);
  const about = whole(lo) === whole(hi) ? whole(lo) : `${whole(lo)}–${whole(hi)}`;
  const whose = steps.length > 1 ? 'each' : several ? "that client's" : "the run's";
  return (
    `; about ${about} transactions a ${several ? 'client' : 'run'}${several ? ' a run' : ''}, so that p99 is ` +
    `${several || steps.length > 1 ? 'about ' : ''}${whose === 'each' ? '' : `${whose} `}${n} slowest ` +
    `transaction${s}${whose === 'each' ? ' of each' : ''}: one short run's tail, not a measured pattern`
  );
}

/** A cell of the table: the mean, marked "≤" when some repeat's value was capped at its max. */
function cell(rows: readonly StepResult[], field: (typeof FIELDS)[number]): string {
  const text = fixed(meanOf(rows, field));
  return rows.some((r) => capped(r, field).capped) ? `≤ ${text}` : text;
}

/** Repeats offered different rates (multiples of each repeat's own capacity): no mean of them was offered. */
export function offeredApart(g: StepGroup): boolean {
  return new Set(g.ok.map((r) => r.offered_tps)).size > 1;
}

/** The repeats with a histogram: those that ran to the end (an overloaded one stopped before printing it). */
const histogramRows = (g: StepGroup): StepResult[] => g.ok.filter((r) => r.status !== 'overloaded');

/** An overloaded repeat's row: no histogram, only the worst interval's tail latency (queue time included). */
function overloadedRow(g: StepGroup, label: string, r: StepResult): string[] {
  const at = offeredApart(g) ? ` at ${whole(r.offered_tps)}/s` : '';
  const p99 = g.latPct === 99 && typeof r.lat_pct_ms === 'number' ? `${fixed(r.lat_pct_ms)} *` : '-';
  return [g.variant, `${label}, repeat ${r.repeat}${at} (overloaded)`, '1', '-', '-', '-', p99, '-', '-'];
}

/**
 * What a row's value is, by the kinds of step shown: closed-loop steps offered no rate, so "offered the
 * same rate" is said only where rates were offered.
 */
function meanWording(groups: readonly StepGroup[]): string {
  const rated = groups.filter((g) => g.rate > 0 || g.rateOfCapacity !== null).length;
  if (rated === 0) return 'mean over the successful repeats of each step';
  if (rated === groups.length) return 'mean over the successful repeats offered the same rate';
  return 'mean over the successful repeats of each step; of a rate step, those offered the same rate';
}

/** The client count a workload's name promises ("scan-12-clients": 12), or null when it names none. */
const namedClients = (workload: string): number | null => {
  const named = /(\d+)-clients?\b/.exec(workload);
  return named !== null ? Number(named[1]) : null;
};

/**
 * A step's label naming the clients that ran: where the workload's name promises another count (scan-12-clients
 * with 2 clients in a local rehearsal), the count in the name is the one that ran (scan-2-clients), and
 * `renamedNote` says which step of the design it stands for. Unnamed several clients: said after the label.
 */
export function ranLabel(g: StepGroup): string {
  const ran = g.rows[0]?.clients ?? 1;
  const named = namedClients(g.workload);
  if (named !== null && named !== ran) {
    const workload = g.workload.replace(/\d+-clients?\b/, `${ran}-client${ran === 1 ? '' : 's'}`);
    return stepLabel({ ...g, workload });
  }
  return named === null && ran > 1 ? `${stepLabel(g)} (${ran} clients)` : stepLabel(g);
}

/**
 * The design's name of each step renamed for the clients that ran ("scan-2-clients: the study's scan-12-clients,
 * its 12 clients cut to 2 for this run"), one note for the table; null when none.
 */
export function renamedNote(groups: readonly StepGroup[]): string | null {
  const renamed = uniqueInOrder(
    groups.flatMap((g) => {
      const ran = g.rows[0]?.clients ?? 1;
      const named = namedClients(g.workload);
      if (named === null || named === ran) return [];
      const shown = g.workload.replace(/\d+-clients?\b/, `${ran}-client${ran === 1 ? '' : 's'}`);
      return [`${shown}: the study's ${g.workload}, its ${named} clients cut to ${ran} for this run`];
    }),
  );
  return renamed.length > 0 ? `${renamed.join('; ')} (the plan notes).` : null;
}

/**
 * ", above ... at full load: not a queue, cause not measured": a rate step whose p99 is above the p99 of its own
 * unlimited-rate step (the same workload and variant with no rate set, the server at full concurrency). At a
 * lower load such a tail is not queueing; what stalls it the counters do not say.
 */
function stallNote(ctx: Context, g: StepGroup, p99: number): string {
  if (g.rate === 0 && g.rateOfCapacity === null) return '';
  const probe = ctx.groups.find(
    (u) =>
      u.variant === g.variant &&
      u.rate === 0 &&
      u.rateOfCapacity === null &&
      sweepKeyOf(u) === sweepKeyOf(g) &&
      u.stepId !== g.stepId,
  );
  const full = probe !== undefined ? meanOf(histogramRows(probe), 'lat_p99_ms') : null;
  return full !== null && p99 > full
    ? `, above its unlimited-rate step's p99 at full load (${fixed(full)} ms): not a queue, cause not measured`
    : '';
}

/** A latency row's label: with several clients each percentile is the slowest client's (core/lake/step-summary.ts). */
const latencyLabel = (g: StepGroup): string =>
  `${ranLabel(g)}${(g.rows[0]?.clients ?? 1) > 1 ? " (slowest client's)" : ''}`;

export function latencySection(ctx: Context): ReportSection | null {
  if (!ctx.groups.some((g) => g.ok.some((r) => typeof r.lat_p99_ms === 'number'))) return null;
  // Overloaded steps keep their rows: past capacity is what a rate sweep measures.
  const groups = ctx.groups.filter(
    (g) => g.ok.some((r) => typeof r.lat_p99_ms === 'number') || g.overloaded.some((r) => r.tps !== null),
  );
  const rated = (g: StepGroup): boolean => g.rate > 0 || g.rateOfCapacity !== null;
  // In a run with rate steps, the step offered no rate says so.
  const anyRated = groups.some(rated);
  const rows = groups.flatMap((g) => {
    const hist = histogramRows(g);
    const clientBound = g.ok.some((r) => r.saturated_clients > 0);
    const label =
      latencyLabel(g) + (anyRated && !rated(g) ? ' unlimited rate' : '') + (clientBound ? ' (client-bound)' : '');
    const overloaded = g.ok
      .filter((r) => r.status === 'overloaded')
      .sort((a, b) => a.repeat - b.repeat)
      .map((r) => ({ repeat: r.repeat, row: overloadedRow(g, label, r) }));
    const measured =
      hist.length === 0
        ? []
        : !offeredApart(g)
          ? [{ repeat: 0, row: [g.variant, label, String(hist.length), ...FIELDS.map((f) => cell(hist, f))] }]
          : [...hist].map((r) => ({
              repeat: r.repeat,
              row: [
                g.variant,
                `${label}, repeat ${r.repeat} at ${whole(r.offered_tps)}/s`,
                '1',
                ...FIELDS.map((f) => cell([r], f)),
              ],
            }));
    return [...measured, ...overloaded].sort((a, b) => a.repeat - b.repeat).map((x) => x.row);
  });
  const anyOverloaded = groups.some((g) => g.ok.some((r) => r.status === 'overloaded'));
  const anyCapped = groups.some((g) => g.ok.some((r) => FIELDS.some((f) => capped(r, f).capped)));
  const anyApart = groups.some(offeredApart);
  const findings: string[] = [];
  // The tail against the middle: how much slower the slowest 1% are than the typical transaction.
  // Like with like: a step whose repeats were offered different rates is compared per repeat, as its rows show.
  const spread = groups
    .flatMap((g) =>
      offeredApart(g)
        ? histogramRows(g).map((r) => ({
            g,
            label: `${stepLabel(g)}, repeat ${r.repeat} at ${whole(r.offered_tps)}/s`,
            rows: [r],
          }))
        : [{ g, label: latencyLabel(g), rows: histogramRows(g) }],
    )
    .map((x) => ({ ...x, p50: meanOf(x.rows, 'lat_p50_ms'), p99: meanOf(x.rows, 'lat_p99_ms') }))
    .filter((x) => x.p50 !== null && x.p99 !== null && x.p50 > 0)
    .map((x) => ({ ...x, p50: x.p50!, p99: x.p99! }));
  const widest = spread.sort((a, b) => b.p99 / b.p50 - a.p99 / a.p50)[0];
  if (widest) {
    // A p99 capped at the max is an upper bound (the table marks it ≤): so is its ratio.
    const bound = widest.rows.some((r) => capped(r, 'lat_p99_ms').capped);
    // Steps with the same p50 and p99 as shown are a tie: none is wider than the others.
    const shown = (x: { p50: number; p99: number }): string => `${fixed(x.p50)}/${fixed(x.p99)}`;
    const tied = spread.filter((x) => shown(x) === shown(widest));
    const who = tied.map((x) => `${x.g.variant} ${x.label}`);
    // A step outside the tie whose ratio reads the same at one decimal: two decimals tell them apart.
    const ratio = (x: { p50: number; p99: number }): number => x.p99 / x.p50;
    const next = spread.find((x) => !tied.includes(x) && num(ratio(x), 1) === num(ratio(widest), 1));
    const shownRatio = (x: { p50: number; p99: number }): string =>
      next !== undefined ? fixed(ratio(x), 2) : num(ratio(x), 1);
    findings.push(
      `Widest tail${tied.length > 1 ? `, a tie of ${tied.length}` : ''}: ${who.join(' and ')}, ` +
        `p99 ${bound ? 'at most ' : ''}${fixed(widest.p99)} ms ` +
        `is ${bound ? 'at most ' : ''}${shownRatio(widest)}× ${tied.length > 1 ? 'their' : 'its'} ` +
        `p50 (${fixed(widest.p50)} ms)` +
        (next !== undefined ? ` (next: ${next.g.variant} ${next.label}, ${fixed(ratio(next), 2)}×)` : '') +
        fewEvents(tied.map((x) => x.rows)) +
        `${tied.length === 1 ? stallNote(ctx, widest.g, widest.p99) : ''}.`,
    );
    // A single slowest transaction further out than any p99: where it was (the max is exact, not a bucket).
    const maxes = spread
      .map((x) => ({ ...x, max: meanOf(x.rows, 'lat_max_ms') }))
      .filter((x): x is typeof x & { max: number } => x.max !== null);
    const far = maxes.sort((a, b) => b.max / b.p50 - a.max / a.p50)[0];
    if (far !== undefined && far.max / far.p50 > widest.p99 / widest.p50 && !tied.includes(far))
      findings.push(
        `Slowest transaction against its p50: ${far.g.variant} ${far.label}, max ${fixed(far.max)} ms is ` +
          // A sub-ms p50 to 3 digits: at 2 (0.10) the printed figures would not give the printed ratio.
          `${num(far.max / far.p50, 1)}× its p50 (${fixed(far.p50, far.p50 < 1 ? 3 : 2)} ms).`,
      );
  }
  const charts: ChartBlock[] = [];
  // One chart per workload: p99 of different workloads on one axis compare nothing. A rate sweep's curve is
  // the rate section's (its p99 chart per workload), not drawn twice.
  const sweeps = new Set(rateSweepKeys(ctx.groups));
  const keys = [...new Set(groups.filter(rated).map(sweepKeyOf))];
  for (const key of keys.filter((k) => !sweeps.has(k))) {
    // Each repeat at the rate it was offered (relative rates differ per repeat: no mean of them was offered).
    const own = groups.filter((g) => rated(g) && sweepKeyOf(g) === key);
    const points = own.flatMap((g) => histogramRows(g).filter((r) => typeof r.lat_p99_ms === 'number'));
    if (new Set(points.map((r) => r.offered_tps)).size < 2) continue;
    const series: XYSeries[] = [...new Set(points.map((r) => r.variant))].map((variant) => ({
      name: variant,
      points: points
        .filter((r) => r.variant === variant)
        .sort((a, b) => a.offered_tps - b.offered_tps)
        .map((r) => [r.offered_tps, r.lat_p99_ms ?? null] as const),
      scatter: true,
    }));
    const g = own[0]!;
    charts.push(
      lineChart(
        `latency-p99-vs-rate-${charts.length}`,
        `${g.workload} t${g.threads}${g.target !== 'writer' ? ` → ${g.target}` : ''}: p99 latency against offered ` +
          'rate (from the histogram)',
        'offered transactions/s',
        'p99 ms',
        series,
        { styles: ctx.styles },
      ),
    );
  }
  return {
    id: 'latency',
    title: 'Latency distribution',
    question: 'How are the transactions spread between the typical one and the slowest?',
    findings,
    tables: [
      {
        title: `Latency percentiles per step (ms; ${meanWording(groups)})`,
        head: ['variant', 'step', 'repeats', 'p50', 'p90', 'p95', 'p99', 'p99.9', 'max'],
        rows,
        numeric: [2, 3, 4, 5, 6, 7, 8],
        notes: [
          "Each run's percentiles are read off its own sysbench latency histogram the way sysbench reads its " +
            'own, and its max is its exact slowest transaction. A row averages those per-run figures over the ' +
            "repeats: the typical run's percentile, " +
            'as the ratios compare them, not the percentile of all transactions pooled (that needs the ' +
            'histograms summed, not their percentiles averaged).',
          ...(groups.some((g) => (g.rows[0]?.clients ?? 1) > 1)
            ? [
                "slowest client's: with several clients a row shows, at each percentile, the slowest client's " +
                  "figure, not all clients' transactions: the others ran faster, so scans per second from " +
                  "these latencies understate the step's throughput.",
              ]
            : []),
          ...(renamedNote(groups) !== null ? [renamedNote(groups)!] : []),
          // A client count beside "t1": what each counts.
          ...(groups.some((g) => (g.rows[0]?.clients ?? 1) > 1)
            ? ['tN: N sysbench threads a client (each thread one connection).']
            : []),
          ...(anyCapped
            ? [
                '≤ max: the histogram bucket holding that percentile reaches past the exact slowest transaction; ' +
                  'the cell shows the max instead (≤ max), the percentile is no higher.',
              ]
            : []),
          ...(anyOverloaded
            ? [
                '(overloaded): sysbench stopped the step when its event queue filled, before printing its ' +
                  'histogram; * p99 of the worst 1 s interval before it stopped (queue time included), as the ' +
                  'rate sweep shows it; no other percentile was printed (-).',
              ]
            : []),
          ...(sweeps.size > 0
            ? ['p99 against the offered rate: the rate sweep’s charts, one per workload (Answer).']
            : []),
          ...(anyApart
            ? [
                'A step whose repeats were offered different rates (multiples of each repeat’s own ' +
                  'unlimited-rate TPS) has a row per repeat at the rate it was offered: no mean of those rates ' +
                  'was offered.',
              ]
            : []),
        ],
      },
    ],
    charts,
  };
}
