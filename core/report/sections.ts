/**
 * The report's sections, each answering one of the studies' questions from a run's rows:
 * A/B comparison with confidence intervals (S1), price-performance, thread sweeps and the
 * 100-point score (S2), write forwarding (S3), network bounds (S4) and the rate-sweep knee (S5).
 * Which sections apply is decided from the run's spec and rows, not from the study's name.
 */
import type { StepResult } from '../lake/results';
import { bytesPerSToGbps, classifyBound, type BoundResult } from './bounds';
import { barChart, lineChart, ratioChart, spansDecades, type XYSeries } from './charts';
import { networkLimitGbps, pricesAsOfText, regionPrices, variantHourly, type PriceTable } from '../plan/cost';
import { clip, errorKind, fixed, num, pct } from '../format';
import { DEFAULT_LATENCY_FLOOR_MS, findKnee } from './knee';
import { stepKey, type RunData } from './load';
import type { ChartBlock, ReportSection, TableBlock } from './model';
import { overallScores, sweepScores, type TargetScore } from './score';
import { batchMeans, describeRatio, mean, meanCi, ratioVerdict, repeatsToResolve, sampleStddev, summarize, welchRatioCi, type ConfidenceInterval, type Sample } from './stats';
import { latencySection } from './latency-section';
import { pairByTime, pairedRatioCi, roundsToResolve, type PairedRatio } from './duet-pairs';
import { analyzeSweep } from './sweep';
import { serverMetricsSection } from './server-metrics-section';
import { verdictsSection } from './verdicts-section';
import { auroraChoicesSections } from './aurora-choices-section';

// ---------------------------------------------------------------------------------------------
// Steps grouped across repeats, and their estimates with confidence intervals

export interface StepGroup {
  readonly variant: string;
  readonly stepId: string;
  readonly workload: string;
  readonly test: string;
  readonly threads: number;
  readonly rate: number;
  readonly offered: number;
  readonly target: string;
  readonly instanceClass: string;
  readonly az: string | null;
  readonly latPct: number;
  /** One row per repeat (cell), failed and skipped ones included. */
  readonly rows: readonly StepResult[];
  /**
   * The repeats that measured: ok, and overloaded rate steps (their tps is the achieved rate before
   * sysbench's event queue filled: a measurement of offered > capacity, not a failure).
   */
  readonly ok: readonly StepResult[];
  /** Repeats whose rate overloaded the server. */
  readonly overloaded: readonly StepResult[];
  /** Repeats not run (stopAtOverload after a lower rate overloaded, or no capacity measured). */
  readonly skipped: readonly StepResult[];
  /** Options of the workload (from the spec), {} when unknown. */
  readonly options: Readonly<Record<string, unknown>>;
}

type Metric = 'tps' | 'qps' | 'lat_pct_ms' | 'lat_avg_ms';

interface Estimate {
  readonly value: number | null;
  readonly ci: ConfidenceInterval | null;
  /** What the ratio intervals use: per-repeat values, or batch means of one run's intervals. */
  readonly sample: Sample | null;
  readonly source: 'repeats' | 'intervals' | 'single' | 'none';
}

interface VariantInfo {
  readonly name: string;
  readonly instanceClass: string;
  readonly az: string | null;
  readonly readers: number;
  readonly writeForwarding: boolean;
}

export interface Context {
  readonly data: RunData;
  readonly prices: PriceTable;
  readonly groups: readonly StepGroup[];
  readonly variants: readonly VariantInfo[];
  /** Client-bound repeats left out of the estimates (ratios, scores, price-performance); empty when asked to keep them. */
  readonly leftOutSaturated: readonly StepResult[];
}

export interface ContextOptions {
  /** Keep repeats whose client was CPU-saturated in the estimates (by default they are left out, and the report says so). */
  readonly includeSaturated?: boolean;
}

/**
 * A repeat whose client saturated its CPU measures the client, not the server: it is left out of
 * `ok` (what estimates, ratios and scores use) unless asked. Rate-sweep points (rate > 0) keep
 * theirs: the rate section draws the whole curve and marks the client-bound points on it.
 */
function measuredOk(rows: readonly StepResult[], includeSaturated: boolean): StepResult[] {
  return rows.filter((r) => (r.status === 'ok' || r.status === 'overloaded') && r.tps !== null && (includeSaturated || r.rate > 0 || r.saturated_clients === 0));
}

function groupSteps(data: RunData, options: ContextOptions = {}): StepGroup[] {
  const byKey = new Map<string, StepResult[]>();
  for (const s of data.steps) {
    const k = `${s.variant}\u0000${s.step_id}`;
    byKey.set(k, [...(byKey.get(k) ?? []), s]);
  }
  const optionsOf = new Map((data.spec?.workloads ?? []).map((w) => [w.name, w.options as Record<string, unknown>]));
  return [...byKey.values()].map((rows) => {
    const first = rows[0]!;
    return {
      variant: first.variant,
      stepId: first.step_id,
      workload: first.workload,
      test: first.test,
      threads: first.threads,
      rate: first.rate,
      // Rates relative to a measured capacity differ per repeat: the mean of what was offered.
      offered: mean(rows.map((r) => r.offered_tps)),
      target: first.target,
      instanceClass: first.instance_class,
      az: first.az,
      latPct: first.lat_pct,
      rows: rows.slice().sort((a, b) => a.repeat - b.repeat),
      ok: measuredOk(rows, options.includeSaturated === true),
      overloaded: rows.filter((r) => r.status === 'overloaded'),
      skipped: rows.filter((r) => r.status === 'skipped'),
      options: optionsOf.get(first.workload) ?? {},
    };
  });
}

function variantInfos(data: RunData, groups: readonly StepGroup[]): VariantInfo[] {
  const fromSpec: VariantInfo[] = (data.spec?.variants ?? []).map((v) => ({
    name: v.name,
    instanceClass: v.instanceClass,
    az: v.az ?? null,
    readers: v.readers,
    writeForwarding: v.writeForwarding?.enabled === true,
  }));
  const seen = new Set(fromSpec.map((v) => v.name));
  for (const g of groups) {
    if (seen.has(g.variant)) continue;
    seen.add(g.variant);
    fromSpec.push({ name: g.variant, instanceClass: g.instanceClass, az: g.az, readers: 0, writeForwarding: false });
  }
  // Only variants that have rows in this run.
  const present = new Set(groups.map((g) => g.variant));
  return fromSpec.filter((v) => present.has(v.name));
}

export function makeContext(data: RunData, prices: PriceTable, options: ContextOptions = {}): Context {
  const groups = groupSteps(data, options);
  const leftOutSaturated = options.includeSaturated === true ? [] : data.steps.filter((s) => s.status === 'ok' && s.tps !== null && s.rate === 0 && s.saturated_clients > 0);
  return { data, prices, groups, variants: variantInfos(data, groups), leftOutSaturated };
}

const INTERVAL_FIELD: Partial<Record<Metric, 'tps' | 'qps' | 'lat_pct_ms'>> = { tps: 'tps', qps: 'qps', lat_pct_ms: 'lat_pct_ms' };

/**
 * A metric of a step across repeats. With two or more successful repeats the interval comes from
 * them (run-to-run noise, the one that matters for a comparison); with one, from batch means of
 * that run's per-interval samples (within-run noise only, and said so).
 */
function estimate(ctx: Context, g: StepGroup, metric: Metric): Estimate {
  const values = g.ok.map((r) => r[metric]).filter((v): v is number => v !== null);
  if (values.length >= 2) return { value: mean(values), ci: meanCi(values), sample: summarize(values), source: 'repeats' };
  if (values.length === 1) {
    const field = INTERVAL_FIELD[metric];
    const series = field ? (ctx.data.intervals.get(stepKey(g.ok[0]!.cell_id, g.stepId)) ?? []).map((i) => i[field]) : [];
    const batches = batchMeans(series, 10);
    if (batches.length >= 2) {
      const ci = meanCi(batches);
      return {
        value: values[0]!,
        ci: { ...ci, estimate: values[0]!, low: values[0]! - ci.halfWidth, high: values[0]! + ci.halfWidth },
        sample: summarize(batches),
        source: 'intervals',
      };
    }
    return { value: values[0]!, ci: null, sample: null, source: 'single' };
  }
  return { value: null, ci: null, sample: null, source: 'none' };
}

/** A value ± its interval; without `digits`, whole numbers from 100 up (tables must fit a 1,280-px page). */
function withCi(e: Estimate, fractionDigits?: number): string {
  if (e.value === null) return '-';
  const digits = fractionDigits ?? (Math.abs(e.value) >= 100 ? 0 : 2);
  if (e.ci === null || !Number.isFinite(e.ci.halfWidth)) return fixed(e.value, digits);
  return `${fixed(e.value, digits)} ±${fixed(e.ci.halfWidth, digits)}`;
}

function sourceLabel(g: StepGroup, e: Estimate): string {
  const failed = g.rows.filter((r) => r.status === 'failed').length;
  const base = e.source === 'repeats' ? `${g.ok.length} repeats` : e.source === 'intervals' ? '1 run, interval batches' : e.source === 'single' ? '1 run' : 'no result';
  return failed > 0 ? `${base}, ${failed} failed` : base;
}

function ratioText(ci: ConfidenceInterval): string {
  if (!Number.isFinite(ci.estimate)) return '-';
  const range = Number.isFinite(ci.low) ? ` (${pct(ci.low, 1)}–${pct(ci.high, 1)})` : '';
  return `${pct(ci.estimate)}${range}`;
}

/** A ratio in few characters for grids: "83% (79–88) worse". */
function compactRatio(ci: ConfidenceInterval, higherIsBetter: boolean): string {
  if (!Number.isFinite(ci.estimate)) return '-';
  const range = Number.isFinite(ci.low) ? ` (${(ci.low * 100).toFixed(0)}–${(ci.high * 100).toFixed(0)})` : '';
  return `${(ci.estimate * 100).toFixed(0)}%${range} ${verdictText(ci, higherIsBetter)}`;
}

function verdictText(ci: ConfidenceInterval, higherIsBetter: boolean): string {
  switch (ratioVerdict(ci)) {
    case 'within-noise':
      return 'within noise';
    case 'higher':
      return higherIsBetter ? 'better' : 'worse';
    case 'lower':
      return higherIsBetter ? 'worse' : 'better';
    default:
      return 'noise unknown';
  }
}

