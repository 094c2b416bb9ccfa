/**
 * The history of an experiment, per step and metric, with its change points and the latest verdict.
 * It is a pure function of lake rows, so the CLI, a workflow Task or a test can call it.
 *
 * Each run is one point, the mean over the step's repeats whose numbers can be judged.
 * A failed or client-bound step is shown but left out of the series.
 *
 * The latest run is judged against the last stable segment.
 * That is the latest run's own segment when it has `minStableRuns` earlier runs, else the latest earlier one that has.
 * Runs since a recent change point are not yet a level to compare with.
 * The value is judged against the segment's prediction interval for one new observation.
 * mean ± t(1 - (1 - level)/2, n - 1) · s · sqrt(1 + 1/n)
 * See Hahn and Meeker, Statistical Intervals, Wiley 1991. The segment's runs are independent repeats.
 * Outside the interval the run regressed or improved, by the metric's direction.
 */
import { eDivisive, type EDivisiveStatistic } from './edivisive';
import { measuredSteps, measurementDifferences, type StepMeasurement } from './measurement';
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
import { seedFromText } from '../random';
import { levelPercent } from '../format';
import { mean, sampleStddev, studentTQuantile, summarize, welchDifferenceCi, welchRatioCi } from '../report/stats';

/** The fields of a runs row a history reads. */
export interface HistoryRunRow {
  readonly run_id: string;
  readonly started_at: string;
  readonly status: string;
  readonly backend: string;
  /** The run's plan as JSON. The measurement definition comes from it. */
  readonly plan: string | null;
}

export interface HistoryInput {
  readonly experiment: string;
  readonly runs: readonly HistoryRunRow[];
  readonly steps: readonly StepRow[];
  /** Earlier runs of the experiment that were not read, outside the window. */
  readonly runsNotRead?: number;
  /** Rehearsal runs that an AWS experiment's history left out. */
  readonly rehearsalsLeftOut?: readonly string[];
}

export interface HistoryOptions {
  /** Significance of a change point's permutation test. Default 0.01. */
  readonly significance?: number;
  /** Permutations per test. Default 199, so p <= 0.01 allows 2 exceedances or fewer. */
  readonly permutations?: number;
  /**
   * Default 'u-statistic-best-end', after Matteson and James and Otava's compute_change_points_orig.
   * It also finds a regression fixed a few runs later, which the to-end statistic misses.
   */
  readonly statistic?: EDivisiveStatistic;
  /**
   * Change points are searched in the last `window` runs of each series. Default 100 runs.
   * One test per series keeps the false-positive rate at the test's level.
   * 'all' searches the whole series, at a cost that grows with the square of its length.
   */
  readonly window?: number | 'all';
  /** Added to every series' seed, to see how much the p-values move with the permutations. Default 0. */
  readonly seed?: number;
  /** Level of the prediction interval the latest run is judged against. Default 0.99. */
  readonly predictionLevel?: number;
  /** Runs a segment needs to be a stable level to judge against. Default 3. */
  readonly minStableRuns?: number;
  /**
   * The smallest relative change a change point must show, |after mean / before mean - 1|.
   * This is Apache Otava's `--magnitude`, which also defaults to 0. See otava/main.py.
   * A smaller significant split is listed as a near-miss, not a change point.
   */
  readonly magnitude?: number;
  /**
   * A strongest rejected split with p above the significance but at most this is a near-miss.
   * It is listed, since another seed could decide such a borderline series the other way.
   * Default 0.05, and never below twice the significance.
   */
  readonly nearMissUpTo?: number;
}

export const HISTORY_DEFAULTS: Required<HistoryOptions> = {
  significance: 0.01,
  permutations: 199,
  statistic: 'u-statistic-best-end',
  window: 100,
  seed: 0,
  predictionLevel: 0.99,
  minStableRuns: 3,
  magnitude: 0,
  nearMissUpTo: 0.05,
};

interface HistoryPoint {
  readonly runId: string;
  readonly startedAt: string;
  /** Repeats whose numbers count, ok and not client-bound. */
  readonly repeats: number;
  /** Why this run's step, or some of its repeats, is left out. */
  readonly note: string | null;
}

interface Interval {
  readonly estimate: number;
  /** NaN when a side has too few runs. */
  readonly low: number;
  readonly high: number;
}

