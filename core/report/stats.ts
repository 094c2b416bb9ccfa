/**
 * The statistics behind every "± x" and "within the noise" in the reports. Small and exact:
 * sample mean and standard deviation, Student-t quantiles (from the regularized incomplete beta
 * function, not a table, so any degrees of freedom work, fractional ones from Welch included),
 * t confidence intervals, Welch intervals for a difference and (on the log scale) for a ratio, and
 * the method of batch means for per-interval samples, which are autocorrelated.
 */

export function mean(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

/** Sample (n - 1) standard deviation; NaN below two samples. */
export function sampleStddev(xs: readonly number[]): number {
  if (xs.length < 2) return Number.NaN;
  const m = mean(xs);
  return Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1));
}

function logGamma(x: number): number {
  // Lanczos approximation (g = 7, n = 9), accurate to ~1e-15 for x > 0.
  const c = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
    12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x);
  const z = x - 1;
  let a = c[0]!;
  const t = z + 7.5;
  for (let i = 1; i < 9; i++) a += c[i]! / (z + i);
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a);
}

/** Continued fraction for the incomplete beta function (modified Lentz). */
function betaContinuedFraction(a: number, b: number, x: number): number {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  if (Math.abs(d) < tiny) d = tiny;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= 300; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < 1e-15) break;
  }
  return h;
}

/** Regularized incomplete beta I_x(a, b). */
function regularizedBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log(1 - x));
  return x < (a + 1) / (a + b + 2)
    ? (front * betaContinuedFraction(a, b, x)) / a
    : 1 - (front * betaContinuedFraction(b, a, 1 - x)) / b;
}

/**
 * P(T <= t) for Student's t with `df` degrees of freedom (df may be fractional).
 * @internal exported for its tests (a test seam)
 */
export function studentTCdf(t: number, df: number): number {
  const x = df / (df + t * t);
  const tail = 0.5 * regularizedBeta(x, df / 2, 0.5);
  return t >= 0 ? 1 - tail : tail;
}

/**
 * Quantiles at integer degrees of freedom already computed (meanCi's n - 1 and the power searches
 * ask for the same few thousands of times), by p then df; bounded, since df can be any integer.
 */
const integerDfQuantiles = new Map<number, Map<number, number>>();
const CACHED_QUANTILES_PER_P = 4096;

/**
 * The t with P(T <= t) = p, exact to about 1e-12. Newton's method on the CDF from t = 0: the CDF is
 * concave above 0 and convex below, so every step lands between 0 and the root and the iteration
 * climbs to it monotonically (quadratically once near), in a handful of CDF evaluations where
 * bisection needs about fifty. Bisection remains the fallback should a step ever leave that range.
 */
export function studentTQuantile(p: number, df: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`probability must be in (0, 1), got ${p}`);
  if (!(df > 0)) throw new RangeError(`degrees of freedom must be > 0, got ${df}`);
  if (p === 0.5) return 0;
  const cacheable = Number.isInteger(df);
  let byDf = cacheable ? integerDfQuantiles.get(p) : undefined;
  const cached = byDf?.get(df);
  if (cached !== undefined) return cached;
  const t = newtonQuantile(p, df) ?? bisectionQuantile(p, df);
  if (cacheable) {
    if (!byDf) integerDfQuantiles.set(p, (byDf = new Map<number, number>()));
    if (byDf.size >= CACHED_QUANTILES_PER_P) byDf.clear();
    byDf.set(df, t);
  }
  return t;
}

function newtonQuantile(p: number, df: number): number | null {
  const sign = p > 0.5 ? 1 : -1;
  // The density's log normalizing constant, the same at every t.
  const logNorm = logGamma((df + 1) / 2) - logGamma(df / 2) - 0.5 * Math.log(df * Math.PI);
  let t = 0;
  for (let i = 0; i < 200; i++) {
    const density = Math.exp(logNorm - ((df + 1) / 2) * Math.log1p((t * t) / df));
    const step = (p - studentTCdf(t, df)) / density;
    if (Math.abs(step) <= 1e-12 * Math.max(1, Math.abs(t))) return t + step;
    const next = t + step;
    // Away from the root or across 0 (rounding in a far tail, an underflowed density): not the monotone climb.
    if (!Number.isFinite(next) || sign * step < 0 || sign * next < 0) return null;
    t = next;
  }
  return null;
}

/** Bisection on the CDF: monotone, and exact to 1e-12. */
function bisectionQuantile(p: number, df: number): number {
  let lo = -1;
  let hi = 1;
  while (studentTCdf(lo, df) > p) lo *= 2;
  while (studentTCdf(hi, df) < p) hi *= 2;
  for (let i = 0; i < 200 && hi - lo > 1e-12 * Math.max(1, Math.abs(hi)); i++) {
    const mid = (lo + hi) / 2;
    if (studentTCdf(mid, df) < p) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

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