function ratioOf(a: Estimate, b: Estimate): ConfidenceInterval {
  if (a.sample && b.sample) return welchRatioCi(a.sample, b.sample);
  const est = a.value !== null && b.value !== null && b.value !== 0 ? a.value / b.value : Number.NaN;
  return { estimate: est, low: Number.NaN, high: Number.NaN, halfWidth: Number.NaN, n: 0, df: 0, level: 0.95 };
}

/** Run-to-run and within-run variation of TPS, as coefficients of variation. */
function noiseText(ctx: Context, g: StepGroup): string {
  const tps = g.ok.map((r) => r.tps!).filter((v) => v > 0);
  const between = tps.length >= 2 ? sampleStddev(tps) / mean(tps) : null;
  const within = g.ok
    .map((r) => (ctx.data.intervals.get(stepKey(r.cell_id, g.stepId)) ?? []).map((i) => i.tps))
    .map((series) => batchMeans(series, 10))
    .filter((b) => b.length >= 2 && mean(b) > 0)
    .map((b) => sampleStddev(b) / mean(b));
  const parts: string[] = [];
  if (between !== null) parts.push(`runs ${pct(between, 1)}`);
  if (within.length > 0) parts.push(`within ${pct(mean(within), 1)}`);
  return parts.join(', ') || '-';
}

const stepLabel = (g: StepGroup): string => `${g.workload} t${g.threads}${g.rate > 0 ? ` @${num(g.offered, 0)}/s` : ''}${g.target !== 'writer' ? ` → ${g.target}` : ''}`;

/** The repeats of a step whose client saturated its CPU (they measure the client, not the server). */
const clientBoundRows = (g: StepGroup): StepResult[] => g.rows.filter((r) => (r.status === 'ok' || r.status === 'overloaded') && r.saturated_clients > 0);

/** " [client-bound 1/3, left out]" next to a step in a table: shown in every section, not just the network and rate ones. */
function clientBoundMark(ctx: Context, g: StepGroup): string {
  const n = clientBoundRows(g).length;
  if (n === 0) return '';
  const leftOut = ctx.leftOutSaturated.some((r) => r.variant === g.variant && r.step_id === g.stepId);
  return ` [client-bound ${n}/${g.rows.length}${leftOut ? ', left out' : ''}]`;
}

/**
 * The finding that names a section's client-bound steps, and whether their repeats were left out of
 * its estimates and ratios (the default) or kept (--include-saturated); null when none was.
 */
function clientBoundFinding(ctx: Context, groups: readonly StepGroup[]): string | null {
  const bound = groups.filter((g) => clientBoundRows(g).length > 0);
  if (bound.length === 0) return null;
  const listed = bound.map((g) => `${g.variant} ${stepLabel(g)} (${clientBoundRows(g).length} of ${g.rows.length} repeats)`).join(', ');
  const leftOut = bound.some((g) => ctx.leftOutSaturated.some((r) => r.variant === g.variant && r.step_id === g.stepId));
  return `Client-bound: ${listed}: the client saturated its CPU, so those repeats measure the client, not the server${
    leftOut
      ? '; they are left out of the estimates and ratios here (aurora-bench report --include-saturated keeps them)'
      : '; they are kept in the estimates here (--include-saturated)'
  }.`;
}
const comparableKey = (g: StepGroup): string => `${g.workload}\u0000${g.threads}\u0000${g.rate}\u0000${g.target}`;

function uniqueInOrder<T>(xs: readonly T[]): T[] {
  return [...new Set(xs)];
}

/** sysbench counts deadlocks and lock-wait timeouts as errors: below this share of transactions they are normal OLTP behaviour. */
const SIGNIFICANT_ERROR_SHARE = 0.001;

/** A failed step, a reconnect, or errors above SIGNIFICANT_ERROR_SHARE of the step's transactions. */
function significantErrors(r: StepResult): boolean {
  if (r.status === 'overloaded' || r.status === 'skipped') return false;
  if (r.status !== 'ok' || r.reconnects > 0) return true;
  const events = r.events ?? 0;
  return r.errors > 0 && (events === 0 || r.errors / events > SIGNIFICANT_ERROR_SHARE);
}

/** A workload with this many thread counts is a sweep (S3's 32/64/128 per target is a comparison, not a sweep). */
const MIN_SWEEP_THREADS = 4;

/**
 * Steps that are points of a thread sweep (MIN_SWEEP_THREADS+ thread counts) or a rate sweep (2+ offered rates):
 * their comparison is the sweep's charts, score and knee, not an A/B row per point.
 */
function inSweep(ctx: Context, g: StepGroup): boolean {
  const threads = new Set(ctx.groups.filter((x) => x.workload === g.workload && x.rate === g.rate && x.target === g.target).map((x) => x.threads));
  const rates = new Set(ctx.groups.filter((x) => x.workload === g.workload && x.threads === g.threads && x.target === g.target && x.rate > 0).map((x) => x.rate));
  return threads.size >= MIN_SWEEP_THREADS || rates.size >= 2;
}

// ---------------------------------------------------------------------------------------------
// A/B (S1): per AZ and workload, each variant's TPS, QPS and pNN with intervals, and the ratios

/**
 * A study built around data transfer (S4's full-table SELECT *): a scan-type custom workload or a
 * workload named for the network. Its transactions are scans: no A/B of TPS, no transactions per dollar.
 */
function isNetworkStudy(ctx: Context): boolean {
  return ctx.data.spec?.workloads.some((w) => (w.script !== undefined && /scan/i.test(w.script)) || /scan|network/i.test(w.name)) ?? false;
}

/** "18 more" / "n/a": repeats per side a ratio needs to be resolved (stats.repeatsToResolve), from run-to-run samples only. */
function powerText(a: Estimate, b: Estimate): string {
  if (a.source !== 'repeats' || b.source !== 'repeats' || a.sample === null || b.sample === null) return 'needs 2+ repeats to tell';
  const n = repeatsToResolve(a.sample, b.sample);
  if (n === null) return a.value === b.value ? 'no difference' : '> 1,000 repeats';
  return `${n} repeats`;
}

/** The order the run's cells ran in (the plan's; the spec's for a plan that did not record it). */
function runOrder(ctx: Context): { order: string; seed: number | null } {
  return { order: ctx.data.plan?.order ?? ctx.data.spec?.order ?? 'interleaved', seed: ctx.data.plan?.orderSeed ?? ctx.data.spec?.orderSeed ?? null };
}

/** What the order means for the ratios below, in a sentence. */
function orderSentence(ctx: Context): string {
  const { order, seed } = runOrder(ctx);
  switch (order) {
    case 'duet':
      return 'Order: duet. The variants of each round ran at the same time, every step started on all of them together, so the ratios come from time-paired intervals (per round: the variant over the baseline in the same seconds) and noise both saw cancels out (duet benchmarking: Bulej et al., ICPE 2020).';
    case 'randomized':
      return `Order: randomized (seed ${seed ?? 'not recorded'}). Each round ran the variants one after another in a shuffled order (randomized multiple interleaved trials: Abedi and Brecht, ICPE 2017); the ratios compare the variants' repeats (Welch).`;
    case 'sequential':
      return "Order: sequential. All repeats of a variant ran before the next variant: drift over the run falls on one variant; the ratios compare the variants' repeats (Welch).";
    default:
      return "Order: interleaved. Each round ran the variants one after another, rotating who goes first; the ratios compare the variants' repeats (Welch).";
  }
}

/** The report interval of a step (seconds), from the plan; 1 when the plan does not say. */
function reportIntervalOf(ctx: Context, cellId: string, stepId: string): number {
  return ctx.data.plan?.cells.find((c) => c.cellId === cellId)?.steps.find((s) => s.stepId === stepId)?.reportIntervalS ?? 1;
}

/** A duet's ratio of `g` over `base` from their time-paired intervals, round by round (core/report/duet-pairs.ts). */
function duetRatio(ctx: Context, g: StepGroup, base: StepGroup, field: 'tps' | 'qps' | 'lat_pct_ms'): PairedRatio {
  const series = (r: StepResult, stepId: string) => ({
    startedAt: r.started_at,
    points: (ctx.data.intervals.get(stepKey(r.cell_id, stepId)) ?? []).map((i) => ({ t: i.t, value: i[field] })),
  });
  const rounds = g.ok.flatMap((row) => {
    const other = base.ok.find((b) => b.repeat === row.repeat);
    return other === undefined ? [] : [pairByTime(series(row, g.stepId), series(other, base.stepId), reportIntervalOf(ctx, row.cell_id, g.stepId))];
  });
  return pairedRatioCi(rounds);
}

/** The width of a ratio's 95% interval in percentage points of the ratio ("-" when there is none). */
function widthText(ci: ConfidenceInterval): string {
  return Number.isFinite(ci.low) && Number.isFinite(ci.high) ? `${((ci.high - ci.low) * 100).toFixed(1)} pts` : '-';
}

/** "6 rounds" / "n/a": rounds a duet needs to resolve its ratio (duet-pairs.roundsToResolve). */
function roundsText(r: PairedRatio): string {
  if (r.rounds < 2) return 'needs 2+ rounds to tell';
  const n = roundsToResolve(r.roundLogRatios);
  return n === null ? (r.roundLogRatios.every((x) => x === 0) ? 'no difference' : '> 1,000 rounds') : `${n} rounds`;
}

