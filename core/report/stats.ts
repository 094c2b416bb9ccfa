/**
 * The statistics behind every "± x" and "within the noise" in the reports. Small and exact:
 * on the sample moments and Student-t quantiles of core/stats/student-t.ts (re-exported here),
 * t confidence intervals, Welch intervals for a difference and (on the log scale) for a ratio, and
 * the method of batch means for per-interval samples, which are autocorrelated.
 */
import { mean, sampleStddev, studentTQuantile } from '../stats/student-t';

export { mean, sampleStddev, studentTQuantile } from '../stats/student-t';

export interface ConfidenceInterval {
  readonly estimate: number;
  /** NaN when it cannot be computed (fewer than two samples). */
  readonly low: number;
  readonly high: number;
  readonly halfWidth: number;
  readonly n: number;
  readonly df: number;
  readonly level: number;
}

/** Two-sided t interval for the mean of independent samples. */
export function meanCi(xs: readonly number[], level = 0.95): ConfidenceInterval {
  const m = mean(xs);
  const n = xs.length;
  if (n < 2) return { estimate: m, low: Number.NaN, high: Number.NaN, halfWidth: Number.NaN, n, df: 0, level };
  const half = studentTQuantile(1 - (1 - level) / 2, n - 1) * (sampleStddev(xs) / Math.sqrt(n));
  return { estimate: m, low: m - half, high: m + half, halfWidth: half, n, df: n - 1, level };
}

/**
 * Per-interval samples of one run are autocorrelated (a slow second follows a slow second), so a
 * plain t interval over them is far too narrow. The method of batch means splits the series into
 * `batches` consecutive blocks, takes each block's mean and builds the t interval over those
 * (nearly independent) means. Fewer than 2 samples per batch: fewer batches.
 * @internal exported for its tests (a test seam)
 */
export function batchMeansCi(series: readonly number[], batches = 10, level = 0.95): ConfidenceInterval {
  const k = Math.min(batches, Math.floor(series.length / 2));
  if (k < 2) return { ...meanCi(series, level), estimate: mean(series) };
  const size = Math.floor(series.length / k);
  // Drop the first remainder samples (start-up) so every batch has the same length.
  const start = series.length - size * k;
  const means: number[] = [];
  for (let b = 0; b < k; b++) means.push(mean(series.slice(start + b * size, start + (b + 1) * size)));
  return { ...meanCi(means, level), estimate: mean(series.slice(start)) };
}

export interface Sample {
  readonly mean: number;
  readonly sd: number;
  readonly n: number;
}

export function summarize(xs: readonly number[]): Sample {
  return { mean: mean(xs), sd: sampleStddev(xs), n: xs.length };
}

function welchDf(va: number, na: number, vb: number, nb: number): number {
  // va, vb: variances of the two means (s^2 / n).
  const num = (va + vb) ** 2;
  const den = va ** 2 / (na - 1) + vb ** 2 / (nb - 1);
  return den === 0 ? na + nb - 2 : num / den;
}

/** Welch interval for mean(a) - mean(b); no equal-variance assumption. */
export function welchDifferenceCi(a: Sample, b: Sample, level = 0.95): ConfidenceInterval {
  const estimate = a.mean - b.mean;
  if (a.n < 2 || b.n < 2)
    return { estimate, low: Number.NaN, high: Number.NaN, halfWidth: Number.NaN, n: a.n + b.n, df: 0, level };
  const va = a.sd ** 2 / a.n;
  const vb = b.sd ** 2 / b.n;
  const df = welchDf(va, a.n, vb, b.n);
  const half = studentTQuantile(1 - (1 - level) / 2, df) * Math.sqrt(va + vb);
  return { estimate, low: estimate - half, high: estimate + half, halfWidth: half, n: a.n + b.n, df, level };
}

/**
 * Interval for mean(a) / mean(b): Welch on the log scale with the delta method
 * (var(log mean) ~ sd^2 / (n mean^2)), transformed back, so it is asymmetric around the ratio
 * like a ratio's uncertainty is. Both means must be positive (throughputs, latencies).
 */
