/**
 * A run's steps grouped across repeats, and their estimates with the interval around them: what
 * every study analysis (core/report/studies/) starts from.
 */
import { variantStyles, type VariantStyles } from './charts';
import type { StepResult } from '../lake/results';
import type { PriceTable } from '../plan/cost';
import type { EngineRef } from '../aurora/engines';
import { num } from '../format';
import { stepKey, type RunData } from './load';
import { coversOf, ratioFinding, weakest, type Covers, type Estimated, type RatioFinding } from './findings';
import {
  batchMeans,
  mean,
  meanCi,
  sampleStddev,
  summarize,
  welchRatioCi,
  type ConfidenceInterval,
  type Sample,
} from './stats';

export interface StepGroup {
  readonly variant: string;
  readonly stepId: string;
  readonly workload: string;
  readonly test: string;
  readonly threads: number;
  readonly rate: number;
  /**
   * Offered transactions/s (all clients) when every repeat offered the same; null when they differ
   * (rates relative to each repeat's measured capacity): then each repeat's own offered_tps is the
   * rate it was offered, and no mean of them was ever offered.
   */
  readonly offered: number | null;
  /** The multiple of the cell's measured capacity this step offered (ratesOfCapacity); null for an absolute rate. */
  readonly rateOfCapacity: number | null;
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

export type Metric = 'tps' | 'qps' | 'lat_pct_ms' | 'lat_avg_ms';

export interface Estimate extends Estimated {
  readonly ci: ConfidenceInterval | null;
  /** What the ratio intervals use: per-repeat values, or batch means of one run's intervals. */
  readonly sample: Sample | null;
  readonly source: 'repeats' | 'intervals' | 'single' | 'none';
  readonly covers: Covers;
}

export interface VariantInfo {
  readonly name: string;
  /** The variant's engine (its own, or the spec's); null when the run has no spec. */
  readonly engine: EngineRef | null;
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
  /** Each variant's chart colour and marker, from the spec's variant order: the same in every chart. */
  readonly styles: VariantStyles;
  /**
   * Client-bound repeats left out of the estimates (ratios, scores, price-performance); empty when asked to keep them.
   */
  readonly leftOutSaturated: readonly StepResult[];
}

export interface ContextOptions {
  /**
   * Keep repeats whose client was CPU-saturated in the estimates
   * (by default they are left out, and the report says so).
   */
  readonly includeSaturated?: boolean;
}

/**
 * A repeat whose client saturated its CPU measures the client, not the server: it is left out of
 * `ok` (what estimates, ratios and scores use) unless asked. Rate-sweep points (rate > 0) keep
 * theirs: the rate section draws the whole curve and marks the client-bound points on it.
 */
function measuredOk(rows: readonly StepResult[], includeSaturated: boolean): StepResult[] {
  return rows.filter(
    (r) =>
      (r.status === 'ok' || r.status === 'overloaded') &&
      r.tps !== null &&
      (includeSaturated || r.rate > 0 || r.saturated_clients === 0),
  );
}

/** The plan's rateOfCapacity of a step (the same in every cell of a variant's plan). */
function rateOfCapacityOf(data: RunData, stepId: string): number | null {
  for (const c of data.plan?.cells ?? []) {
    const s = c.steps.find((x) => x.stepId === stepId);
    if (s !== undefined) return s.rateOfCapacity ?? null;
  }
  const m = /-c(\d+)$/.exec(stepId);
  return m !== null ? Number(m[1]) / 100 : null;
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
      offered: new Set(rows.map((r) => r.offered_tps)).size === 1 ? first.offered_tps : null,
      rateOfCapacity: rateOfCapacityOf(data, first.step_id),
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
    engine: v.engine ?? data.spec!.engine,
    instanceClass: v.instanceClass,
    az: v.az ?? null,
    readers: v.readers,
    writeForwarding: v.writeForwarding?.enabled === true,
  }));
  const seen = new Set(fromSpec.map((v) => v.name));
  for (const g of groups) {
    if (seen.has(g.variant)) continue;
    seen.add(g.variant);
    fromSpec.push({
      name: g.variant,
      engine: null,
      instanceClass: g.instanceClass,
      az: g.az,
      readers: 0,
      writeForwarding: false,
    });
  }
  // Only variants that have rows in this run.
  const present = new Set(groups.map((g) => g.variant));
  return fromSpec.filter((v) => present.has(v.name));
}

export function makeContext(data: RunData, prices: PriceTable, options: ContextOptions = {}): Context {
  const groups = groupSteps(data, options);
  const leftOutSaturated =
    options.includeSaturated === true
      ? []
      : data.steps.filter((s) => s.status === 'ok' && s.tps !== null && s.rate === 0 && s.saturated_clients > 0);
  const styles = variantStyles([...(data.spec?.variants ?? []).map((v) => v.name), ...groups.map((g) => g.variant)]);
  return { data, prices, groups, variants: variantInfos(data, groups), styles, leftOutSaturated };
}

const INTERVAL_FIELD: Partial<Record<Metric, 'tps' | 'qps' | 'lat_pct_ms'>> = {
  tps: 'tps',
  qps: 'qps',
  lat_pct_ms: 'lat_pct_ms',
};