function abSection(ctx: Context): ReportSection | null {
  if (ctx.variants.length < 2 || isNetworkStudy(ctx)) return null;
  const duet = runOrder(ctx).order === 'duet';
  const answerRows: string[][] = [];
  const tables: TableBlock[] = [];
  const charts: ChartBlock[] = [];
  const findings: string[] = [];
  const azs = uniqueInOrder(ctx.variants.map((v) => v.az));
  const forest: { label: string; estimate: number; low: number | null; high: number | null }[] = [];
  for (const az of azs) {
    const variants = ctx.variants.filter((v) => v.az === az);
    if (variants.length < 2) continue;
    const baseline = variants[0]!;
    const groups = ctx.groups.filter((g) => variants.some((v) => v.name === g.variant) && !inSweep(ctx, g));
    const keys = uniqueInOrder(groups.map(comparableKey));
    const pctName = `p${groups[0]?.latPct ?? 95} ms`;
    const rows: string[][] = [];
    const emphasis: number[] = [];
    for (const key of keys) {
      const byVariant = new Map(groups.filter((g) => comparableKey(g) === key).map((g) => [g.variant, g]));
      const base = byVariant.get(baseline.name);
      for (const v of variants) {
        const g = byVariant.get(v.name);
        if (g === undefined) continue;
        const e = { tps: estimate(ctx, g, 'tps'), qps: estimate(ctx, g, 'qps'), lat: estimate(ctx, g, 'lat_pct_ms') };
        rows.push([stepLabel(g) + clientBoundMark(ctx, g), v.name, v.instanceClass, withCi(e.tps), withCi(e.qps), withCi(e.lat), noiseText(ctx, g), sourceLabel(g, e.tps)]);
        if (base === undefined || v.name === baseline.name) continue;
        const b = { tps: estimate(ctx, base, 'tps'), qps: estimate(ctx, base, 'qps'), lat: estimate(ctx, base, 'lat_pct_ms') };
        // A duet pairs the variants' intervals by time; the other orders compare their repeats.
        const paired = duet ? { tps: duetRatio(ctx, g, base, 'tps'), qps: duetRatio(ctx, g, base, 'qps'), lat: duetRatio(ctx, g, base, 'lat_pct_ms') } : null;
        const r = paired ?? { tps: ratioOf(e.tps, b.tps), qps: ratioOf(e.qps, b.qps), lat: ratioOf(e.lat, b.lat) };
        const from =
          paired !== null
            ? paired.qps.source === 'none'
              ? paired.qps.pairs === 0
                ? 'no time-paired intervals'
                : `time-paired: ${paired.qps.pairs} intervals, too few for an interval`
              : `time-paired: ${paired.qps.pairs} intervals, ${paired.qps.rounds} round${paired.qps.rounds === 1 ? ', interval batches' : 's'}`
            : e.qps.source === 'repeats' && b.qps.source === 'repeats'
              ? `Welch: ${e.qps.sample?.n ?? 0} + ${b.qps.sample?.n ?? 0} repeats`
              : `Welch: ${e.qps.source === 'intervals' ? 'interval batches' : e.qps.source}`;
        emphasis.push(rows.length);
        rows.push([
          '',
          `${v.name}/${baseline.name}`,
          '',
          `${ratioText(r.tps)} ${verdictText(r.tps, true)}`,
          `${ratioText(r.qps)} ${verdictText(r.qps, true)}`,
          `${ratioText(r.lat)} ${verdictText(r.lat, false)}`,
          `QPS CI width ${widthText(r.qps)}`,
          from,
        ]);
        const where = az !== null ? ` in AZ ${az}` : '';
        const latName = pctName.split(' ')[0]!;
        const tpsToo = ratioVerdict(r.tps) !== ratioVerdict(r.qps) ? ` ${describeRatio('TPS', v.name, baseline.name, r.tps)}` : '';
        findings.push(
          `${stepLabel(g)}${where}: ${describeRatio('QPS', v.name, baseline.name, r.qps)}${tpsToo} ${latName} latency ${ratioText(r.lat)}: ${verdictText(r.lat, false)}.`,
        );
        answerRows.push([
          az ?? '-',
          stepLabel(g),
          `${v.name}/${baseline.name}`,
          `${ratioText(r.qps)} ${verdictText(r.qps, true)}`,
          `${ratioText(r.tps)} ${verdictText(r.tps, true)}`,
          `${ratioText(r.lat)} ${verdictText(r.lat, false)}`,
          widthText(r.qps),
          ratioVerdict(r.qps) === 'within-noise' || ratioVerdict(r.qps) === 'unknown' ? (paired !== null ? roundsText(paired.qps) : powerText(e.qps, b.qps)) : 'resolved',
        ]);
        forest.push({
          label: `${stepLabel(g)}: ${v.name}/${baseline.name}`,
          estimate: r.qps.estimate,
          low: Number.isFinite(r.qps.low) ? r.qps.low : null,
          high: Number.isFinite(r.qps.high) ? r.qps.high : null,
        });
      }
    }
    if (rows.length === 0) continue;
    tables.push({
      title: az !== null ? `AZ ${az}` : 'All variants',
      head: ['step', 'variant', 'class', 'TPS ±95% CI', 'QPS ±95% CI', `${pctName} ±95% CI`, 'noise (CV)', 'from'],
      rows,
      numeric: [3, 4, 5],
      emphasis,
      notes: [
        orderSentence(ctx),
        `Ratios are ${variants
          .slice(1)
          .map((v) => v.name)
          .join(
            ', ',
          )} over ${baseline.name}, with a 95% interval (${duet ? 'paired t over the rounds' : 'Welch'}, on the log scale) and its width; "within noise" means the interval includes 100%.`,
      ],
    });
  }
  // The same class across AZs (S1: AZ A and AZ C disagreed by up to 10%).
  const classes = uniqueInOrder(ctx.variants.map((v) => v.instanceClass));
  const azRows: string[][] = [];
  for (const cls of classes) {
    const vs = ctx.variants.filter((v) => v.instanceClass === cls && v.az !== null);
    if (vs.length < 2) continue;
    const [first, ...rest] = vs;
    for (const other of rest) {
      for (const g of ctx.groups.filter((x) => x.variant === other.name && !inSweep(ctx, x))) {
        const base = ctx.groups.find((x) => x.variant === first!.name && comparableKey(x) === comparableKey(g));
        if (!base) continue;
        const r = ratioOf(estimate(ctx, g, 'qps'), estimate(ctx, base, 'qps'));
        azRows.push([cls, stepLabel(g), `${other.az}/${first!.az}`, `${ratioText(r)} ${verdictText(r, true)}`]);
      }
    }
  }
  if (azRows.length > 0) {
    tables.push({ title: 'Same class, different AZ (QPS)', head: ['class', 'step', 'AZ ratio', 'QPS ratio (95% CI)'], rows: azRows, numeric: [3] });
  }
  if (tables.length === 0) return null;
  const keys = uniqueInOrder(ctx.groups.filter((g) => !inSweep(ctx, g)).map(comparableKey));
  const labels = keys.map((k) => stepLabel(ctx.groups.find((g) => comparableKey(g) === k)!));
  charts.push(
    barChart(
      'ab-tps',
      'TPS by variant (mean over repeats)',
      labels,
      ctx.variants.map((v) => ({
        name: v.name,
        values: keys.map((k) => {
          const g = ctx.groups.find((x) => x.variant === v.name && comparableKey(x) === k);
          return g ? estimate(ctx, g, 'tps').value : null;
        }),
      })),
      'TPS',
    ),
  );
  const forestChart = forest.length > 0 ? ratioChart('ab-ratio', 'QPS ratio to the baseline, with 95% intervals (dashed: 100%)', forest) : null;
  const latName = `p${ctx.groups[0]?.latPct ?? 95} latency`;
  const bound = clientBoundFinding(ctx, ctx.groups);
  if (bound !== null) findings.push(bound);
  return {
    id: 'ab',
    title: 'Variants compared (A/B)',
    question: 'Is one variant faster than another, beyond the run-to-run noise?',
    findings,
    tables,
    charts,
    ...(answerRows.length > 0
      ? {
          answer: {
            lines: [],
            tables: [
              {
                title: 'Per AZ: each variant over the baseline, with 95% intervals',
                head: ['AZ', 'step', 'ratio', 'QPS', 'TPS', `${latName} (lower is better)`, 'QPS 95% CI width', duet ? 'rounds to resolve QPS' : 'repeats a side to resolve QPS'],
                rows: answerRows,
                numeric: [3, 4, 5, 6],
                notes: [
                  orderSentence(ctx),
                  duet
                    ? 'Interval: a paired t interval on the log scale over the rounds, each round the ratio of the variants\' time-paired intervals (one round: batch means of its pairs, within-run noise only); "within noise": it includes 100%. Width: high minus low, in percentage points of the ratio. Rounds to resolve: for a difference of the observed size to be found 80% of the time at 95% confidence, given the spread of the rounds\' ratios.'
                    : 'Interval: Welch on the log scale over the repeats (each a fresh cluster); "within noise": it includes 100%. Width: high minus low, in percentage points of the ratio. Repeats to resolve: per side, for a difference of the observed size to be found 80% of the time at 95% confidence, given the run-to-run spread measured.',
                ],
              },
            ],
            charts: forestChart !== null ? [forestChart] : [],
          },
        }
      : {}),
  };
}

// ---------------------------------------------------------------------------------------------
// Price-performance