interface SegmentSummary {
  readonly runIds: readonly string[];
  readonly mean: number;
  readonly sd: number;
}

export interface HistoryChangePoint {
  /** The first run after the change. */
  readonly runId: string;
  readonly startedAt: string;
  /** The last run before it. */
  readonly previousRunId: string;
  readonly previousStartedAt: string;
  readonly before: SegmentSummary;
  readonly after: SegmentSummary;
  /**
   * after/before of the segment means, with a 95% Welch interval on the log scale.
   * For a metric whose mean can be 0, such as errors, it is after − before.
   */
  readonly change: Interval & { readonly kind: 'ratio' | 'difference' };
  /**
   * regressed or improved by the metric's direction.
   * 'changed' when the means' interval includes no change, so the spread or shape changed.
   */
  readonly direction: 'regressed' | 'improved' | 'changed';
  readonly pValue: number;
  readonly permutations: number;
  readonly statistic: number;
}

/**
 * A split that was nearly a change point.
 * It just missed significance, or it was smaller than the magnitude asked for.
 */
export interface NearMiss {
  /** The first run after the split. */
  readonly runId: string;
  readonly startedAt: string;
  readonly why: 'p-value' | 'magnitude';
  readonly pValue: number;
  readonly permutations: number;
  /** |after mean / before mean - 1| of the split within its segment. Infinity when the mean before is 0. */
  readonly relativeChange: number;
}

export interface LatestVerdict {
  readonly runId: string;
  readonly value: number | null;
  readonly verdict: Verdict;
  /** One sentence on what the verdict is based on. */
  readonly reason: string;
  readonly baseline: (SegmentSummary & { readonly n: number }) | null;
  /** latest / baseline mean. */
  readonly ratio: number | null;
  readonly interval: { readonly low: number; readonly high: number; readonly level: number } | null;
  /** The change point after the baseline, when the latest run's segment is too young to judge against. */
  readonly sinceRunId: string | null;
}

export interface MetricHistory {
  readonly metric: RegressionMetric;
  readonly label: string;
  readonly higherIsBetter: boolean;
  /** Aligned with the step's points. Null where the run's step is left out. */
  readonly values: readonly (number | null)[];
  /** The first run of the search window, when the series is longer than the window. */
  readonly searchedFrom: string | null;
  readonly changePoints: readonly HistoryChangePoint[];
  readonly nearMisses: readonly NearMiss[];
  readonly latest: LatestVerdict | null;
}

interface StepHistory {
  readonly key: StepKey;
  readonly label: string;
  /** Short hash of the step's measurement definition. */
  readonly measurementHash: string;
  readonly measurement: StepMeasurement | null;
  /** Set when an earlier series of the step measured something else. Says what changed and from which run. */
  readonly startedBecause: {
    readonly previousHash: string;
    readonly lastRunBefore: string;
    readonly differences: readonly string[];
  } | null;
  /** The series includes the experiment's latest run. */
  readonly current: boolean;
  readonly points: readonly HistoryPoint[];
  readonly metrics: readonly MetricHistory[];
}

export interface History {
  readonly experiment: string;
  readonly runs: readonly {
    readonly runId: string;
    readonly startedAt: string;
    readonly status: string;
    readonly backend: string;
  }[];
  readonly latestRunId: string | null;
  readonly options: Required<HistoryOptions>;
  readonly steps: readonly StepHistory[];
  /** Sentences about the history as a whole, such as new series or runs without a readable plan. */
  readonly notices: readonly string[];
}

interface SeriesBuilder {
  readonly key: StepKey;
  readonly hash: string;
  readonly measurement: StepMeasurement | null;
  readonly points: { runId: string; startedAt: string; rows: StepRow[] }[];
}

const byTime = (a: HistoryRunRow, b: HistoryRunRow): number =>
  a.started_at < b.started_at
    ? -1
    : a.started_at > b.started_at
      ? 1
      : a.run_id < b.run_id
        ? -1
        : a.run_id > b.run_id
          ? 1
          : 0;

