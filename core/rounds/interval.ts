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
 */
import { mean, sampleStddev, studentTQuantile } from '../report/stats';

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

/**
 * The alpha the look after round n spends, of K planned. Round 1 gives no variance, so its share
 * moves to round 2. Past K (never planned) nothing is left to spend.
 */
export function lookAlpha(alpha: number, n: number, maxRounds: number): number {
  if (n < 2 || n > maxRounds) return 0;
  return spent(alpha, n / maxRounds) - (n === 2 ? 0 : spent(alpha, (n - 1) / maxRounds));
}

/** The interval after the rounds' log ratios so far; unbounded below two rounds. */
export function roundsInterval(logRatios: readonly number[], confidence: number, maxRounds: number): RoundsInterval {
  const n = logRatios.length;
  const m = mean(logRatios);
  const ratio = n === 0 ? Number.NaN : Math.exp(m);
  const a = lookAlpha(1 - confidence, n, Math.max(maxRounds, 2));
  if (a <= 0) return { ratio, lower: 0, upper: Number.POSITIVE_INFINITY };
  const half = studentTQuantile(1 - a / 2, n - 1) * (sampleStddev(logRatios) / Math.sqrt(n));
  return { ratio, lower: Math.exp(m - half), upper: Math.exp(m + half) };
}