/** @internal exported for its tests (a test seam) */
export function priceSection(ctx: Context): ReportSection | null {
  // Transactions per dollar of full scans say nothing (S4), and a rate sweep's throughput is what
  // was offered: only its unlimited-rate steps (the capacity) are priced.
  if (ctx.variants.length < 1 || ctx.groups.length === 0 || isNetworkStudy(ctx)) return null;
  const priced = ctx.groups.filter((g) => !(g.rate > 0 && inSweep(ctx, g)));
  // A sweep without an unlimited-rate step is priced at its knee's capacity (meanTps below).
  const sweptOnly = ctx.groups.filter((g) => g.rate > 0 && inSweep(ctx, g) && !priced.some((p) => p.variant === g.variant && p.workload === g.workload));
  if (priced.length === 0 && sweptOnly.length === 0) return null;
  const region = ctx.data.run.region || ctx.data.spec?.region || ctx.prices.defaultRegion;
  const lookup = regionPrices(ctx.prices, region);
  const currency = lookup.prices.currency;
  const workloads = uniqueInOrder([...priced, ...sweptOnly].map((g) => g.workload));
  const hourly = new Map(ctx.variants.map((v) => [v.name, variantHourly(lookup.prices, v.instanceClass, v.readers)]));
  if ([...hourly.values()].every((h) => h === null)) return null;
  // A rate sweep's throughput is what was offered up to its knee: its capacity is the plateau past
  // the knee (findKnee), not the mean over the offered rates, most of which ask for less.
  const sweptAtRates = new Set<string>();
  const meanTps = (variant: string, workload: string): number | null => {
    // The unlimited-rate steps are the capacity; a sweep without one is priced at its knee.
    const unlimited = priced.filter((g) => g.variant === variant && g.workload === workload);
    const rated = ctx.groups.filter((g) => g.variant === variant && g.workload === workload && g.rate > 0);
    if (unlimited.length === 0 && rated.length >= 2) {
      const knee = findKnee(rated.map((g) => ({ offered: g.offered, achieved: estimate(ctx, g, 'tps').value, p99Ms: estimate(ctx, g, 'lat_pct_ms').value })));
      if (knee.capacity !== null) {
        sweptAtRates.add(workload);
        return knee.capacity;
      }
    }
    const vals = unlimited.map((g) => estimate(ctx, g, 'tps').value).filter((v): v is number => v !== null);
    return vals.length > 0 ? mean(vals) : null;
  };
  const perMoney = (variant: string, workload: string): number | null => {
    const h = hourly.get(variant) ?? null;
    const t = meanTps(variant, workload);
    return h !== null && h > 0 && t !== null ? (t * 3600) / h : null;
  };
  const rows: string[][] = [];
  const emphasis: number[] = [];
  const findings: string[] = [];
  // Compared within an AZ, like the A/B table: the first variant of each AZ is the baseline.
  for (const az of uniqueInOrder(ctx.variants.map((v) => v.az))) {
    const variants = ctx.variants.filter((v) => v.az === az);
    const baseline = variants[0]!;
    for (const w of workloads) {
      for (const v of variants) {
        const h = hourly.get(v.name) ?? null;
        const pd = perMoney(v.name, w);
        rows.push([
          w,
          v.name,
          `${v.instanceClass}${v.readers > 0 ? ` x${1 + v.readers}` : ''}`,
          h !== null ? `${num(h, 3)} ${currency}` : 'no price',
          fixed(meanTps(v.name, w)),
          pd !== null ? num(pd, 0) : '-',
        ]);
        const hb = hourly.get(baseline.name) ?? null;
        const pdb = perMoney(baseline.name, w);
        if (v.name === baseline.name || h === null || hb === null) continue;
        emphasis.push(rows.length);
        rows.push(['', `${v.name}/${baseline.name}`, '', `price ${pct(h / hb)}`, '', pd !== null && pdb !== null && pdb > 0 ? `tx/${currency} ${pct(pd / pdb)}` : '-']);
      }
    }
    for (const v of variants.slice(1)) {
      const h = hourly.get(v.name) ?? null;
      const hb = hourly.get(baseline.name) ?? null;
      if (h === null || hb === null) continue;
      const per = workloads
        .map((w) => {
          const a = perMoney(v.name, w);
          const b = perMoney(baseline.name, w);
          return a !== null && b !== null && b > 0 ? `${w} ${pct(a / b, 1)}` : null;
        })
        .filter((x): x is string => x !== null);
      findings.push(
        `${az !== null ? `AZ ${az}: ` : ''}${v.name} costs ${pct(h / hb)} of ${baseline.name} per hour; its transactions per ${currency} are ${per.join(', ')} of ${baseline.name}'s.`,
      );
    }
  }
  // The author's shape: performance ratio against price ratio, per AZ and step, with the interval
  // of the performance ratio carried into the price-performance ratio (the price ratio is exact).
  const answerRows: string[][] = [];
  for (const az of uniqueInOrder(ctx.variants.map((v) => v.az))) {
    const variants = ctx.variants.filter((v) => v.az === az);
    const baseline = variants[0]!;
    const hb = hourly.get(baseline.name) ?? null;
    for (const v of variants.slice(1)) {
      const h = hourly.get(v.name) ?? null;
      if (h === null || hb === null || !(hb > 0)) continue;
      const priceRatio = h / hb;
      // A sweep's single points are not the comparison (its score or knee is): only standalone steps here.
      for (const g of priced.filter((x) => x.variant === v.name && !inSweep(ctx, x))) {
        const base = priced.find((x) => x.variant === baseline.name && comparableKey(x) === comparableKey(g));
        if (base === undefined) continue;
        const perf = ratioOf(estimate(ctx, g, 'tps'), estimate(ctx, base, 'tps'));
        const pp: ConfidenceInterval = { ...perf, estimate: perf.estimate / priceRatio, low: perf.low / priceRatio, high: perf.high / priceRatio };
        answerRows.push([az ?? '-', stepLabel(g), `${v.name}/${baseline.name}`, ratioText(perf), pct(priceRatio, 1), `${ratioText(pp)} ${verdictText(pp, true)}`]);
      }
    }
  }
  const notes = [
    `Cost per hour of each variant's DB instances (writer + readers), ${lookup.region} on-demand prices ${pricesAsOfText(ctx.prices)} from prices/aws-prices.json (override with --prices); clients are the load generator and are not counted.`,
  ];
  if (lookup.fallbackNote) notes.push(lookup.fallbackNote);
  if (sweptAtRates.size > 0)
    notes.push(`${[...sweptAtRates].join(', ')}: a rate sweep; TPS is its capacity at the knee (the plateau the achieved rate reaches), not the mean over the offered rates.`);
  if (ctx.data.run.backend === 'local')
    notes.push("Local run: the throughput was measured on MariaDB on this machine, not on the priced classes; the table shows the method, not the classes' value.");
  return {
    id: 'price',
    title: 'Price-performance',
    question: 'Which variant gives the most transactions per unit of money?',
    findings,
    tables: [
      {
        title: `Transactions per ${currency} (TPS mean over each workload's steps)`,
        head: ['workload', 'variant', 'class', `${currency}/hour`, 'TPS', `transactions per ${currency}`],
        rows,
        numeric: [3, 4, 5],
        emphasis,
        notes,
      },
    ],
    charts: [
      barChart(
        'price-tx-per-money',
        `Transactions per ${currency}`,
        workloads,
        ctx.variants.map((v) => ({ name: v.name, values: workloads.map((w) => perMoney(v.name, w)) })),
        `transactions per ${currency}`,
      ),
    ],
    ...(answerRows.length > 0
      ? {
          answer: {
            lines: [],
            tables: [
              {
                title: 'Performance ratio vs price ratio (TPS; transactions per unit of money = performance / price)',
                head: ['AZ', 'step', 'ratio', 'performance (95% CI)', 'price', 'price-performance (95% CI)'],
                rows: answerRows,
                numeric: [3, 4, 5],
                notes: [
                  `Price: on-demand DB instance price per hour (${lookup.region}); the price-performance interval is the performance interval divided by the price ratio.${ctx.data.run.backend === 'local' ? ' Local run: performance was measured on MariaDB on this machine, not on the priced classes.' : ''}`,
                ],
              },
            ],
            charts: [],
          },
        }
      : {}),
  };
}

// ---------------------------------------------------------------------------------------------
// Thread sweeps (S2)

