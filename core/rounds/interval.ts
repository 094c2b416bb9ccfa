/**
 * Repeated confidence intervals for a ratio of two variants measured in rounds, honest under
 * optional stopping: the interval after any round covers the truth at the stated level however the
 * stop depends on the data seen so far.
 *
 * Method: repeated confidence intervals (Jennison and Turnbull, "Interim analyses: the repeated
 * confidence interval approach", JRSS B 51(3), 1989) with the Pocock-type alpha-spending function
 * of Lan and DeMets ("Discrete sequential boundaries for clinical trials", Biometrika 70(3), 1983),
 * f(t) = alpha * ln(1 + (e - 1) t), over the planned maximum rounds. Each round's log ratio pairs
 * the variants in time. The look after round k spends f(k/K) - f((k-1)/K) as a t interval.
 *
 * Why this and not the exact group-sequential boundary or a confidence sequence: with 2 to 10 rounds
 * the variance is estimated from a handful of values. The exact boundaries assume a known variance,
 * and the always-valid sequences (Howard et al., Annals of Statistics 49(2), 2021) need a known
 * bound on the noise or many samples. A t interval at each look is exact for normal log ratios at
 * any n >= 2, and the union bound (Bonferroni) makes the looks together miss at most alpha.
 * A prior noise estimate (earlier runs of the same experiment, independent of these rounds) pools
 * with the rounds' own spread; then one round already gives an exact t interval.
 */
import { mean, sampleStddev, studentTQuantile } from '../stats/student-t';

/** The rounds' ratio candidate/baseline and its repeated confidence interval, on the ratio scale. */
export interface RoundsInterval {
  readonly ratio: number;
  readonly lower: number;
  readonly upper: number;
}

/** Pocock-type spending (Lan and DeMets 1983): the share of alpha spent by information fraction t. */
function spent(alpha: number, t: number): number {
  return alpha * Math.log(1 + (Math.E - 1) * Math.min(1, Math.max(0, t)));
}

/** Noise known before the rounds: the sd of one round's log ratio and its degrees of freedom. */
export interface PriorNoise {
  readonly logSd: number;
  readonly df: number;
}

/**
 * The alpha the look after round n spends, of K planned, the first look at round `first`. Earlier
 * rounds give no variance, so their share moves to the first look. Past K nothing is left.
 */
export function lookAlpha(alpha: number, n: number, maxRounds: number, first = 2): number {
  if (n < first || n > maxRounds) return 0;
  return spent(alpha, n / maxRounds) - (n === first ? 0 : spent(alpha, (n - 1) / maxRounds));
}

/** The rounds' sd of a log ratio, pooled with the prior noise, and its degrees of freedom. */
function pooledSd(logRatios: readonly number[], prior?: PriorNoise): { sd: number; df: number } {
  const n = logRatios.length;
  const own = n >= 2 ? (n - 1) * sampleStddev(logRatios) ** 2 : 0;
  const df = (prior?.df ?? 0) + Math.max(0, n - 1);
  return { sd: Math.sqrt((own + (prior ? prior.df * prior.logSd ** 2 : 0)) / df), df };
}

/** The interval after the rounds' log ratios so far; unbounded before the first look. */
export function roundsInterval(
  logRatios: readonly number[],
  confidence: number,
  maxRounds: number,
  prior?: PriorNoise,
): RoundsInterval {
  const n = logRatios.length;
  const m = mean(logRatios);
  const ratio = n === 0 ? Number.NaN : Math.exp(m);
  const first = prior && prior.df > 0 ? 1 : 2;
  const a = lookAlpha(1 - confidence, n, Math.max(maxRounds, first), first);
  if (a <= 0) return { ratio, lower: 0, upper: Number.POSITIVE_INFINITY };
  const { sd, df } = pooledSd(logRatios, prior);
  const half = studentTQuantile(1 - a / 2, df) * (sd / Math.sqrt(n));
  return { ratio, lower: Math.exp(m - half), upper: Math.exp(m + half) };
}
