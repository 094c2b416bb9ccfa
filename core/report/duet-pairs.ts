/**
 * A/B ratios of a duet run (order "duet", core/workflow/tasks/group.ts) from time-paired intervals: the
 * variants of a round ran at the same moment, so interval k of A and the interval of B that covers
 * the same seconds saw the same disturbances, and their ratio cancels what they shared. This is the
 * comparison of duet benchmarking (Bulej et al., "Duet Benchmarking: Improving Measurement Accuracy
 * in the Cloud", ICPE 2020), which pairs the two versions' results measured together.
 *
 * Per round, the pairs give one ratio (sum of A over the paired seconds / sum of B over the same
 * seconds); the interval comes from the rounds on the log scale (a paired t interval: run-to-run
 * noise, as the report's other intervals), or, with one round, from batch means of the pairs'
 * log ratios (per-interval samples are autocorrelated; within-run noise only, and said so).
 */
import { batchMeans, mean, meanCi, sampleStddev, studentTQuantile, type ConfidenceInterval } from './stats';

/** One step's per-interval series of one cell, with when it started. */
export interface TimedSeries {
  /** ISO time the step's runner started (the steps table's started_at). */
  readonly startedAt: string;
  /** Seconds since the start at the end of each interval (sysbench's report time), and the value. */
  readonly points: readonly { readonly t: number; readonly value: number }[];
}

/**
 * The intervals of `a` and `b` that cover the same seconds: each interval of `a` is paired with the
 * interval of `b` whose end lies nearest in wall-clock time, when that is within half an interval
 * (an interval is used once). Values must be positive to enter a ratio.
 */
export function pairByTime(a: TimedSeries, b: TimedSeries, intervalS: number): [number, number][] {
  const startA = Date.parse(a.startedAt);
  const startB = Date.parse(b.startedAt);
  if (!Number.isFinite(startA) || !Number.isFinite(startB) || !(intervalS > 0)) return [];
  const tolMs = (intervalS * 1000) / 2;
  const bEnds = b.points.map((p) => startB + p.t * 1000);
  const used = new Set<number>();
  const pairs: [number, number][] = [];
  for (const p of a.points) {
    const end = startA + p.t * 1000;
    let best = -1;
    for (let j = 0; j < bEnds.length; j++) {
      if (used.has(j)) continue;
      if (best < 0 || Math.abs(bEnds[j]! - end) < Math.abs(bEnds[best]! - end)) best = j;
    }
    if (best < 0 || Math.abs(bEnds[best]! - end) > tolMs) continue;
    used.add(best);
    const q = b.points[best]!;
    if (p.value > 0 && q.value > 0) pairs.push([p.value, q.value]);
  }
  return pairs;
}

export interface PairedRatio extends ConfidenceInterval {
  /** Time-paired intervals over all rounds. */
  readonly pairs: number;
  /** Rounds with at least one pair. */
  readonly rounds: number;
  /** Where the interval comes from: the rounds' ratios, or (one round) batch means of its pairs. */
  readonly source: 'rounds' | 'interval batches' | 'none';
  /** Each round's log ratio (what the interval and the rounds-to-resolve estimate are computed from). */
  readonly roundLogRatios: readonly number[];
}

/** The ratio a / b of time-paired intervals over rounds (each round's pairs from pairByTime), with its interval. */
export function pairedRatioCi(rounds: readonly (readonly (readonly [number, number])[])[], level = 0.95): PairedRatio {
  const measured = rounds.filter((r) => r.length > 0);
  const pairs = measured.reduce((n, r) => n + r.length, 0);
  const logRatios = measured.map((r) => Math.log(r.reduce((s, [a]) => s + a, 0) / r.reduce((s, [, b]) => s + b, 0)));
  const none = {
    low: Number.NaN,
    high: Number.NaN,
    halfWidth: Number.NaN,
    n: measured.length,
    df: 0,
    level,
    pairs,
    rounds: measured.length,
    roundLogRatios: logRatios,
  };
  if (measured.length === 0) return { ...none, estimate: Number.NaN, source: 'none' };
  let ci: ConfidenceInterval;
  let source: PairedRatio['source'];
  if (measured.length >= 2) {
    ci = meanCi(logRatios, level);
    source = 'rounds';
  } else {
    const batches = batchMeans(
      measured[0]!.map(([a, b]) => Math.log(a / b)),
      10,
    );
    if (batches.length < 2) return { ...none, estimate: Math.exp(logRatios[0]!), source: 'none' };
    ci = { ...meanCi(batches, level), estimate: logRatios[0]! };
    source = 'interval batches';
  }
  const center = source === 'rounds' ? ci.estimate : logRatios[0]!;
  const low = Math.exp(center - ci.halfWidth);
  const high = Math.exp(center + ci.halfWidth);
  return {
    estimate: Math.exp(center),
    low,
    high,
    halfWidth: (high - low) / 2,
    n: ci.n,
    df: ci.df,
    level,
    pairs,
    rounds: measured.length,
    source,
    roundLogRatios: logRatios,
  };
}

/**
 * How many rounds a duet needs to resolve a ratio of the observed size: the smallest n for which a
 * paired t test on the rounds' log ratios at `level` finds it with probability `power`:
 * (t(1 - alpha/2, n - 1) + t(power, n - 1)) * sd / sqrt(n) <= |mean|. null when it cannot be said
 * (fewer than two rounds, no difference) or when more than `max` would be needed.
 */
export function roundsToResolve(
  logRatios: readonly number[],
  options: { power?: number; level?: number; max?: number } = {},
): number | null {
  const power = options.power ?? 0.8;
  const level = options.level ?? 0.95;
  const max = options.max ?? 1000;
  if (logRatios.length < 2) return null;
  const effect = Math.abs(mean(logRatios));
  const sd = sampleStddev(logRatios);
  if (!(effect > 0) || !Number.isFinite(sd)) return null;
  if (sd === 0) return 2;
  for (let n = 2; n <= max; n++) {
    if ((studentTQuantile(1 - (1 - level) / 2, n - 1) + studentTQuantile(power, n - 1)) * (sd / Math.sqrt(n)) <= effect)
      return n;
  }
  return null;
}