export function buildHistory(input: HistoryInput, options: HistoryOptions = {}): History {
  const given: Required<HistoryOptions> = { ...HISTORY_DEFAULTS, ...options };
  const opts: Required<HistoryOptions> = {
    ...given,
    nearMissUpTo: Math.max(given.nearMissUpTo, 2 * given.significance),
  };
  const runs = [...input.runs].sort(byTime);
  const latestRunId = runs.length > 0 ? runs[runs.length - 1]!.run_id : null;
  const notices: string[] = [];

  const rowsByRun = new Map<string, Map<string, StepRow[]>>();
  for (const r of input.steps) {
    let byKey = rowsByRun.get(r.run_id);
    if (!byKey) rowsByRun.set(r.run_id, (byKey = new Map<string, StepRow[]>()));
    const k = stepKeyText(r);
    const list = byKey.get(k);
    if (list) list.push(r);
    else byKey.set(k, [r]);
  }

  // Series are keyed by step and measurement hash, in the order of their first run.
  const series = new Map<string, SeriesBuilder>();
  const unreadable: string[] = [];
  for (const run of runs) {
    const measured = measuredSteps(run.plan);
    const rows = rowsByRun.get(run.run_id) ?? new Map<string, StepRow[]>();
    if (measured.size === 0 && rows.size > 0) unreadable.push(run.run_id);
    const keys = new Set([...measured.keys(), ...rows.keys()]);
    for (const k of keys) {
      const m = measured.get(k);
      const stepRows = rows.get(k) ?? [];
      const key = m?.key ?? stepKeyFromRow(stepRows[0]!);
      const hash = m?.hash ?? 'no-plan';
      const id = `${k}\u0000${hash}`;
      let s = series.get(id);
      if (!s) {
        s = { key, hash, measurement: m?.measurement ?? null, points: [] };
        series.set(id, s);
      }
      s.points.push({ runId: run.run_id, startedAt: run.started_at, rows: stepRows });
    }
  }
  const rehearsals = input.rehearsalsLeftOut ?? [];
  if (rehearsals.length > 0)
    notices.push(
      `${rehearsals.length} rehearsal run(s) left out (run --aws-rehearsal: stand-in servers on the machine ` +
        `that rehearsed, not Aurora; never part of an AWS experiment's history): ` +
        `${rehearsals.slice(0, 5).join(', ')}${rehearsals.length > 5 ? ', ...' : ''}`,
    );
  if ((input.runsNotRead ?? 0) > 0)
    notices.push(
      `the ${input.runsNotRead} earlier run(s) of the experiment before the window of ${runs.length} were not ` +
        `read (--window all reads every run)`,
    );
  if (unreadable.length > 0)
    notices.push(
      `${unreadable.length} run(s) have no readable plan, so their steps form a series of their ` +
        `own: ${unreadable.slice(0, 5).join(', ')}${unreadable.length > 5 ? ', ...' : ''}`,
    );

  const steps: StepHistory[] = [];
  const lastOfKey = new Map<string, SeriesBuilder>();
  // Series in the order they started, so "the previous series of this step" is well defined.
  const ordered = [...series.values()].sort((a, b) =>
    a.points[0]!.startedAt < b.points[0]!.startedAt ? -1 : a.points[0]!.startedAt > b.points[0]!.startedAt ? 1 : 0,
  );
  for (const s of ordered) {
    const keyText = stepKeyText(s.key);
    const previous = lastOfKey.get(keyText);
    lastOfKey.set(keyText, s);
    let startedBecause: StepHistory['startedBecause'] = null;
    if (previous) {
      const differences =
        previous.measurement && s.measurement
          ? measurementDifferences(previous.measurement, s.measurement)
          : ['the plan of one of the runs is not readable'];
      const lastRunBefore =
        [...previous.points].reverse().find((p) => p.startedAt < s.points[0]!.startedAt)?.runId ??
        previous.points[previous.points.length - 1]!.runId;
      startedBecause = { previousHash: previous.hash, lastRunBefore, differences };
      notices.push(
        `${stepKeyLabel(s.key)}: the measurement changed at run ${s.points[0]!.runId} ` +
          `(${differences.join(', ') || 'definition'}): a new series starts there; the ${previous.points.length} ` +
          `run(s) before are series ${previous.hash}.`,
      );
    }
    // A series that starts at the first run read may go on before it, in runs outside the window.
    const continuesUnread = (input.runsNotRead ?? 0) > 0 && s.points[0]!.runId === runs[0]?.run_id;
    steps.push(analyseSeries(s, startedBecause, latestRunId, continuesUnread, opts));
  }

  return {
    experiment: input.experiment,
    runs: runs.map((r) => ({ runId: r.run_id, startedAt: r.started_at, status: r.status, backend: r.backend })),
    latestRunId,
    options: opts,
    steps,
    notices,
  };
}

