/**
 * Repeated confidence intervals for a ratio of two variants measured in rounds.
 * They stay honest under optional stopping, whatever the stop depends on.
 *
 * The method is repeated confidence intervals with Pocock-type alpha spending.
 * See Jennison and Turnbull, "Interim analyses: the repeated confidence interval approach", JRSS B 1989.
 * See Lan and DeMets, "Discrete sequential boundaries for clinical trials", Biometrika 1983.
 * f(t) = alpha * ln(1 + (e - 1) t) over the planned maximum rounds.
 * Each round's log ratio pairs the variants in time.
 * The look after round k spends f(k/K) - f((k-1)/K) as a t interval.
 *
 * With 2 to 10 rounds, the variance comes from a handful of values.
 * Exact group-sequential boundaries assume a known variance.
 * Confidence sequences need a known noise bound or many samples. See Howard et al., Annals of Statistics 2021.
 * A t interval is exact for normal log ratios at any n >= 2. The Bonferroni bound covers all looks together.
 * A prior noise estimate from earlier runs pools with the rounds' spread, so one round already gives an interval.
 */
import { mean, sampleStddev, studentTQuantile } from '../stats/student-t';

/** The rounds' ratio candidate/baseline and its repeated confidence interval. */
export interface RoundsInterval {
  readonly ratio: number;
  readonly lower: number;
  readonly upper: number;
}

/** Pocock-type spending after Lan and DeMets 1983: the share of alpha spent by information fraction t. */
function spent(alpha: number, t: number): number {
  return alpha * Math.log(1 + (Math.E - 1) * Math.min(1, Math.max(0, t)));
}

/** Noise known before the rounds: the sd of one round's log ratio and its degrees of freedom. */
export interface PriorNoise {
  readonly logSd: number;
  readonly df: number;
}

/**
 * The alpha the look after round n of K spends, the first look being at round `first`.
 * Earlier rounds give no variance, so their share moves to the first look. Past K nothing is left.
 */
export function lookAlpha(alpha: number, n: number, maxRounds: number, first = 2): number {
  if (n < first || n > maxRounds) return 0;
  return spent(alpha, n / maxRounds) - (n === first ? 0 : spent(alpha, (n - 1) / maxRounds));
}

/** The rounds' sd of a log ratio pooled with the prior noise, and its degrees of freedom. */
function pooledSd(logRatios: readonly number[], prior?: PriorNoise): { sd: number; df: number } {
  const n = logRatios.length;
  const own = n >= 2 ? (n - 1) * sampleStddev(logRatios) ** 2 : 0;
  const df = (prior?.df ?? 0) + Math.max(0, n - 1);
  return { sd: Math.sqrt((own + (prior ? prior.df * prior.logSd ** 2 : 0)) / df), df };
}

/** The interval after the rounds so far. It is unbounded before the first look. */
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
