/**
 * `aurora-bench compare RUN_A RUN_B`, as a pure function of lake rows.
 * Every step both runs ran gets each metric as B/A, with an interval and a verdict.
 *
 * The interval comes from the repeats when both runs have two or more. That is the noise that matters between runs.
 * Otherwise it comes from each run's per-interval samples, which only show noise within a run.
 * Those samples are autocorrelated, so they enter as batch means.
 * See Law and Kelton, Simulation Modeling and Analysis, on the method of batch means.
 * An interval entirely off 100% is a change, judged by the metric's direction.
 * Errors compare as a difference of errors/s, since their mean is often 0.
 * They count only above NORMAL_ERROR_SHARE of the throughput.
 * A failed or client-bound step in either run is shown and not judged.
 */
import {
  batchMeans,
  mean,
  ratioVerdict,
  summarize,
  welchDifferenceCi,
  welchRatioCi,
  type Sample,
} from '../report/stats';
import { measuredSteps, measurementDifferences } from './measurement';
import {
  directedVerdict,
  metricLabel,
  metricValue,
  notJudgedReason,
  NORMAL_ERROR_SHARE,
  REGRESSION_METRICS,
  stepKeyLabel,
  stepKeyText,
  type RegressionMetric,
  type StepKey,
  type StepRow,
  type Verdict,
} from './metrics';

/** Per-interval totals of one step of one cell, in time order. */
export interface IntervalSample {
  readonly tps: number;
  readonly qps: number;
  readonly lat_pct_ms: number;
  readonly errors_per_s: number;
}

interface CompareRunInfo {
  readonly run_id: string;
  readonly spec_name: string;
  readonly started_at: string;
  readonly status: string;
  readonly backend: string;
  readonly plan: string | null;
}

/** One value of the configuration a run's cells ran with. */
export interface ConfigValue {
  readonly variant: string;
  readonly name: string;
  readonly value: string | null;
}

export interface CompareSide {
  readonly run: CompareRunInfo;
  /** What the servers ran with, read at prepare. Empty for older runs. */
  readonly config?: readonly ConfigValue[];
  readonly steps: readonly StepRow[];
  /** Keyed `${cell_id}/${step_id}`. */
  readonly intervals: ReadonlyMap<string, readonly IntervalSample[]>;
}

export interface CompareOptions {
  /** Batches per run for the batch means of per-interval samples. Default 10. */
  readonly batches?: number;
  /**
   * Confidence level of every interval. Default 0.95.
   * At 0.95 two runs of one configuration differ by chance once in twenty per metric.
   * tps and qps move together, so that is nearly once in ten per step.
   * A CI gate over many steps asks for 0.99 or 0.999.
   */
  readonly level?: number;
}

/** The levels `compare --level` accepts. An interval must have some width and not be infinite. */
export const COMPARE_LEVEL_RANGE = { min: 0.5, max: 0.9999 } as const;

type IntervalSource = 'repeats' | 'intervals' | 'none';

export interface ComparedMetric {
  readonly metric: RegressionMetric;
  readonly label: string;
  readonly higherIsBetter: boolean;
  /** The step's value in each run, the mean over its repeats. */
  readonly a: number | null;
  readonly b: number | null;
  /**
   * B/A with its interval at the comparison's level. Bounds are NaN when unknown, and it is null when A is 0 or
   * missing.
   */
  readonly ratio: { readonly estimate: number; readonly low: number; readonly high: number } | null;
  /** B − A with its interval, for errors/s. */
  readonly difference: { readonly estimate: number; readonly low: number; readonly high: number } | null;
  readonly source: IntervalSource;
  readonly verdict: Verdict;
}

/** A step's latency distribution in ms, the mean over its repeats. */
type LatencyDistribution = readonly [number, number, number, number, number, number];

interface ComparedStep {
  readonly key: StepKey;
  /** The distribution in each run. Null for a run without a histogram. */
  readonly latency: { readonly a: LatencyDistribution | null; readonly b: LatencyDistribution | null };
  readonly label: string;
  readonly repeats: { readonly a: number; readonly b: number };
  readonly judged: boolean;
  /** Why it was not judged, or what to keep in mind. */
  readonly notes: readonly string[];
  readonly metrics: readonly ComparedMetric[];
}

