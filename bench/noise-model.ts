/**
 * A noise model of measured throughput, fitted to real local runs (bench/regression-local.ts
 * records them in bench/results/regression-local.json), and a seeded generator of synthetic runs
 * from it, for the simulation tests of the regression verdicts and the report's intervals
 * (test/unit/regression-simulation.test.ts).
 *
 * Throughput is positive and its noise multiplicative (a slower disk or a busier neighbour costs
 * a share of the transactions, not a fixed number), so the model is on the log scale:
 *  - between runs: a run's log TPS is its phase's level plus a stationary AR(1) deviation that
 *    carries from one run to the next (a shared machine's load wanders over minutes), innovation
 *    sd sigma * sqrt(1 - phi^2) so that the marginal sd is sigma; phi 0 is the textbook case of
 *    independent lognormal runs;
 *  - within a run: its per-interval log TPS is the run's level plus a stationary AR(1) deviation
 *    (a slow second follows a slow second), the reason the intervals are batched (stats.ts).
 * Both are fitted by the method of moments: the sd and the lag-1 autocorrelation of the residuals
 * about each phase's (each repeat's) mean, pooled over phases (repeats), the sd with the degrees
 * of freedom the means used (Box, Jenkins and Reinsel, Time Series Analysis, ch. 6: the lag-1
 * sample autocorrelation estimates phi of an AR(1)).
 */
import { SeededRandom } from '../core/random';

/** One recorded run: its phase (what was switched) and, per repeat, TPS, latency and per-interval TPS. */
export interface RecordedRun {
  readonly runId: string;
  readonly phase: string;
  readonly repeats: readonly {
    readonly tps: number;
    readonly latencyMs: number;
    readonly intervalTps: readonly number[];
  }[];
}

export interface Ar1 {
  /** Stationary sd of the log value. */
  readonly sigma: number;
  /** Lag-1 autocorrelation, in [0, 0.95]. */
  readonly phi: number;
  /** Residual degrees of freedom the fit had. */
  readonly df: number;
}

export interface NoiseModel {
  /** Between runs (repeats in time order, about their phase's mean). */
  readonly runs: Ar1;
  /** Within a run (per-interval values about their repeat's mean). */
  readonly intervals: Ar1;
  /** Each phase's mean TPS over the recorded repeats. */
  readonly levels: Readonly<Record<string, number>>;
}

/** sd and lag-1 autocorrelation of residuals about each group's mean, pooled over the groups. */
function fitAr1(groups: readonly (readonly number[])[]): Ar1 {
  let ss = 0;
  let cross = 0;
  let df = 0;
  for (const g of groups) {
    if (g.length < 2) continue;
    const m = g.reduce((s, x) => s + x, 0) / g.length;
    const r = g.map((x) => x - m);
    for (let i = 0; i < r.length; i++) {
      ss += r[i]! ** 2;
      if (i > 0) cross += r[i]! * r[i - 1]!;
    }
    df += g.length - 1;
  }
  if (df === 0 || ss === 0) return { sigma: 0, phi: 0, df };
  return { sigma: Math.sqrt(ss / df), phi: Math.min(0.95, Math.max(0, cross / ss)), df };
}

/** Splits runs into maximal stretches of the same phase (each switch starts a new level). */
function stretches(runs: readonly RecordedRun[]): RecordedRun[][] {
  const out: RecordedRun[][] = [];
  for (const r of runs) {
    const last = out[out.length - 1];
    if (last && last[0]!.phase === r.phase) last.push(r);
    else out.push([r]);
  }
  return out;
}

/**
 * The model of recorded runs: between runs from their repeats in time order, within a run from
 * `withinRun` (one long step's per-interval TPS) when given, else from every repeat's intervals.
 */
export function fitNoiseModel(runs: readonly RecordedRun[], withinRun?: readonly number[]): NoiseModel {
  const between = stretches(runs).map((s) => s.flatMap((r) => r.repeats.map((x) => Math.log(x.tps))));
  const logs = (xs: readonly number[]): number[] => xs.filter((v) => v > 0).map((v) => Math.log(v));
  const within =
    withinRun && withinRun.length > 0
      ? [logs(withinRun)]
      : runs.flatMap((r) => r.repeats.map((x) => logs(x.intervalTps)));
  const levels: Record<string, number> = {};
  for (const phase of new Set(runs.map((r) => r.phase))) {
    const xs = runs.filter((r) => r.phase === phase).flatMap((r) => r.repeats.map((x) => x.tps));
    levels[phase] = xs.reduce((s, x) => s + x, 0) / xs.length;
  }
  return { runs: fitAr1(between), intervals: fitAr1(within), levels };
}

/** Standard normal deviates (Box-Muller) from the seeded generator. */
class Normal {
  private readonly rng: SeededRandom;
  private spare: number | null = null;
  constructor(seed: number) {
    this.rng = new SeededRandom(seed);
  }
  next(): number {
    if (this.spare !== null) {
      const s = this.spare;
      this.spare = null;
      return s;
    }
    const u1 = (this.rng.nextUint32() + 0.5) / 4294967296;
    const u2 = (this.rng.nextUint32() + 0.5) / 4294967296;
    const r = Math.sqrt(-2 * Math.log(u1));
    this.spare = r * Math.sin(2 * Math.PI * u2);
    return r * Math.cos(2 * Math.PI * u2);
  }
}

/**
 * Synthetic values from a fitted model, deterministic for a seed. Each value's expectation is
 * exactly the level asked (the lognormal's exp(sigma^2 / 2) is divided out), so a ratio of two
 * levels is the true ratio an interval must cover.
 */
export class NoiseSource {
  private readonly normal: Normal;
  constructor(seed: number) {
    this.normal = new Normal(seed);
  }

  /** n consecutive values of a stationary AR(1) log deviation around `level`. */
  series(level: number, n: number, noise: Pick<Ar1, 'sigma' | 'phi'>): number[] {
    const { sigma, phi } = noise;
    const innovation = sigma * Math.sqrt(1 - phi * phi);
    const out: number[] = [];
    let x = sigma * this.normal.next();
    for (let i = 0; i < n; i++) {
      if (i > 0) x = phi * x + innovation * this.normal.next();
      out.push(level * Math.exp(x - (sigma * sigma) / 2));
    }
    return out;
  }
}
