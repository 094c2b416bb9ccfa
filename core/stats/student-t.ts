/**
 * Sample mean and standard deviation, and Student's t distribution.
 * t comes from the regularized incomplete beta function, so any degrees of freedom work, fractional ones too.
 */

export function mean(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

/** Sample standard deviation with n - 1. NaN below two samples. */
export function sampleStddev(xs: readonly number[]): number {
  if (xs.length < 2) return Number.NaN;
  const m = mean(xs);
  return Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1));
}

function logGamma(x: number): number {
  // Lanczos approximation with g = 7 and n = 9, accurate to about 1e-15 for x > 0.
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

/** Continued fraction for the incomplete beta function, by modified Lentz. */
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
 * P(T <= t) for Student's t with `df` degrees of freedom. df may be fractional.
 * @internal Exported for its tests.
 */
export function studentTCdf(t: number, df: number): number {
  const x = df / (df + t * t);
  const tail = 0.5 * regularizedBeta(x, df / 2, 0.5);
  return t >= 0 ? 1 - tail : tail;
}

/**
 * Quantiles already computed at integer degrees of freedom, by p then df.
 * meanCi and the power searches ask for the same few thousands of times.
 * The cache is bounded, since df can be any integer.
 */
const integerDfQuantiles = new Map<number, Map<number, number>>();
const CACHED_QUANTILES_PER_P = 4096;

/**
 * The t with P(T <= t) = p, exact to about 1e-12.
 * Newton's method runs on the CDF from t = 0.
 * The CDF is concave above 0 and convex below, so every step lands between 0 and the root.
 * So it climbs monotonically in a handful of evaluations, where bisection needs about fifty.
 * Bisection stays as the fallback should a step leave that range.
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
    // Away from the root or across 0, rounding has broken the monotone climb.
    if (!Number.isFinite(next) || sign * step < 0 || sign * next < 0) return null;
    t = next;
  }
  return null;
}

/** Bisection on the CDF. It is monotone and exact to 1e-12. */
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