/**
 * A configuration value that differs between the runs, for a variant both ran.
 * @internal Exported for its tests.
 */
export interface ConfigDifference {
  readonly variant: string;
  readonly name: string;
  /** The distinct values over the run's cells, joined by " | ". "" means the server did not report it. */
  readonly a: string;
  readonly b: string;
}

export interface Comparison {
  /** The confidence level of every interval. */
  readonly level: number;
  readonly a: CompareRunInfo;
  readonly configDifferences: readonly ConfigDifference[];
  readonly b: CompareRunInfo;
  readonly steps: readonly ComparedStep[];
  readonly onlyInA: readonly string[];
  readonly onlyInB: readonly string[];
  readonly regressions: number;
  readonly improvements: number;
  /**
   * Metrics judged with an interval, and how many would be called changed by chance alone.
   * Each falls outside its interval with probability 1 − level, so m(1 − level) are expected.
   * See Benjamini and Hochberg, "Controlling the false discovery rate", JRSS B 1995, section 1.
   * tps and qps move together, so the calls come in pairs more often than for independent metrics.
   */
  readonly judgedMetrics: number;
  readonly expectedFalseCalls: number;
  /** Both sides are the same run, so every verdict is "no change". */
  readonly sameRun: boolean;
  readonly notes: readonly string[];
}

const INTERVAL_FIELD: Readonly<Record<RegressionMetric, keyof IntervalSample>> = {
  tps: 'tps',
  qps: 'qps',
  latency: 'lat_pct_ms',
  errors: 'errors_per_s',
};

/** The mean over the repeats. Null when any repeat lacks it. */
function latencyDistribution(rows: readonly StepRow[]): LatencyDistribution | null {
  const per = rows.map((r) => [r.lat_p50_ms, r.lat_p90_ms, r.lat_p95_ms, r.lat_p99_ms, r.lat_p999_ms, r.lat_max_ms]);
  if (per.length === 0 || per.some((p) => p.some((v) => v === null || v === undefined))) return null;
  const at = (i: number): number => mean(per.map((p) => p[i]!));
  return [at(0), at(1), at(2), at(3), at(4), at(5)];
}

function groupByKey(rows: readonly StepRow[]): Map<string, StepRow[]> {
  const out = new Map<string, StepRow[]>();
  for (const r of rows) {
    const k = stepKeyText(r);
    out.set(k, [...(out.get(k) ?? []), r]);
  }
  return out;
}

function valuesOf(rows: readonly StepRow[], metric: RegressionMetric): number[] {
  return rows.map((r) => metricValue(r, metric)).filter((v): v is number => v !== null && Number.isFinite(v));
}

/** The pooled batch means of every repeat's per-interval samples. */
function intervalSample(
  side: CompareSide,
  rows: readonly StepRow[],
  metric: RegressionMetric,
  batches: number,
): Sample | null {
  const means = rows.flatMap((r) =>
    batchMeans(
      (side.intervals.get(`${r.cell_id}/${r.step_id}`) ?? []).map((i) => i[INTERVAL_FIELD[metric]]),
      batches,
    ),
  );
  return means.length >= 2 ? summarize(means) : null;
}