function stepKeyFromRow(r: StepRow): StepKey {
  return { variant: r.variant, workload: r.workload, threads: r.threads, rate: r.rate, target: r.target };
}

function analyseSeries(
  s: SeriesBuilder,
  startedBecause: StepHistory['startedBecause'],
  latestRunId: string | null,
  continuesUnread: boolean,
  opts: Required<HistoryOptions>,
): StepHistory {
  const points: HistoryPoint[] = [];
  const judged: StepRow[][] = [];
  for (const p of s.points) {
    const reasons = p.rows.map(notJudgedReason).filter((r): r is string => r !== null);
    const ok = p.rows.filter((r) => notJudgedReason(r) === null);
    judged.push(ok);
    const note =
      p.rows.length === 0
        ? 'no result in this run'
        : ok.length === 0
          ? reasons.join('; ')
          : reasons.length > 0
            ? `${reasons.length} of ${p.rows.length} repeats left out: ${reasons.join('; ')}`
            : null;
    points.push({ runId: p.runId, startedAt: p.startedAt, repeats: ok.length, note });
  }
  const latencyPct = s.points.flatMap((p) => p.rows)[0]?.lat_pct ?? s.measurement?.percentile ?? null;
  const seriesId = `${stepKeyText(s.key)}\u0000${s.hash}`;
  const valuesOf = (metric: RegressionMetric): (number | null)[] =>
    judged.map((rows) => {
      const vs = rows.map((r) => metricValue(r, metric)).filter((v): v is number => v !== null && Number.isFinite(v));
      return vs.length > 0 ? mean(vs) : null;
    });
  const tpsValues = valuesOf('tps');
  const current = latestRunId !== null && points.length > 0 && points[points.length - 1]!.runId === latestRunId;
  const metrics = REGRESSION_METRICS.map((info) => {
    const values = info.metric === 'tps' ? tpsValues : valuesOf(info.metric);
    return analyseMetric(
      info.metric,
      info.higherIsBetter,
      metricLabel(info.metric, latencyPct),
      values,
      tpsValues,
      points,
      current,
      seriesId,
      continuesUnread,
      opts,
    );
  });
  return {
    key: s.key,
    label: stepKeyLabel(s.key),
    measurementHash: s.hash,
    measurement: s.measurement,
    startedBecause,
    current,
    points,
    metrics,
  };
}