/**
 * A metric of a step across repeats. With two or more successful repeats the interval comes from
 * them (run-to-run noise, the one that matters for a comparison); with one, from batch means of
 * that run's per-interval samples (within-run noise only, and said so).
 */
export function estimate(ctx: Context, g: StepGroup, metric: Metric): Estimate {
  const values = g.ok.map((r) => r[metric]).filter((v): v is number => v !== null);
  if (values.length >= 2) {
    const ci = meanCi(values);
    return {
      value: mean(values),
      ci,
      interval: coversOf(ci, 'run-to-run'),
      sample: summarize(values),
      source: 'repeats',
      covers: 'run-to-run',
    };
  }
  if (values.length === 1) {
    const field = INTERVAL_FIELD[metric];
    const series = field
      ? (ctx.data.intervals.get(stepKey(g.ok[0]!.cell_id, g.stepId)) ?? []).map((i) => i[field])
      : [];
    const batches = batchMeans(series, 10);
    if (batches.length >= 2) {
      const b = meanCi(batches);
      const ci = { ...b, estimate: values[0]!, low: values[0]! - b.halfWidth, high: values[0]! + b.halfWidth };
      return {
        value: values[0]!,
        ci,
        interval: coversOf(ci, 'within-run'),
        sample: summarize(batches),
        source: 'intervals',
        covers: 'within-run',
      };
    }
    return { value: values[0]!, ci: null, interval: null, sample: null, source: 'single', covers: 'none' };
  }
  return { value: null, ci: null, interval: null, sample: null, source: 'none', covers: 'none' };
}

export function sourceLabel(g: StepGroup, e: Estimate): string {
  const failed = g.rows.filter((r) => r.status === 'failed').length;
  const base =
    e.source === 'repeats'
      ? `${g.ok.length} repeats`
      : e.source === 'intervals'
        ? '1 run, interval batches'
        : e.source === 'single'
          ? '1 run'
          : 'no result';
  return failed > 0 ? `${base}, ${failed} failed` : base;
}

/**
 * The ratio a/b of two estimates, with a Welch interval on the log scale covering what both sides' samples cover.
 * The ratio is of the values shown beside it: one run's value is its events over its total time, which its
 * batch means need not average to, so the samples' spread is kept and their means replaced by those values.
 */
export function ratioOf(a: Estimate, b: Estimate): RatioFinding {
  if (a.sample && b.sample) {
    const shown = (e: Estimate, s: Sample): Sample => (e.value !== null ? { ...s, mean: e.value } : s);
    return ratioFinding(welchRatioCi(shown(a, a.sample), shown(b, b.sample)), weakest(a.covers, b.covers));
  }
  const est = a.value !== null && b.value !== null && b.value !== 0 ? a.value / b.value : null;
  return { estimate: est, interval: null, direction: 'unknown' };
}

/** Run-to-run and within-run variation of TPS, as coefficients of variation. */
export function noiseText(ctx: Context, g: StepGroup): string {
  const tps = g.ok.map((r) => r.tps!).filter((v) => v > 0);
  const between = tps.length >= 2 ? sampleStddev(tps) / mean(tps) : null;
  const within = g.ok
    .map((r) => (ctx.data.intervals.get(stepKey(r.cell_id, g.stepId)) ?? []).map((i) => i.tps))
    .map((series) => batchMeans(series, 10))
    .filter((b) => b.length >= 2 && mean(b) > 0)
    .map((b) => sampleStddev(b) / mean(b));
  const parts: string[] = [];
  if (between !== null) parts.push(`runs ${(between * 100).toFixed(1)}%`);
  if (within.length > 0) parts.push(`within ${(mean(within) * 100).toFixed(1)}%`);
  return parts.join(', ') || '-';
}

/**
 * "@5,000/s", or "@0.5x unlimited-rate TPS" when the repeats were offered different rates (ratesOfCapacity):
 * the multiple is of the unlimited-rate step's TPS, not of the capacity the rate sweep reports (the highest
 * rate achieved), so the label names it.
 */
function offeredLabel(g: StepGroup): string {
  if (g.rateOfCapacity !== null) return `@${g.rateOfCapacity}x unlimited-rate TPS`;
  return g.rate > 0 && g.offered !== null ? `@${num(g.offered, 0)}/s` : '';
}

/** A rate sweep's key: one workload at one thread count against one target, over the rates offered. */
export const sweepKeyOf = (g: StepGroup): string => `${g.workload}\u0000${g.threads}\u0000${g.target}`;

/** The keys with at least two rate steps: the rate section draws each as a curve of its own. */
export function rateSweepKeys(groups: readonly StepGroup[]): string[] {
  const rated = (g: StepGroup): boolean => g.rate > 0 || g.rateOfCapacity !== null;
  return uniqueInOrder(groups.map(sweepKeyOf)).filter(
    (k) => uniqueInOrder(groups.filter((g) => sweepKeyOf(g) === k && rated(g)).map((g) => g.stepId)).length >= 2,
  );
}