function sweepSection(ctx: Context): ReportSection | null {
  const sweeps = uniqueInOrder(ctx.groups.map((g) => `${g.workload}\u0000${g.rate}\u0000${g.target}`)).filter(
    (k) => uniqueInOrder(ctx.groups.filter((g) => `${g.workload}\u0000${g.rate}\u0000${g.target}` === k).map((g) => g.threads)).length >= MIN_SWEEP_THREADS,
  );
  if (sweeps.length === 0) return null;
  const findings: string[] = [];
  const tables: TableBlock[] = [];
  const charts: ChartBlock[] = [];
  const scoresPerWorkload = new Map<string, TargetScore[]>();
  const fallOffs = new Map<string, string[]>();
  const pointRows: string[][] = [];
  const threadCounts = uniqueInOrder(ctx.groups.filter((g) => sweeps.includes(`${g.workload}\u0000${g.rate}\u0000${g.target}`)).map((g) => g.threads)).sort((a, b) => a - b);
  const findingRows: string[][] = [];
  const errorRows: string[][] = [];
  const scoreLines: string[] = [];
  sweeps.forEach((key, i) => {
    const groups = ctx.groups.filter((g) => `${g.workload}\u0000${g.rate}\u0000${g.target}` === key);
    const first = groups[0]!;
    const label = `${first.workload}${first.rate > 0 ? ` @${first.rate}/s` : ''}${first.target !== 'writer' ? ` → ${first.target}` : ''}`;
    const tpsSeries: XYSeries[] = [];
    const latSeries: XYSeries[] = [];
    const scoreInput = new Map<string, { threads: number; tps: number | null; qps: number | null }[]>();
    for (const v of ctx.variants) {
      const vg = groups.filter((g) => g.variant === v.name).sort((a, b) => a.threads - b.threads);
      if (vg.length === 0) continue;
      const points = vg.map((g) => ({ g, tps: estimate(ctx, g, 'tps').value, qps: estimate(ctx, g, 'qps').value, lat: estimate(ctx, g, 'lat_pct_ms').value }));
      const hasErrors = (g: StepGroup): boolean => g.rows.some(significantErrors);
      tpsSeries.push({
        name: v.name,
        points: points.map((p) => [p.g.threads, p.tps] as const),
        errorPoints: points.filter((p) => hasErrors(p.g)).map((p) => [p.g.threads, p.tps ?? 0] as const),
      });
      latSeries.push({
        name: v.name,
        points: points.map((p) => [p.g.threads, p.lat] as const),
        errorPoints: points.filter((p) => hasErrors(p.g) && p.lat !== null).map((p) => [p.g.threads, p.lat!] as const),
      });
      scoreInput.set(
        v.name,
        points.map((p) => ({ threads: p.g.threads, tps: p.tps, qps: p.qps })),
      );
      const f = analyzeSweep(
        points.map((p) => ({
          threads: p.g.threads,
          throughput: p.tps,
          failed: p.g.ok.length === 0,
          // Deadlocks below the threshold are normal OLTP behaviour, not a finding.
          errors: p.g.rows.filter(significantErrors).reduce((a, r) => a + r.errors, 0),
          reconnects: p.g.rows.reduce((a, r) => a + r.reconnects, 0),
          error: p.g.rows.find((r) => r.error)?.error ?? null,
        })),
      );
      findingRows.push([
        label,
        v.name,
        f.peakThreads !== null ? String(f.peakThreads) : '-',
        fixed(f.peakThroughput),
        f.fallOffThreads !== null ? String(f.fallOffThreads) : 'none',
        f.lastShareOfPeak !== null ? pct(f.lastShareOfPeak, 0) : '-',
        f.firstErrorThreads !== null ? String(f.firstErrorThreads) : 'none',
      ]);
      findings.push(`${label}, ${v.name}: ${f.summary}.`);
      fallOffs.set(label, [
        ...(fallOffs.get(label) ?? []),
        f.peakThreads === null
          ? `${v.name} no successful point`
          : `${v.name} peaks at ${f.peakThreads}${f.fallOffThreads !== null ? ` and falls off from ${f.fallOffThreads}` : ', no fall-off'}`,
      ]);
      pointRows.push([
        label,
        v.name,
        ...threadCounts.map((t) => {
          const g = vg.find((x) => x.threads === t);
          if (g === undefined) return '-';
          const e = estimate(ctx, g, 'tps');
          if (e.value === null) return g.rows.some((r) => r.status === 'failed') ? 'failed' : '-';
          return `${num(e.value, 0)} ${spreadText(ctx, g, 'tps').replace(' (within run)', '')}${clientBoundMark(ctx, g)}`;
        }),
      ]);
      for (const e of f.errorPoints) {
        const g = vg.find((x) => x.threads === e.threads)!;
        const events = g.rows.reduce((a, r) => a + (r.events ?? 0), 0);
        errorRows.push([
          label,
          v.name,
          String(e.threads),
          `${e.failed ? 'step failed' : 'ran with errors'}: ${errorKind(e.error)}`,
          num(e.errors, 0),
          events > 0 ? pct(e.errors / events, 2) : '-',
          num(e.reconnects, 0),
          clip(e.error, 70),
        ]);
      }
    }
    const scores = sweepScores(scoreInput);
    scoresPerWorkload.set(label, scores);
    charts.push(lineChart(`sweep-tps-${i}`, `${label}: TPS by threads (red: errors)`, 'threads', 'TPS', tpsSeries, { logX: true }));
    charts.push(
      lineChart(`sweep-lat-${i}`, `${label}: p${first.latPct} latency by threads`, 'threads', `p${first.latPct} ms`, latSeries, {
        logX: true,
        logY: spansDecades(latSeries.flatMap((x) => x.points.map((p) => p[1]))),
      }),
    );
  });
  tables.push({
    title: 'Peak and fall-off (TPS)',
    head: ['sweep', 'variant', 'peak threads', 'peak TPS', 'falls off from', 'last vs peak', 'errors from'],
    rows: findingRows,
    numeric: [2, 3, 4, 5, 6],
    notes: [
      'Fall-off: the first thread count past the peak below 90% of it. Errors: failed steps, reconnects, or sysbench errors above 0.1% of transactions; those points are kept and marked, not dropped.',
    ],
  });
  if (ctx.variants.length >= 2) {
    const overall = overallScores(scoresPerWorkload);
    const heads = [...scoresPerWorkload.keys()];
    const rows = overall.map((o) => [
      o.target,
      ...heads.map((h) => {
        const s = scoresPerWorkload.get(h)!.find((x) => x.target === o.target);
        return s ? `${s.score.toFixed(1)}${s.failedThreads.length > 0 ? ` (${s.failedThreads.length} failed)` : ''}` : '-';
      }),
      o.score.toFixed(1),
    ]);
    tables.push({
      title: '100-point score (S2): mean QPS + mean TPS over the sweep, best = 100',
      head: ['variant', ...heads, 'overall'],
      rows,
      numeric: heads.map((_, i) => i + 1).concat([heads.length + 1]),
      notes: ['A thread count a variant could not serve counts as 0 throughput.'],
    });
    findings.unshift(`Score: ${overall.map((o) => `${o.target} ${o.score.toFixed(1)}`).join(', ')}.`);
    scoreLines.push(`Score (mean QPS + mean TPS over the sweep, best = 100): ${overall.map((o) => `${o.target} ${o.score.toFixed(1)}`).join(', ')}.`);
    const [best, second] = overall;
    if (best !== undefined && second !== undefined) scoreLines.push(scoreNoiseText(ctx, sweeps, best.target, second.target));
  }
  if (errorRows.length > 0) {
    tables.push({
      title: 'Points with errors',
      head: ['sweep', 'variant', 'threads', 'what', 'errors', 'of transactions', 'reconnects', 'error'],
      rows: errorRows,
      numeric: [2, 4, 5, 6],
      notes: [
        `Marked: a failed step (e.g. a connection limit), any reconnect, or sysbench errors (deadlocks, lock waits, dropped connections) above ${pct(SIGNIFICANT_ERROR_SHARE, 1)} of transactions.`,
      ],
    });
  }
  tables.push({
    title: 'TPS per thread count, with its spread',
    head: ['sweep', 'variant', ...threadCounts.map((t) => `${t} thr`)],
    rows: pointRows,
    numeric: threadCounts.map((_, i) => i + 2),
    notes: ['Spread: lowest–highest over the repeats, or ± the 95% interval of the run’s interval batch means when one repeat ran (within-run noise only).'],
  });
  const sweepBound = clientBoundFinding(
    ctx,
    ctx.groups.filter((g) => sweeps.includes(`${g.workload}\u0000${g.rate}\u0000${g.target}`)),
  );
  if (sweepBound !== null) findings.push(sweepBound);
  const scoreTable = tables.find((t) => t.title.startsWith('100-point score'));
  const tpsCharts = charts.filter((c) => c.id.startsWith('sweep-tps-'));
  return {
    id: 'sweep',
    title: 'Thread sweep',
    question: 'How does throughput scale with threads, where does it peak and fall off, and where do connections fail?',
    findings,
    tables: tables.filter((t) => t !== scoreTable),
    charts: charts.filter((c) => !tpsCharts.includes(c)),
    answer: {
      lines: [...scoreLines, ...[...fallOffs.entries()].map(([label, parts]) => `${label}: ${parts.join('; ')} threads (fall-off: below 90% of the peak).`)],
      tables: scoreTable !== undefined ? [scoreTable] : [],
      charts: tpsCharts,
    },
  };
}

/**
 * Whether the score's ranking of the best two variants is beyond the noise: each variant's score
 * sum (mean QPS + mean TPS over every sweep point) per repeat when every point has 2+ repeats,
 * else per batch of its runs' intervals (within-run noise only, said so); the two compared by a
 * Welch ratio interval, and with repeats the number a side needed to resolve the difference.
 */
function scoreNoiseText(ctx: Context, sweeps: readonly string[], bestName: string, secondName: string): string {
  const groupsOf = (variant: string): StepGroup[] => ctx.groups.filter((g) => g.variant === variant && sweeps.includes(`${g.workload}\u0000${g.rate}\u0000${g.target}`));
  const byRepeats = [bestName, secondName].every((v) => groupsOf(v).every((g) => g.rows.length >= 2));
  const samples = [bestName, secondName].map((v) => {
    const gs = groupsOf(v);
    if (byRepeats) {
      const repeats = uniqueInOrder(gs.flatMap((g) => g.rows.map((r) => r.repeat)));
      return repeats.map((rep) => mean(gs.map((g) => g.rows.filter((r) => r.repeat === rep && r.status !== 'failed').reduce((a, r) => a + (r.tps ?? 0) + (r.qps ?? 0), 0))));
    }
    const perGroup = gs.map((g) =>
      g.ok.length === 0
        ? []
        : batchMeans(
            (ctx.data.intervals.get(stepKey(g.ok[0]!.cell_id, g.stepId)) ?? []).map((i) => i.tps + i.qps),
            5,
          ),
    );
    const k = Math.min(...perGroup.map((b) => (b.length === 0 ? Infinity : b.length)));
    if (!Number.isFinite(k) || k < 2) return [];
    return Array.from({ length: k }, (_, i) => mean(perGroup.map((b) => b[i] ?? 0)));
  });
  const [a, b] = samples as [number[], number[]];
  if (a.length < 2 || b.length < 2) return `${bestName} ranks above ${secondName}; the noise is not measured (one repeat and too few intervals).`;
  const ci = welchRatioCi(summarize(a), summarize(b));
  const source = byRepeats ? `over ${a.length} repeats` : 'from one repeat’s interval batches (within-run noise only; run 2+ repeats to measure run-to-run noise)';
  if (ratioVerdict(ci) === 'higher') return `${bestName} ranks above ${secondName} beyond the noise: score ratio ${ratioText(ci)} ${source}.`;
  const power = byRepeats ? ` About ${repeatsToResolve(summarize(a), summarize(b)) ?? 'more than 1,000'} repeats a side would resolve a difference of this size.` : '';
  return `The ranking of ${bestName} above ${secondName} is within the noise: score ratio ${ratioText(ci)} ${source}.${power}`;
}

// ---------------------------------------------------------------------------------------------
// Write forwarding (S3)

function writesPerTx(options: Readonly<Record<string, unknown>>): number {
  const n = (k: string, d: number): number => (typeof options[k] === 'number' ? options[k] : d);
  return n('index_updates', 1) + n('non_index_updates', 1) + 2 * n('delete_inserts', 1);
}

/** A read share as reads:writes, e.g. 0.714 -> "≈70:30", 0.5 -> "50:50". */
function readShareLabel(share: number): string {
  const reads = Math.round(share * 100);
  const tens = Math.round(share * 10) * 10;
  return Math.abs(reads - tens) <= 2 ? `${reads === tens ? '' : '≈'}${tens}:${100 - tens}` : `${reads}:${100 - reads}`;
}

const sameWorkloadShape = (a: StepGroup, b: StepGroup): boolean =>
  a.variant === b.variant && a.test === b.test && JSON.stringify(a.options) === JSON.stringify(b.options) && a.rate === b.rate;

/** Stale reads of a step's successful repeats, as "stale / checks (share)"; null when not measured. */
function staleReadsText(g: StepGroup): string | null {
  const measured = g.ok.filter((r) => typeof r.read_back_checks === 'number' && typeof r.stale_reads === 'number');
  if (measured.length === 0) return null;
  const checks = measured.reduce((a, r) => a + r.read_back_checks!, 0);
  const stale = measured.reduce((a, r) => a + r.stale_reads!, 0);
  return `${num(stale, 0)} / ${num(checks, 0)}${checks > 0 ? ` (${pct(stale / checks, 2)})` : ''}`;
}