function analyseMetric(
  metric: RegressionMetric,
  higherIsBetter: boolean,
  label: string,
  values: readonly (number | null)[],
  tpsValues: readonly (number | null)[],
  points: readonly HistoryPoint[],
  current: boolean,
  seriesId: string,
  continuesUnread: boolean,
  opts: Required<HistoryOptions>,
): MetricHistory {
  // The series without its gaps. `at` maps back to the step's points.
  const at: number[] = [];
  const xs: number[] = [];
  values.forEach((v, i) => {
    if (v !== null) {
      at.push(i);
      xs.push(v);
    }
  });
  const offset = opts.window === 'all' ? 0 : Math.max(0, xs.length - opts.window);
  const searched = xs.slice(offset);
  const result =
    searched.length >= 2
      ? eDivisive(searched, {
          significance: opts.significance,
          permutations: opts.permutations,
          statistic: opts.statistic,
          seed: (seedFromText(`${seriesId}\u0000${metric}`) + opts.seed) >>> 0,
          exactUpTo: opts.nearMissUpTo,
        })
      : null;
  const significant = (result?.changePoints ?? []).map((c) => ({ ...c, index: c.index + offset }));
  // |after/before - 1| of a split between the change points around it, as Otava's magnitude.
  const relativeChange = (index: number, cuts: readonly number[]): number => {
    const from = Math.max(offset, ...cuts.filter((b) => b < index));
    const to = Math.min(xs.length, ...cuts.filter((b) => b > index));
    const before = mean(xs.slice(from, index));
    const after = mean(xs.slice(index, to));
    return before === 0 ? (after === 0 ? 0 : Infinity) : Math.abs(after / before - 1);
  };
  const allCuts = significant.map((c) => c.index);
  const found = significant.filter((c) => relativeChange(c.index, allCuts) >= opts.magnitude);
  const nearMisses: NearMiss[] = [];
  const nearMiss = (
    index: number,
    why: NearMiss['why'],
    pValue: number,
    permutations: number,
    relative: number,
  ): NearMiss => {
    const p = points[at[index]!]!;
    return { runId: p.runId, startedAt: p.startedAt, why, pValue, permutations, relativeChange: relative };
  };
  for (const c of significant)
    if (!found.includes(c))
      nearMisses.push(nearMiss(c.index, 'magnitude', c.pValue, c.permutations, relativeChange(c.index, allCuts)));
  const rejected = result?.rejected;
  if (rejected && rejected.pValue <= opts.nearMissUpTo) {
    const index = rejected.index + offset;
    nearMisses.push(nearMiss(index, 'p-value', rejected.pValue, rejected.permutations, relativeChange(index, allCuts)));
  }
  const bounds = [offset, ...found.map((c) => c.index), xs.length];
  const segment = (from: number, to: number): SegmentSummary => {
    const vs = xs.slice(from, to);
    return { runIds: at.slice(from, to).map((i) => points[i]!.runId), mean: mean(vs), sd: sampleStddev(vs) };
  };
  const floorAt = (from: number, to: number): number => {
    if (metric !== 'errors') return 0;
    const tps = at
      .slice(from, to)
      .map((i) => tpsValues[i])
      .filter((v): v is number => v !== null);
    return tps.length > 0 ? NORMAL_ERROR_SHARE * mean(tps) : 0;
  };
  const changePoints: HistoryChangePoint[] = found.map((c, k) => {
    const from = bounds[k]!;
    const to = bounds[k + 2]!;
    const beforeValues = xs.slice(from, c.index);
    const afterValues = xs.slice(c.index, to);
    const change = changeEstimate(beforeValues, afterValues, metric === 'errors');
    const floor = Math.max(floorAt(from, c.index), floorAt(c.index, to));
    const noChange = change.kind === 'ratio' ? 1 : 0;
    const beyond =
      change.kind === 'ratio'
        ? change.low > 1 || change.high < 1
        : (change.low > 0 || change.high < 0) && Math.abs(change.estimate) > floor;
    const up = change.estimate > noChange;
    const direction: HistoryChangePoint['direction'] = !beyond
      ? 'changed'
      : up === higherIsBetter
        ? 'improved'
        : 'regressed';
    const first = points[at[c.index]!]!;
    const previous = points[at[c.index - 1]!]!;
    return {
      runId: first.runId,
      startedAt: first.startedAt,
      previousRunId: previous.runId,
      previousStartedAt: previous.startedAt,
      before: segment(from, c.index),
      after: segment(c.index, to),
      change,
      direction,
      pValue: c.pValue,
      permutations: c.permutations,
      statistic: c.statistic,
    };
  });
  const latest = current ? latestVerdict(values, xs, at, bounds, points, higherIsBetter, floorAt, opts) : null;
  return {
    metric,
    label,
    higherIsBetter,
    values,
    searchedFrom: (offset > 0 || continuesUnread) && xs.length > 0 ? points[at[offset]!]!.runId : null,
    changePoints,
    nearMisses,
    latest,
  };
}

/**
 * after/before as a ratio with Welch's interval on the log scale.
 * A difference is used when a mean is not positive.
 */
function changeEstimate(
  before: readonly number[],
  after: readonly number[],
  allowZero: boolean,
): HistoryChangePoint['change'] {
  const a = summarize(after);
  const b = summarize(before);
  if (!allowZero && a.mean > 0 && b.mean > 0) {
    const ci = welchRatioCi(a, b);
    return { kind: 'ratio', estimate: ci.estimate, low: ci.low, high: ci.high };
  }
  const ci = welchDifferenceCi(a, b);
  return { kind: 'difference', estimate: ci.estimate, low: ci.low, high: ci.high };
}