export function welchRatioCi(a: Sample, b: Sample, level = 0.95): ConfidenceInterval {
  const estimate = a.mean / b.mean;
  const nan = { estimate, low: Number.NaN, high: Number.NaN, halfWidth: Number.NaN, n: a.n + b.n, df: 0, level };
  if (a.n < 2 || b.n < 2 || !(a.mean > 0 && b.mean > 0)) return nan;
  const va = a.sd ** 2 / (a.n * a.mean ** 2);
  const vb = b.sd ** 2 / (b.n * b.mean ** 2);
  const df = welchDf(va, a.n, vb, b.n);
  const half = studentTQuantile(1 - (1 - level) / 2, df) * Math.sqrt(va + vb);
  const low = Math.exp(Math.log(estimate) - half);
  const high = Math.exp(Math.log(estimate) + half);
  return { estimate, low, high, halfWidth: (high - low) / 2, n: a.n + b.n, df, level };
}

export type NoiseVerdict = 'higher' | 'lower' | 'within-noise' | 'unknown';

/** Where a ratio's interval sits against 1: above, below, or straddling it (within the noise). */
export function ratioVerdict(ci: ConfidenceInterval): NoiseVerdict {
  if (!Number.isFinite(ci.low) || !Number.isFinite(ci.high)) return 'unknown';
  if (ci.low > 1) return 'higher';
  if (ci.high < 1) return 'lower';
  return 'within-noise';
}

/** A plain sentence for a ratio a/b of some metric, e.g. for the A/B table.
 * @internal exported for its tests (a test seam)
 */
export function describeRatio(
  metric: string,
  aName: string,
  bName: string,
  ci: ConfidenceInterval,
  higherIsBetter = true,
): string {
  const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;
  const verdict = ratioVerdict(ci);
  const range = Number.isFinite(ci.low) ? ` (95% CI ${pct(ci.low)}–${pct(ci.high)})` : '';
  const head = `${metric} ${aName}/${bName} = ${pct(ci.estimate)}${range}`;
  switch (verdict) {
    case 'within-noise':
      return `${head}: the difference is within the noise (the interval includes 100%).`;
    case 'higher':
      return `${head}: ${aName} is ${higherIsBetter ? 'better' : 'worse'} beyond the noise.`;
    case 'lower':
      return `${head}: ${aName} is ${higherIsBetter ? 'worse' : 'better'} beyond the noise.`;
    default:
      return `${head}: the noise is not measured (needs at least 2 repeats or 4 interval samples per side).`;
  }
}

/** The means of `batches` equal consecutive blocks of a series (the first remainder samples dropped). */
export function batchMeans(series: readonly number[], batches = 10): number[] {
  const k = Math.min(batches, Math.floor(series.length / 2));
  if (k < 2) return [];
  const size = Math.floor(series.length / k);
  const start = series.length - size * k;
  const means: number[] = [];
  for (let b = 0; b < k; b++) means.push(mean(series.slice(start + b * size, start + (b + 1) * size)));
  return means;
}

/**
 * How many repeats per side a comparison needs to resolve a ratio of the observed size: the
 * smallest n for which a two-sided Welch test on the log scale (as welchRatioCi) at `level` would
 * find a true ratio of a.mean / b.mean with probability `power`, given each side's run-to-run
 * coefficient of variation (sd / mean): n such that
 *   (t(1 - alpha/2, df) + t(power, df)) * sqrt((cv_a^2 + cv_b^2) / n) <= |ln(a.mean / b.mean)|,
 * df the Welch degrees of freedom at n per side. null when it cannot be said (fewer than two
 * samples a side, no difference at all) or when more than `max` repeats would be needed.
 */
export function repeatsToResolve(
  a: Sample,
  b: Sample,
  options: { power?: number; level?: number; max?: number } = {},
): number | null {
  const power = options.power ?? 0.8;
  const level = options.level ?? 0.95;
  const max = options.max ?? 1000;
  if (a.n < 2 || b.n < 2 || !(a.mean > 0 && b.mean > 0)) return null;
  const effect = Math.abs(Math.log(a.mean / b.mean));
  const va = (a.sd / a.mean) ** 2;
  const vb = (b.sd / b.mean) ** 2;
  if (!(effect > 0) || !Number.isFinite(va + vb)) return null;
  if (va + vb === 0) return 2;
  for (let n = 2; n <= max; n++) {
    const df = welchDf(va / n, n, vb / n, n);
    const needed = (studentTQuantile(1 - (1 - level) / 2, df) + studentTQuantile(power, df)) * Math.sqrt((va + vb) / n);
    if (needed <= effect) return n;
  }
  return null;
}