/** @internal exported for its tests (a test seam) */
export function forwardingSection(ctx: Context): ReportSection | null {
  const readerGroups = ctx.groups.filter((g) => g.target !== 'writer');
  const forwardingVariants = ctx.variants.filter((v) => v.writeForwarding);
  if (readerGroups.length === 0 && forwardingVariants.length === 0) return null;
  const findings: string[] = [];
  const tables: TableBlock[] = [];
  const charts: ChartBlock[] = [];
  if (readerGroups.length === 0) {
    findings.push(
      'No step of this run targets a reader: write forwarding, reader scale-out and consistency levels are Aurora features (AWS only); a local run keeps only the writer steps.',
    );
    return {
      id: 'forwarding',
      title: 'Write forwarding',
      question: 'When does sending reads and writes to a reader (writes forwarded) beat the writer?',
      findings,
      tables,
      charts,
    };
  }
  // Writer vs reader, same workload shape and threads.
  const pairRows: string[][] = [];
  const grid = new Map<string, string>();
  const ratioPoints = new Map<number, [number, number][]>();
  const readerWins = new Map<string, boolean>();
  for (const r of readerGroups.filter((g) => g.target === 'reader' && g.options['consistency'] === undefined)) {
    const w = ctx.groups.find((g) => g.target === 'writer' && g.threads === r.threads && sameWorkloadShape(g, r));
    if (!w) continue;
    const et = { w: estimate(ctx, w, 'tps'), r: estimate(ctx, r, 'tps') };
    const el = { w: estimate(ctx, w, 'lat_pct_ms'), r: estimate(ctx, r, 'lat_pct_ms') };
    const ratio = ratioOf(et.r, et.w);
    const ps = typeof r.options['point_selects'] === 'number' && r.options['range_selects'] === false ? r.options['point_selects'] : null;
    const mix = ps !== null ? `${ps}:${writesPerTx(r.options)}` : 'default';
    pairRows.push([
      r.workload.replace(/-reader$/, ''),
      mix,
      String(r.threads),
      withCi(et.w),
      withCi(et.r),
      `${ratioText(ratio)} ${verdictText(ratio, true)}`,
      withCi(el.w),
      withCi(el.r),
    ]);
    if (ps !== null) grid.set(`${r.threads}/${readShareLabel(ps / (ps + writesPerTx(r.options)))}`, compactRatio(ratio, true));
    if (ps !== null && Number.isFinite(ratio.estimate)) {
      const share = ps / (ps + writesPerTx(r.options));
      ratioPoints.set(r.threads, [...(ratioPoints.get(r.threads) ?? []), [share * 100, ratio.estimate * 100]]);
      // A win counts only beyond the noise (the interval above 100%), or by the estimate when unmeasured.
      const verdict = ratioVerdict(ratio);
      readerWins.set(`${r.threads}/${share * 100}`, verdict === 'higher' || (verdict === 'unknown' && ratio.estimate > 1));
    }
  }
  if (pairRows.length > 0) {
    tables.push({
      title: 'Writer vs reader (writes forwarded)',
      head: ['workload', 'reads:writes', 'threads', 'writer TPS', 'reader TPS', 'reader/writer', `writer p${readerGroups[0]!.latPct} ms`, `reader p${readerGroups[0]!.latPct} ms`],
      rows: pairRows,
      numeric: [2, 3, 4, 6, 7],
    });
  }
  for (const [threads, pts] of [...ratioPoints.entries()].sort((a, b) => a[0] - b[0])) {
    const sorted = pts.sort((a, b) => a[0] - b[0]);
    const wins = sorted.findIndex((_, i) => sorted.slice(i).every(([share]) => readerWins.get(`${threads}/${share}`) === true));
    findings.push(
      wins >= 0
        ? `${threads} threads: the reader beats the writer beyond the noise from a read share of ${readShareLabel(sorted[wins]![0] / 100)} (reads:writes) upwards.`
        : `${threads} threads: the reader does not beat the writer beyond the noise at any read share tried (best ${Math.max(...sorted.map(([, r]) => r)).toFixed(1)}% of the writer).`,
    );
  }
  if (ratioPoints.size > 0) {
    charts.push(
      lineChart(
        'fwd-ratio',
        'Reader/writer TPS by read share (100% = equal)',
        'reads, % of statements',
        'reader TPS / writer TPS, %',
        [...ratioPoints.entries()].sort((a, b) => a[0] - b[0]).map(([t, pts]) => ({ name: `${t} threads`, points: pts.sort((a, b) => a[0] - b[0]) })),
        { hLines: [{ value: 100, label: '100%: reader = writer' }] },
      ),
    );
  }
  // Scale-out: several readers summed vs the writer at the same total threads.
  const scaleRows: string[][] = [];
  for (const r of readerGroups.filter((g) => g.target === 'all-readers')) {
    const clients = r.rows[0]?.clients ?? 1;
    const w = ctx.groups.find((g) => g.target === 'writer' && g.threads === r.threads * clients && sameWorkloadShape(g, r));
    const er = estimate(ctx, r, 'tps');
    const ew = w ? estimate(ctx, w, 'tps') : null;
    const ratio = ew ? ratioOf(er, ew) : null;
    scaleRows.push([r.workload, `${clients} x ${r.threads}`, withCi(er), ew ? withCi(ew) : 'no writer step', ratio ? `${ratioText(ratio)} ${verdictText(ratio, true)}` : '-']);
    if (ratio && Number.isFinite(ratio.estimate))
      findings.push(`${r.workload}: ${clients} readers x ${r.threads} threads give ${pct(ratio.estimate, 1)} of the writer's TPS at ${r.threads * clients} threads.`);
  }
  if (scaleRows.length > 0)
    tables.push({
      title: 'Scale-out: readers summed vs the writer at the same total threads',
      head: ['workload', 'readers x threads', 'summed TPS', 'writer TPS', 'readers/writer'],
      rows: scaleRows,
      numeric: [2, 3],
    });
  // Consistency levels.
  const LEVEL_ORDER = ['EVENTUAL', 'SESSION', 'GLOBAL'];
  const levelRank = (g: StepGroup): number => {
    const i = LEVEL_ORDER.indexOf(String(g.options['consistency']).toUpperCase());
    return i < 0 ? LEVEL_ORDER.length : i;
  };
  // In the order of what each level guarantees: EVENTUAL, SESSION, GLOBAL.
  const consistency = readerGroups.filter((g) => typeof g.options['consistency'] === 'string').sort((a, b) => levelRank(a) - levelRank(b) || a.threads - b.threads);
  if (consistency.length > 0) {
    const eventual = consistency.find((g) => String(g.options['consistency']).toUpperCase() === 'EVENTUAL');
    const rows = consistency.map((g) => {
      const lat = estimate(ctx, g, 'lat_pct_ms');
      const avg = estimate(ctx, g, 'lat_avg_ms');
      const cost = eventual && g !== eventual ? ratioOf(lat, estimate(ctx, eventual, 'lat_pct_ms')) : null;
      return [
        String(g.options['consistency']),
        String(g.threads),
        withCi(estimate(ctx, g, 'tps')),
        withCi(avg),
        withCi(lat),
        cost ? `${ratioText(cost)} ${verdictText(cost, false)}` : '-',
        staleReadsText(g) ?? 'not measured',
      ];
    });
    for (const g of consistency) {
      const stale = staleReadsText(g);
      if (stale !== null) findings.push(`${String(g.options['consistency'])} (${g.threads} threads): ${stale} reads after the session's own write did not see it.`);
    }
    const consistencyNotes = [
      'Stale reads: each transaction writes a marker row and reads it back in the same session after commit (rw_consistency.lua); a read that does not see the write is stale.',
    ];
    if (consistency.every((g) => staleReadsText(g) === null)) consistencyNotes.push("This run's rows carry no read-after-write counts, so stale reads are not measured.");
    tables.push({
      title: 'Read consistency: the latency cost of each level and the stale reads it prevents',
      head: ['level', 'threads', 'TPS', 'avg ms', `p${consistency[0]!.latPct} ms`, 'vs EVENTUAL', 'stale reads'],
      rows,
      numeric: [1, 2, 3, 4, 6],
      notes: consistencyNotes,
    });
    charts.push(
      barChart(
        'fwd-consistency',
        'Latency by consistency level',
        consistency.map((g) => String(g.options['consistency'])),
        [
          { name: `p${consistency[0]!.latPct} ms`, values: consistency.map((g) => estimate(ctx, g, 'lat_pct_ms').value) },
          { name: 'avg ms', values: consistency.map((g) => estimate(ctx, g, 'lat_avg_ms').value) },
        ],
        'ms',
      ),
    );
  }
  // Reader steps with nothing to compare (read-only work on a reader, no writer twin): no section.
  if (tables.length === 0 && findings.length === 0) return null;
  const answerTables: TableBlock[] = [];
  if (grid.size > 0) {
    const threadsList = uniqueInOrder([...grid.keys()].map((k) => Number(k.split('/')[0]))).sort((a, b) => a - b);
    const shares = uniqueInOrder([...grid.keys()].map((k) => k.split('/')[1]!)).sort((a, b) => parseFloat(a.replace('≈', '')) - parseFloat(b.replace('≈', '')));
    answerTables.push({
      title: 'Reader/writer TPS (writes forwarded) by threads and read share (reads:writes)',
      head: ['threads', ...shares],
      rows: threadsList.map((t) => [String(t), ...shares.map((sh) => grid.get(`${t}/${sh}`) ?? '-')]),
      numeric: shares.map((_, i) => i + 1),
      notes: ['Each cell: reader TPS over writer TPS at the same threads and statement mix, in % with its 95% interval; "better"/"worse": beyond the noise.'],
    });
  }
  const forwardingBound = clientBoundFinding(ctx, ctx.groups);
  if (forwardingBound !== null) findings.push(forwardingBound);
  const consistencyTable = tables.find((t) => t.title.startsWith('Read consistency'));
  if (consistencyTable !== undefined) answerTables.push(consistencyTable);
  const ratioChartBlock = charts.find((c) => c.id === 'fwd-ratio');
  if (ctx.data.run.backend === 'local' && readerGroups.length > 0) {
    findings.push(
      'Local rehearsal: MariaDB has no write forwarding; the reader steps ran a client-side emulation on real GTID replication (writes on a second connection to the writer; SESSION waits for the session’s last write GTID on the replica, GLOBAL for the writer’s current GTID). It shows the method and the cost of waiting for replication on this machine, not Aurora’s numbers.',
    );
  }
  return {
    id: 'forwarding',
    title: 'Write forwarding',
    question: 'When does sending reads and writes to a reader (writes forwarded) beat the writer?',
    findings,
    tables: tables.filter((t) => t !== consistencyTable),
    charts: charts.filter((c) => c !== ratioChartBlock),
    answer: { lines: findings, tables: answerTables, charts: ratioChartBlock !== undefined ? [ratioChartBlock] : [] },
  };
}