function compareMetric(
  metric: RegressionMetric,
  higherIsBetter: boolean,
  label: string,
  a: CompareSide,
  rowsA: StepRow[],
  b: CompareSide,
  rowsB: StepRow[],
  judged: boolean,
  batches: number,
  level: number,
): ComparedMetric {
  const va = valuesOf(rowsA, metric);
  const vb = valuesOf(rowsB, metric);
  const meanA = va.length > 0 ? mean(va) : null;
  const meanB = vb.length > 0 ? mean(vb) : null;
  const base = { metric, label, higherIsBetter, a: meanA, b: meanB };
  const pointRatio = meanA !== null && meanB !== null && meanA > 0 ? meanB / meanA : null;
  if (!judged || meanA === null || meanB === null) {
    return {
      ...base,
      ratio: pointRatio === null ? null : { estimate: pointRatio, low: Number.NaN, high: Number.NaN },
      difference: null,
      source: 'none',
      verdict: 'not-judged',
    };
  }
  let source: IntervalSource = 'none';
  let sa: Sample | null;
  let sb: Sample | null;
  if (va.length >= 2 && vb.length >= 2) {
    source = 'repeats';
    sa = summarize(va);
    sb = summarize(vb);
  } else {
    sa = intervalSample(a, rowsA, metric, batches);
    sb = intervalSample(b, rowsB, metric, batches);
    if (sa && sb) source = 'intervals';
  }
  if (metric === 'errors') {
    if (!sa || !sb)
      return {
        ...base,
        ratio: null,
        difference: { estimate: meanB - meanA, low: Number.NaN, high: Number.NaN },
        source: 'none',
        verdict: 'unknown',
      };
    const ci = welchDifferenceCi(sb, sa, level);
    // Centred on the step values. The samples only give the width.
    const shift = meanB - meanA - ci.estimate;
    const difference = { estimate: meanB - meanA, low: ci.low + shift, high: ci.high + shift };
    const tpsA = valuesOf(rowsA, 'tps');
    const floor = NORMAL_ERROR_SHARE * (tpsA.length > 0 ? mean(tpsA) : 0);
    const position = !Number.isFinite(difference.low)
      ? 'unknown'
      : difference.low > 0 && difference.estimate > floor
        ? 'above'
        : difference.high < 0 && -difference.estimate > floor
          ? 'below'
          : 'inside';
    return {
      ...base,
      ratio: pointRatio === null ? null : { estimate: pointRatio, low: Number.NaN, high: Number.NaN },
      difference,
      source,
      verdict: directedVerdict(position, higherIsBetter),
    };
  }
  if (!sa || !sb || pointRatio === null) {
    return {
      ...base,
      ratio: pointRatio === null ? null : { estimate: pointRatio, low: Number.NaN, high: Number.NaN },
      difference: null,
      source: 'none',
      verdict: 'unknown',
    };
  }
  const ci = welchRatioCi(sb, sa, level);
  // A step's pNN is not the mean of its per-interval pNN.
  // So keep the interval's relative width around the ratio of the step values, as the report does.
  const scale = pointRatio / ci.estimate;
  const ratio = { estimate: pointRatio, low: ci.low * scale, high: ci.high * scale };
  const v = ratioVerdict({ ...ci, ...ratio });
  const position = v === 'higher' ? 'above' : v === 'lower' ? 'below' : v === 'within-noise' ? 'inside' : 'unknown';
  return { ...base, ratio, difference: null, source, verdict: directedVerdict(position, higherIsBetter) };
}

function configValues(side: CompareSide): Map<string, string> {
  const values = new Map<string, Set<string>>();
  for (const c of side.config ?? []) {
    const key = `${c.variant}\u0000${c.name}`;
    values.set(key, (values.get(key) ?? new Set()).add(c.value ?? ''));
  }
  return new Map([...values].map(([k, v]) => [k, [...v].sort().join(' | ')]));
}

/**
 * Values that differ between two runs' configurations, for the variants both recorded.
 * @internal Exported for its tests.
 */
export function configDifferences(a: CompareSide, b: CompareSide): ConfigDifference[] {
  const va = configValues(a);
  const vb = configValues(b);
  const variantsA = new Set((a.config ?? []).map((c) => c.variant));
  const variantsB = new Set((b.config ?? []).map((c) => c.variant));
  const out: ConfigDifference[] = [];
  for (const key of [...new Set([...va.keys(), ...vb.keys()])].sort()) {
    const [variant, name] = key.split('\u0000') as [string, string];
    if (!variantsA.has(variant) || !variantsB.has(variant)) continue;
    const x = va.get(key) ?? '';
    const y = vb.get(key) ?? '';
    if (x !== y) out.push({ variant, name, a: x, b: y });
  }
  return out;
}