function latestVerdict(
  values: readonly (number | null)[],
  xs: readonly number[],
  at: readonly number[],
  bounds: readonly number[],
  points: readonly HistoryPoint[],
  higherIsBetter: boolean,
  floorAt: (from: number, to: number) => number,
  opts: Required<HistoryOptions>,
): LatestVerdict {
  const lastPoint = points[points.length - 1]!;
  const value = values[values.length - 1] ?? null;
  const base = { runId: lastPoint.runId, value, baseline: null, ratio: null, interval: null, sinceRunId: null };
  if (value === null)
    return { ...base, verdict: 'not-judged', reason: lastPoint.note ?? 'no result in the latest run' };
  const last = xs.length - 1;
  // Segments run [bounds[k], bounds[k+1]). The latest value is the last of the last one.
  let k = bounds.length - 2;
  let from = bounds[k]!;
  let to = last; // the latest run's own segment, without it
  let sinceRunId: string | null = null;
  while (to - from < opts.minStableRuns && k > 0) {
    sinceRunId = points[at[bounds[k]!]!]!.runId;
    k--;
    from = bounds[k]!;
    to = bounds[k + 1]!;
  }
  const n = to - from;
  if (n < opts.minStableRuns) {
    return {
      ...base,
      verdict: 'unknown',
      reason: `fewer than ${opts.minStableRuns} earlier runs in a stable segment to judge the latest run against`,
    };
  }
  const vs = xs.slice(from, to);
  const m = mean(vs);
  const sd = sampleStddev(vs);
  const half = Math.max(
    studentTQuantile(1 - (1 - opts.predictionLevel) / 2, n - 1) * sd * Math.sqrt(1 + 1 / n),
    floorAt(from, to),
  );
  const interval = { low: m - half, high: m + half, level: opts.predictionLevel };
  const position = value > interval.high ? 'above' : value < interval.low ? 'below' : 'inside';
  const verdict = directedVerdict(position, higherIsBetter);
  const runIds = at.slice(from, to).map((i) => points[i]!.runId);
  const segmentText =
    `${n} runs ${runIds[0]} ` +
    `… ${runIds[runIds.length - 1]}${sinceRunId ? `, before the change at ${sinceRunId}` : ''}`;
  const reason =
    position === 'inside'
      ? `inside the ${levelPercent(opts.predictionLevel)} prediction interval of the last stable segment ` +
        `(${segmentText})`
      : `${position} the ${levelPercent(opts.predictionLevel)} prediction interval of the last stable segment ` +
        `(${segmentText})`;
  return {
    runId: lastPoint.runId,
    value,
    verdict,
    reason,
    baseline: { runIds, n, mean: m, sd },
    ratio: m !== 0 ? value / m : null,
    interval,
    sinceRunId,
  };
}

/** The latest run's verdicts as flat rows, one per step and metric of the current series. */
export interface VerdictRow {
  readonly experiment: string;
  readonly run_id: string;
  readonly variant: string;
  readonly workload: string;
  readonly threads: number;
  readonly rate: number;
  readonly target: string;
  readonly measurement_hash: string;
  readonly metric: RegressionMetric;
  readonly metric_label: string;
  readonly verdict: Verdict;
  readonly value: number | null;
  readonly baseline_mean: number | null;
  readonly baseline_runs: number;
  readonly ratio: number | null;
  readonly interval_low: number | null;
  readonly interval_high: number | null;
  readonly since_run_id: string | null;
  readonly reason: string;
}

export function verdictRows(history: History): VerdictRow[] {
  const rows: VerdictRow[] = [];
  for (const s of history.steps) {
    for (const m of s.metrics) {
      const l = m.latest;
      if (!l) continue;
      rows.push({
        experiment: history.experiment,
        run_id: l.runId,
        ...s.key,
        measurement_hash: s.measurementHash,
        metric: m.metric,
        metric_label: m.label,
        verdict: l.verdict,
        value: l.value,
        baseline_mean: l.baseline?.mean ?? null,
        baseline_runs: l.baseline?.n ?? 0,
        ratio: l.ratio,
        interval_low: l.interval?.low ?? null,
        interval_high: l.interval?.high ?? null,
        since_run_id: l.sinceRunId,
        reason: l.reason,
      });
    }
  }
  return rows;
}