// ---------------------------------------------------------------------------------------------
// Network bounds (S4)

/** Next to a value averaged over a window with missing datapoints (MetricMean.partial). */
const PARTIAL_MARK = 'partial';

/**
 * A workload's label with the clients that really ran: a name that promises more clients than ran
 * (scan-12-clients with 2 clients in a local rehearsal) says why.
 */
function clientsLabel(ctx: Context, g: StepGroup): string {
  const ran = g.rows[0]?.clients ?? 1;
  const named = /(\d+)-clients?\b/.exec(g.workload);
  if (named !== null && Number(named[1]) !== ran) {
    const why = ctx.data.run.backend === 'local' ? 'scaled down for the local rehearsal' : 'fewer clients than the name';
    return `${g.workload} (${ran} client${ran === 1 ? '' : 's'} ran: ${why})`;
  }
  return `${g.workload} (${ran} client${ran === 1 ? '' : 's'})`;
}

function networkSection(ctx: Context): ReportSection | null {
  // Network metrics exist for every AWS run; the section is for studies built around data transfer.
  if (!isNetworkStudy(ctx)) return null;
  const hasNetwork = ctx.data.metrics.some((m) => m.metric.startsWith('Network'));
  const local = ctx.data.run.backend === 'local';
  const rows: string[][] = [];
  const findings: string[] = [];
  const results: { g: StepGroup; tx: number | null; rx: number | null; cpu: number | null; limit: number | null; bound: BoundResult }[] = [];
  let partialRows = 0;
  for (const g of ctx.groups) {
    const role = g.target === 'writer' ? 'writer' : 'reader';
    // Every repeat that ran, client-bound ones included: telling client-bound from server-bound is
    // this section's verdict (estimates elsewhere leave client-bound repeats out).
    const ran = g.rows.filter((r) => r.status === 'ok' || r.status === 'overloaded');
    const perCell = ran.map((r) => {
      const ms = ctx.data.metrics.filter((m) => m.cell_id === r.cell_id && m.step_id === g.stepId);
      const server = ms.filter((m) => m.role === role);
      const tx = server.filter((m) => m.metric === 'NetworkTransmitThroughput');
      const rx = server.filter((m) => m.metric === 'NetworkReceiveThroughput');
      const cpu = server.filter((m) => m.metric === 'CPUUtilization');
      const host = ms.filter((m) => m.role === 'client' && m.metric === 'ClientHostCPU');
      const sum = (xs: typeof ms): number | null => (xs.length > 0 ? xs.reduce((a, m) => a + m.avg_value, 0) : null);
      return {
        tx: sum(tx),
        rx: sum(rx),
        cpu: cpu.length > 0 ? mean(cpu.map((m) => m.avg_value)) : null,
        host: host.length > 0 ? mean(host.map((m) => m.avg_value)) : null,
        partialNet: [...tx, ...rx].some((m) => m.partial),
        partialCpu: cpu.some((m) => m.partial),
      };
    });
    const partialNet = perCell.some((c) => c.partialNet);
    const partialCpu = perCell.some((c) => c.partialCpu);
    if (partialNet || partialCpu) partialRows += 1;
    const avg = (xs: (number | null)[]): number | null => {
      const v = xs.filter((x): x is number => x !== null);
      return v.length > 0 ? mean(v) : null;
    };
    const tx = avg(perCell.map((c) => c.tx));
    const rx = avg(perCell.map((c) => c.rx));
    const cpu = avg(perCell.map((c) => c.cpu));
    const clientCpu = avg(ran.map((r) => r.client_cpu_avg_pct));
    const limit = local ? null : networkLimitGbps(ctx.prices, g.instanceClass);
    const bound = classifyBound({
      serverCpuPct: cpu,
      networkBytesPerS: tx !== null || rx !== null ? (tx ?? 0) + (rx ?? 0) : null,
      networkLimitGbps: limit,
      clientSaturated: ran.some((r) => r.saturated_clients > 0),
      clientCpuPct: clientCpu,
      sharedHostCpuPct: local ? avg(perCell.map((c) => c.host)) : null,
    });
    const gbps = (b: number | null): number | null => (b === null ? null : bytesPerSToGbps(b));
    results.push({ g, tx: gbps(tx), rx: gbps(rx), cpu, limit, bound });
    const mark = (p: boolean): string => (p ? ` ${PARTIAL_MARK}` : '');
    rows.push([
      g.variant,
      g.instanceClass,
      clientsLabel(ctx, g),
      tx !== null ? `${fixed(gbps(tx), 2)}${mark(partialNet)}` : '-',
      rx !== null ? `${fixed(gbps(rx), 3)}${mark(partialNet)}` : '-',
      limit !== null ? `${limit}` : local ? 'n/a locally' : 'unknown',
      cpu !== null ? `${fixed(cpu, 0)}${mark(partialCpu)}` : '-',
      clientCpu !== null ? fixed(clientCpu, 0) : '-',
      bound.bound === 'none' ? 'no limit reached' : `${bound.bound}-bound`,
    ]);
    findings.push(
      `${g.variant} (${g.instanceClass}), ${clientsLabel(ctx, g)}: ${bound.bound === 'none' ? '' : `${bound.bound}-bound, `}${bound.reason}${partialNet || partialCpu ? ` (${PARTIAL_MARK}: server metrics incomplete)` : ''}.`,
    );
  }
  const workloads = uniqueInOrder(results.map((r) => r.g.workload));
  const variants = uniqueInOrder(results.map((r) => r.g.variant));
  const notes = [
    "CPU-bound: server CPU >= 90%. Network-bound: transmit + receive >= 90% of the class's network limit (prices/aws-prices.json). Client-bound: a client saturated its CPU; its numbers describe the client.",
  ];
  if (local)
    notes.push(
      "Local run: loopback traffic has no class limit, so no point can be network-bound; host-bound: this machine's CPUs (shared by the servers and the clients) were >= 90% busy. CloudWatch network metrics per class are AWS only.",
    );
  if (!hasNetwork) notes.push('This run has no network metrics (CloudWatch NetworkTransmitThroughput/NetworkReceiveThroughput): bytes per second are unknown.');
  if (partialRows > 0)
    notes.push(
      `${PARTIAL_MARK}: some datapoints of the step's window never arrived from CloudWatch/Performance Insights (metric_windows.complete = false); the value averages only the minutes received and may not describe the whole step.`,
    );
  const charts: ChartBlock[] = workloads.map((w, i) => {
    const of = (v: string): (typeof results)[number] | undefined => results.find((r) => r.g.variant === v && r.g.workload === w);
    return barChart(
      `net-gbps-${i}`,
      `${w}: Gbps transmitted and received per class${local ? '' : ' (dashed: the class limit)'}`,
      variants,
      [
        { name: 'transmit Gbps', values: variants.map((v) => of(v)?.tx ?? null) },
        { name: 'receive Gbps', values: variants.map((v) => of(v)?.rx ?? null) },
      ],
      'Gbps',
      { name: 'class limit Gbps', values: variants.map((v) => of(v)?.limit ?? null) },
    );
  });
  charts.push(
    barChart(
      'net-cpu',
      'Server CPU % by class (the 90% CPU-bound line dashed)',
      variants,
      workloads.map((w) => ({ name: w, values: variants.map((v) => results.find((r) => r.g.variant === v && r.g.workload === w)?.cpu ?? null) })),
      'CPU %',
      { name: 'CPU-bound at 90%', values: variants.map(() => 90) },
    ),
  );
  return {
    id: 'network',
    title: 'Network throughput and bounds',
    question: 'How many bytes per second does each class deliver, and what limits it: CPU, network, or the clients?',
    findings,
    tables: [
      {
        title: 'Throughput per class',
        head: ['variant', 'class', 'workload (clients that ran)', 'transmit Gbps', 'receive Gbps', 'limit Gbps', 'server CPU%', 'client CPU%', 'bound'],
        rows,
        numeric: [3, 4, 5, 6, 7],
        notes,
      },
    ],
    charts: [],
    answer: { lines: boundLines(results), tables: [], charts },
  };
}

/** The bound verdicts, one line per kind of bound: which points, and why (the first point's reason). */
function boundLines(results: readonly { g: StepGroup; bound: BoundResult }[]): string[] {
  const kinds = uniqueInOrder(results.map((r) => r.bound.bound));
  return kinds.map((k) => {
    const of = results.filter((r) => r.bound.bound === k);
    const points = of.map((r) => `${r.g.variant} ${r.g.workload}`).join(', ');
    return `${k === 'none' ? 'No limit reached' : `${k[0]!.toUpperCase()}${k.slice(1)}-bound`} (${of.length} of ${results.length} points: ${points}): ${of[0]!.bound.reason}.`;
  });
}

// ---------------------------------------------------------------------------------------------
// Rate sweep (S5)

const OVERLOAD_COLOR = '#ff7f0e';

/** The spread of a step's measured repeats, e.g. "1,980–2,010" (or the interval half-width for one run). */
function spreadText(ctx: Context, g: StepGroup, metric: Metric, digits = 0): string {
  const values = g.ok.map((r) => r[metric]).filter((v): v is number => v !== null);
  if (values.length >= 2) return `${num(Math.min(...values), digits)}–${num(Math.max(...values), digits)}`;
  const e = estimate(ctx, g, metric);
  return e.ci !== null && Number.isFinite(e.ci.halfWidth) ? `±${num(e.ci.halfWidth, digits)} (within run)` : '-';
}

