/**
 * What a study's analysis finds, as typed values independent of how they are shown: estimates with
 * the interval around them and what that interval covers, ratios with their verdicts. The
 * analyses (core/report/studies/*.ts) return these; the terminal, the HTML page and `report --json`
 * render them.
 *
 * What an interval covers decides what may be said of it. Only an interval built from repeats
 * (each a fresh server, or a duet's rounds) sees run-to-run variation; one built from batch means
 * of a single run's per-interval samples sees only how the run wobbled within itself, which on a
 * shared machine is a fraction of the run-to-run spread. A ranking, a difference or a fall-off is
 * "beyond the noise" only on run-to-run evidence.
 */
import { fixed, num, pct } from '../format';
import { ratioVerdict, type ConfidenceInterval } from './stats';

/** run-to-run: from 2+ repeats (or duet rounds); within-run: batch means of one run's intervals; none: no interval. */
export type Covers = 'run-to-run' | 'within-run' | 'none';

export interface Interval {
  readonly low: number;
  readonly high: number;
  /** Confidence level, e.g. 0.95. */
  readonly level: number;
  readonly covers: Covers;
  /** Samples behind it: repeats, rounds, or batches of one run. */
  readonly n: number;
}

/** An estimate (a mean over repeats, or one run's figure) and its interval. */
export interface Estimated {
  readonly value: number | null;
  readonly interval: Interval | null;
}

type Direction = 'higher' | 'lower' | 'within-noise' | 'unknown';

/** A ratio a/b with its interval and where the interval sits against 100%. */
export interface RatioFinding {
  readonly estimate: number | null;
  readonly interval: Interval | null;
  readonly direction: Direction;
}

export function coversOf(ci: ConfidenceInterval, covers: Covers): Interval | null {
  if (!Number.isFinite(ci.low) || !Number.isFinite(ci.high) || covers === 'none') return null;
  return { low: ci.low, high: ci.high, level: ci.level, covers, n: ci.n };
}

export function ratioFinding(ci: ConfidenceInterval, covers: Covers): RatioFinding {
  const interval = coversOf(ci, covers);
  return {
    estimate: Number.isFinite(ci.estimate) ? ci.estimate : null,
    interval,
    direction: interval === null ? 'unknown' : ratioVerdict(ci),
  };
}

/** The narrower of two coverages (a ratio of a repeated side over a single run sees only within-run noise). */
export function weakest(a: Covers, b: Covers): Covers {
  if (a === 'none' || b === 'none') return 'none';
  return a === 'within-run' || b === 'within-run' ? 'within-run' : 'run-to-run';
}

// ---------------------------------------------------------------------------------------------
// Words and numbers shared by the renderers

/**
 * A value with its interval as a range, never "±": "4,494 (0–18,602)". The interval of a quantity
 * that cannot be negative (throughput, latency) is cut at 0; whole numbers from 100 up.
 */
export function rangeText(e: Estimated, digits?: number): string {
  if (e.value === null) return '-';
  const d = digits ?? (Math.abs(e.value) >= 100 ? 0 : 2);
  if (e.interval === null) return fixed(e.value, d);
  const mark = e.interval.covers === 'within-run' ? '*' : '';
  return `${fixed(e.value, d)} (${fixed(Math.max(0, e.interval.low), d)}–${fixed(e.interval.high, d)})${mark}`;
}

/** Interval ends past these are shown as "<10%" and ">1,000%": a ratio known only within 100x is not a figure. */
const RATIO_SHOWN_LOW = 0.1;
const RATIO_SHOWN_HIGH = 10;

/** "93.0% (89.1%–97.2%)"; "86.7% (<10%–>1,000%)" for an interval too wide to print. */
export function ratioText(r: RatioFinding, digits = 1): string {
  if (r.estimate === null) return '-';
  const low = (x: number): string => (x < RATIO_SHOWN_LOW ? '<10%' : pct(x, digits));
  const high = (x: number): string => (x > RATIO_SHOWN_HIGH ? '>1,000%' : pct(x, digits));
  const range = r.interval !== null ? ` (${low(r.interval.low)}–${high(r.interval.high)})` : '';
  return `${pct(r.estimate, digits)}${range}`;
}

/**
 * The verdict in words. On run-to-run evidence: better / worse / within noise. On one run's
 * intervals: "higher in this run" and the like, never "beyond the noise". Unknown: no interval.
 */
export function verdictText(r: RatioFinding, higherIsBetter: boolean): string {
  const good = (d: Direction): boolean => (d === 'higher') === higherIsBetter;
  if (r.direction === 'unknown' || r.interval === null) return 'noise unknown';
  if (r.interval.covers === 'within-run') {
    if (r.direction === 'within-noise') return "within this run's noise";
    return `${good(r.direction) ? 'better' : 'worse'} in this run*`;
  }
  if (r.direction === 'within-noise') return 'within noise';
  return good(r.direction) ? 'better' : 'worse';
}

/** A table cell of a ratio: its estimate and interval, then its verdict, e.g. "93.2% (90.1%–96.4%) worse". */
export function ratioCell(r: RatioFinding, higherIsBetter: boolean, digits = 1): string {
  return `${ratioText(r, digits)} ${verdictText(r, higherIsBetter)}`;
}

/**
 * A ratio in a sentence: with its interval where the interval tells a difference, else the
 * estimate and its verdict alone ("59.6% within noise"): an unresolved interval of a few repeats
 * can span orders of magnitude and says nothing the verdict does not (the table keeps it).
 */
export function claimText(r: RatioFinding, higherIsBetter: boolean, digits = 1): string {
  if (r.estimate === null) return '-';
  if (r.direction === 'higher' || r.direction === 'lower') return ratioCell(r, higherIsBetter, digits);
  return `${pct(r.estimate, digits)} ${verdictText(r, higherIsBetter)}`;
}

/** A ratio in few characters for grids: "83% (79–88) worse". */
export function compactRatio(r: RatioFinding, higherIsBetter: boolean): string {
  if (r.estimate === null) return '-';
  const range =
    r.interval !== null ? ` (${(r.interval.low * 100).toFixed(0)}–${(r.interval.high * 100).toFixed(0)})` : '';
  return `${(r.estimate * 100).toFixed(0)}%${range} ${verdictText(r, higherIsBetter)}`;
}

/** The note every table with a within-run interval carries. */
export const WITHIN_RUN_NOTE =
  '*: interval from batch means of one run’s per-interval samples: it sees how that run wobbled, not how runs ' +
  'differ (run 2+ repeats to measure that), so it cannot tell a difference beyond the noise.';

/** A whole number with separators, e.g. 5029 -> "5,029". */
export const whole = (x: number | null): string => num(x, 0);