export const stepLabel = (g: StepGroup): string =>
  `${g.workload} ` +
  `t${g.threads}` +
  (g.rate > 0 || g.rateOfCapacity !== null ? ` ${offeredLabel(g)}` : '') +
  (g.target !== 'writer' ? ` → ${g.target}` : '');

/** The repeats of a step whose client saturated its CPU (they measure the client, not the server). */
const clientBoundRows = (g: StepGroup): StepResult[] =>
  g.rows.filter((r) => (r.status === 'ok' || r.status === 'overloaded') && r.saturated_clients > 0);

/**
 * " [client-bound 1/3, left out]" next to a step in a table:
 * shown in every section, not just the network and rate ones.
 */
export function clientBoundMark(ctx: Context, g: StepGroup): string {
  const n = clientBoundRows(g).length;
  if (n === 0) return '';
  const leftOut = ctx.leftOutSaturated.some((r) => r.variant === g.variant && r.step_id === g.stepId);
  return ` [client-bound ${n}/${g.rows.length}${leftOut ? ', left out' : ''}]`;
}

/**
 * The finding that names a section's client-bound steps, and whether their repeats were left out of
 * its estimates and ratios (the default) or kept (--include-saturated); null when none was.
 */
export function clientBoundFinding(ctx: Context, groups: readonly StepGroup[]): string | null {
  const bound = groups.filter((g) => clientBoundRows(g).length > 0);
  if (bound.length === 0) return null;
  const listed = bound
    .map((g) => `${g.variant} ${stepLabel(g)} (${clientBoundRows(g).length} of ${g.rows.length} repeats)`)
    .join(', ');
  const leftOut = bound.some((g) =>
    ctx.leftOutSaturated.some((r) => r.variant === g.variant && r.step_id === g.stepId),
  );
  return `Client-bound: ${listed}: the client saturated its CPU, so those repeats measure the client, not the server${
    leftOut
      ? '; they are left out of the estimates and ratios here (aurora-bench report --include-saturated keeps them)'
      : '; they are kept in the estimates here (--include-saturated)'
  }.`;
}
export const comparableKey = (g: StepGroup): string =>
  `${g.workload}\u0000${g.threads}\u0000${g.rate}\u0000${g.target}`;

export function uniqueInOrder<T>(xs: readonly T[]): T[] {
  return [...new Set(xs)];
}

/**
 * sysbench counts deadlocks and lock-wait timeouts as errors:
 * below this share of transactions they are normal OLTP behaviour.
 */
export const SIGNIFICANT_ERROR_SHARE = 0.001;

/** A failed step, a reconnect, or errors above SIGNIFICANT_ERROR_SHARE of the step's transactions. */
export function significantErrors(r: StepResult): boolean {
  if (r.status === 'overloaded' || r.status === 'skipped') return false;
  if (r.status !== 'ok' || r.reconnects > 0) return true;
  const events = r.events ?? 0;
  return r.errors > 0 && (events === 0 || r.errors / events > SIGNIFICANT_ERROR_SHARE);
}

/** A workload with this many thread counts is a sweep (S3's 32/64/128 per target is a comparison, not a sweep). */
export const MIN_SWEEP_THREADS = 4;

/**
 * Steps that are points of a thread sweep (MIN_SWEEP_THREADS+ thread counts) or a rate sweep (2+ offered rates):
 * their comparison is the sweep's charts, score and knee, not an A/B row per point.
 */
export function inSweep(ctx: Context, g: StepGroup): boolean {
  const threads = new Set(
    ctx.groups
      .filter((x) => x.workload === g.workload && x.rate === g.rate && x.target === g.target)
      .map((x) => x.threads),
  );
  const rates = new Set(
    ctx.groups
      .filter((x) => x.workload === g.workload && x.threads === g.threads && x.target === g.target && x.rate > 0)
      .map((x) => x.rate),
  );
  return threads.size >= MIN_SWEEP_THREADS || rates.size >= 2;
}

/**
 * A study built around data transfer (S4's full-table SELECT *): a scan-type custom workload or a
 * workload named for the network. Its transactions are scans: no A/B of TPS, no transactions per dollar.
 */
export function isNetworkStudy(ctx: Context): boolean {
  return (
    ctx.data.spec?.workloads.some(
      (w) => (w.script !== undefined && /scan/i.test(w.script)) || /scan|network/i.test(w.name),
    ) ?? false
  );
}

/** The order the run's cells ran in (the plan's; the spec's for a plan that did not record it). */
export function runOrder(ctx: Context): { order: string; seed: number | null } {
  return {
    order: ctx.data.plan?.order ?? ctx.data.spec?.order ?? 'interleaved',
    seed: ctx.data.plan?.orderSeed ?? ctx.data.spec?.orderSeed ?? null,
  };
}

/** Other runs shared this machine during the run: its manifest has a note of path "host" (core/cli/run-local.ts). */
export function hadCoTenants(ctx: Context): boolean {
  try {
    const notes = JSON.parse(ctx.data.run.notes || '[]') as { path?: string }[];
    return notes.some((n) => n.path === 'host');
  } catch {
    return false;
  }
}