/** A point's status over its repeats: "ok", "overloaded 2/2", "skipped 1/2, failed 1/2"... */
function pointStatus(g: StepGroup): string {
  const n = g.rows.length;
  const failed = g.rows.filter((r) => r.status === 'failed').length;
  const parts: string[] = [];
  if (g.overloaded.length > 0) parts.push(`overloaded ${g.overloaded.length}/${n}`);
  if (g.skipped.length > 0) parts.push(`skipped ${g.skipped.length}/${n}`);
  if (failed > 0) parts.push(`failed ${failed}/${n}`);
  return parts.join(', ') || 'ok';
}

function rateSweeps(ctx: Context): { key: string; label: string; groups: StepGroup[] }[] {
  const keyOf = (g: StepGroup): string => `${g.workload}\u0000${g.threads}\u0000${g.target}`;
  return uniqueInOrder(ctx.groups.map(keyOf))
    .filter((k) => uniqueInOrder(ctx.groups.filter((g) => keyOf(g) === k && g.rate > 0).map((g) => g.stepId)).length >= 2)
    .map((key) => {
      const groups = ctx.groups.filter((g) => keyOf(g) === key);
      const first = groups[0]!;
      return { key, label: `${first.workload} (${first.threads} threads${first.target !== 'writer' ? `, ${first.target}` : ''})`, groups };
    });
}

/** @internal exported for its tests (a test seam) */
export function rateSection(ctx: Context): ReportSection | null {
  const sweeps = rateSweeps(ctx);
  if (sweeps.length === 0) return null;
  const findings: string[] = [];
  const rows: string[][] = [];
  const pointRows: string[][] = [];
  const charts: ChartBlock[] = [];
  const anyOverloaded = sweeps.some((sw) => sw.groups.some((g) => g.overloaded.length > 0));
  const anySkipped = sweeps.some((sw) => sw.groups.some((g) => g.skipped.length > 0));
  sweeps.forEach(({ label, groups }, i) => {
    const first = groups[0]!;
    const achieved: XYSeries[] = [];
    const latency: XYSeries[] = [];
    const capacityLines: { value: number; label: string }[] = [];
    const offeredAll: number[] = [];
    const latAll: number[] = [];
    for (const v of ctx.variants) {
      const vg = groups.filter((g) => g.variant === v.name && g.rate > 0).sort((a, b) => a.offered - b.offered);
      if (vg.length === 0) continue;
      // Skipped points were never offered: they are listed, not drawn.
      const tried = vg.filter((g) => g.skipped.length < g.rows.length);
      const points = tried.map((g) => ({
        offered: g.offered,
        achieved: estimate(ctx, g, 'tps').value,
        p99Ms: estimate(ctx, g, 'lat_pct_ms').value,
        overloaded: g.overloaded.length > 0,
        g,
      }));
      offeredAll.push(...points.map((p) => p.offered));
      latAll.push(...points.map((p) => p.p99Ms ?? 0));
      const knee = findKnee(points);
      const unlimited = groups.find((g) => g.variant === v.name && g.rate === 0 && g.ok.length > 0);
      const maxTps = unlimited ? estimate(ctx, unlimited, 'tps').value : null;
      if (maxTps !== null) capacityLines.push({ value: maxTps, label: `${v.name} unlimited-rate ${num(maxTps, 0)}/s` });
      // A client that saturated its CPU cannot offer the rate asked of it: from there on the curve
      // describes the client, and a knee at or after that point may be the client's, not the server's.
      const clientBound = points.filter((p) => p.g.ok.some((r) => r.saturated_clients > 0)).map((p) => p.offered);
      const kneeMayBeClients = clientBound.length > 0 && (knee.saturatedAtOffered === null || clientBound[0]! <= knee.saturatedAtOffered);
      rows.push([
        label,
        v.name,
        knee.kneeOffered !== null ? num(knee.kneeOffered, 0) : '-',
        knee.saturatedAtOffered !== null ? `${num(knee.saturatedAtOffered, 0)} (${knee.reason})` : 'not reached',
        fixed(knee.capacity, 0),
        maxTps !== null ? fixed(maxTps, 0) : '-',
        clientBound.length > 0 ? `${clientBound.map((o) => num(o, 0)).join(', ')} (client-bound)` : '-',
      ]);
      findings.push(
        `${label}, ${v.name}: ${knee.summary}` +
          (maxTps !== null ? ` Unlimited-rate capacity ${num(maxTps, 0)}/s.` : '') +
          (kneeMayBeClients ? ` The client saturated its CPU from ${num(clientBound[0], 0)}/s offered: the knee may be the client's, not the server's.` : ''),
      );
      for (const g of vg) {
        const e = estimate(ctx, g, 'tps');
        pointRows.push([
          label,
          v.name,
          num(g.offered, 0),
          e.value !== null ? num(e.value, 0) : '-',
          spreadText(ctx, g, 'tps'),
          e.value !== null && g.offered > 0 ? pct(e.value / g.offered, 0) : '-',
          fixed(estimate(ctx, g, 'lat_pct_ms').value, 1),
          pointStatus(g),
        ]);
      }
      const failed = points.filter((p) => p.g.rows.some(significantErrors));
      const measured = points.filter((p) => !p.overloaded);
      const overloaded = points.filter((p) => p.overloaded && p.achieved !== null);
      achieved.push({
        name: v.name,
        points: measured.map((p) => [p.offered, p.achieved] as const),
        errorPoints: failed.filter((p) => p.achieved !== null).map((p) => [p.offered, p.achieved!] as const),
        marks: [{ label: 'overloaded (drawn at achieved)', symbol: 'diamond', color: OVERLOAD_COLOR, points: overloaded.map((p) => [p.offered, p.achieved!] as const) }],
      });
      latency.push({
        name: v.name,
        points: measured.map((p) => [p.offered, p.p99Ms] as const),
        marks: [
          {
            label: 'overloaded (worst interval before the abort)',
            symbol: 'diamond',
            color: OVERLOAD_COLOR,
            points: overloaded.filter((p) => p.p99Ms !== null && p.p99Ms > 0).map((p) => [p.offered, p.p99Ms!] as const),
          },
        ],
      });
    }
    const lo = Math.min(...offeredAll);
    const hi = Math.max(...offeredAll);
    achieved.push({
      name: 'ideal (achieved = offered)',
      points: [
        [lo, lo],
        [hi, hi],
      ],
      dashed: true,
    });
    const logX = spansDecades(offeredAll);
    charts.push(
      lineChart(`rate-achieved-${i}`, `${label}: achieved vs offered TPS`, 'offered TPS', 'achieved TPS', achieved, {
        logX,
        logY: logX,
        logBase: 10,
        hLines: capacityLines,
      }),
    );
    charts.push(
      lineChart(`rate-latency-${i}`, `${label}: p${first.latPct} latency vs offered TPS`, 'offered TPS', `p${first.latPct} ms`, latency, {
        logX,
        logY: spansDecades(latAll),
        logBase: 10,
      }),
    );
  });
  const pointNotes = [
    'Spread: lowest–highest achieved over the repeats (or the within-run interval when one repeat measured).',
    `Overloaded: sysbench's event queue filled (offered > capacity; sysbench 1.0.20 stops a --rate run when 131,072 events wait): achieved is the mean of the intervals before it stopped and p${sweeps[0]!.groups[0]!.latPct} the worst of them (queue time included). A measurement, not a failure.`,
  ];
  if (anySkipped) pointNotes.push('Skipped: not run because a lower rate already overloaded (stopAtOverload), or no capacity was measured for a rate relative to it.');
  return {
    id: 'rate',
    title: 'Rate sweep: offered vs achieved',
    question: 'Up to which offered rate does each variant keep up, and what is its capacity?',
    findings,
    tables: [
      {
        title: 'Saturation knee',
        head: ['sweep', 'variant', 'knee (offered/s)', 'saturated at', 'capacity (max achieved)', 'unlimited-rate TPS', 'client saturated at (offered/s)'],
        rows,
        numeric: [2, 4, 5],
        notes: [
          `Knee: the last offered rate where achieved >= 95% of offered (relative to the lowest rate's efficiency), its tail latency <= 3x its value at the lowest rate or under ${DEFAULT_LATENCY_FLOOR_MS} ms (an absolute floor: 3x a sub-millisecond baseline is noise), and the step not overloaded.`,
          'Client-bound: a client saturated its CPU at that offered rate; its numbers describe the client, not the server.',
        ],
      },
      {
        title: 'Points',
        head: ['sweep', 'variant', 'offered/s', 'achieved/s', 'spread', 'achieved/offered', `p${sweeps[0]!.groups[0]!.latPct} ms`, 'status'],
        rows: pointRows,
        numeric: [2, 3, 4, 5, 6],
        notes: anyOverloaded || anySkipped ? pointNotes : pointNotes.slice(0, 1),
      },
    ],
    charts: [],
    answer: { lines: findings, tables: [], charts },
  };
}

// ---------------------------------------------------------------------------------------------
// Failures

function failuresSection(ctx: Context): ReportSection | null {
  const failed = ctx.data.steps.filter((s) => s.status === 'failed');
  if (failed.length === 0) return null;
  return {
    id: 'failures',
    title: 'Failed steps',
    question: 'What did not run, and why?',
    findings: [`${failed.length} step${failed.length === 1 ? '' : 's'} failed; their metrics are left out of means and shown as errors in the charts.`],
    tables: [
      {
        title: 'Failed steps',
        head: ['variant', 'repeat', 'step', 'clients ok', 'kind', 'error'],
        rows: failed.map((s) => [s.variant, String(s.repeat), s.step_id, `${s.ok_clients}/${s.clients}`, errorKind(s.error), clip(s.error, 90)]),
        numeric: [1],
      },
    ],
    charts: [],
    appendix: true,
  };
}

/** Every section that applies to the run, in reading order. */
export function buildSections(ctx: Context): ReportSection[] {
  return [
    abSection(ctx),
    priceSection(ctx),
    sweepSection(ctx),
    forwardingSection(ctx),
    networkSection(ctx),
    rateSection(ctx),
    latencySection(ctx),
    serverMetricsSection(ctx),
    ...auroraChoicesSections(ctx, ctx.data.auroraUsage),
    failuresSection(ctx),
    verdictsSection(ctx),
  ].filter((s): s is ReportSection => s !== null);
}