export function compareRuns(a: CompareSide, b: CompareSide, options: CompareOptions = {}): Comparison {
  const batches = options.batches ?? 10;
  const level = options.level ?? 0.95;
  if (!(level >= COMPARE_LEVEL_RANGE.min && level <= COMPARE_LEVEL_RANGE.max))
    throw new RangeError(
      `confidence level ${level}: give one from ${COMPARE_LEVEL_RANGE.min} to ${COMPARE_LEVEL_RANGE.max}`,
    );
  const byA = groupByKey(a.steps);
  const byB = groupByKey(b.steps);
  const planA = measuredSteps(a.run.plan);
  const planB = measuredSteps(b.run.plan);
  const steps: ComparedStep[] = [];
  for (const [k, rowsA] of byA) {
    const rowsB = byB.get(k);
    if (!rowsB) continue;
    const key: StepKey = {
      variant: rowsA[0]!.variant,
      workload: rowsA[0]!.workload,
      threads: rowsA[0]!.threads,
      rate: rowsA[0]!.rate,
      target: rowsA[0]!.target,
    };
    const notes: string[] = [];
    for (const r of rowsA) {
      const why = notJudgedReason(r);
      if (why) notes.push(`A ${why}`);
    }
    for (const r of rowsB) {
      const why = notJudgedReason(r);
      if (why) notes.push(`B ${why}`);
    }
    const judged = notes.length === 0;
    const ma = planA.get(k);
    const mb = planB.get(k);
    if (ma && mb && ma.hash !== mb.hash)
      notes.push(`the measurement differs: ${measurementDifferences(ma.measurement, mb.measurement).join(', ')}`);
    const latencyPct = rowsA[0]!.lat_pct === rowsB[0]!.lat_pct ? rowsA[0]!.lat_pct : null;
    const metrics = REGRESSION_METRICS.map((info) =>
      compareMetric(
        info.metric,
        info.higherIsBetter,
        metricLabel(info.metric, latencyPct),
        a,
        rowsA,
        b,
        rowsB,
        judged,
        batches,
        level,
      ),
    );
    if (judged && metrics.some((m) => m.source === 'intervals'))
      notes.push(
        "interval from the runs' per-interval samples (batch means): noise within each run only, not between " +
          'runs; run two or more repeats for run-to-run noise',
      );
    const latency = { a: latencyDistribution(rowsA), b: latencyDistribution(rowsB) };
    steps.push({
      key,
      label: stepKeyLabel(key),
      repeats: { a: rowsA.length, b: rowsB.length },
      judged,
      notes,
      metrics,
      latency,
    });
  }
  const onlyInA = [...byA.keys()].filter((k) => !byB.has(k)).map((k) => stepKeyLabel(byA.get(k)![0]!));
  const onlyInB = [...byB.keys()].filter((k) => !byA.has(k)).map((k) => stepKeyLabel(byB.get(k)![0]!));
  const all = steps.flatMap((s) => s.metrics);
  const judgedMetrics = all.filter(
    (m) => m.verdict === 'within-noise' || m.verdict === 'improved' || m.verdict === 'regressed',
  ).length;
  const notes: string[] = [];
  const sameRun = a.run.run_id === b.run.run_id;
  if (sameRun)
    notes.push(
      `run ${a.run.run_id} is compared with itself: every step is the same measurement on both sides, so ` +
        `nothing can differ; give two different runs`,
    );
  if (a.run.spec_name !== b.run.spec_name)
    notes.push(
      `the runs are of different experiments (${a.run.spec_name}, ${b.run.spec_name}): steps are matched by ` +
        `variant, workload, threads, rate and target`,
    );
  if (a.run.backend !== b.run.backend)
    notes.push(`the runs are on different backends (${a.run.backend}, ${b.run.backend})`);
  const differences = configDifferences(a, b);
  if (differences.length > 0)
    notes.push(
      `the servers ran with ${differences.length} different configuration ` +
        `value${differences.length === 1 ? '' : 's'} (see the configuration table)`,
    );
  return {
    level,
    a: a.run,
    configDifferences: differences,
    b: b.run,
    steps,
    onlyInA,
    onlyInB,
    regressions: all.filter((m) => m.verdict === 'regressed').length,
    improvements: all.filter((m) => m.verdict === 'improved').length,
    judgedMetrics,
    expectedFalseCalls: judgedMetrics * (1 - level),
    sameRun,
    notes,
  };
}
