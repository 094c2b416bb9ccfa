/**
 * The axis of a ratio chart, in percent: logarithmic, because a ratio's interval is symmetric on the
 * log scale (context.ts ratioOf), with round bounds around the estimates and 100%. An interval
 * reaching far past them is clipped at the axis edge, and the chart marks the clip, so a 2-repeat
 * interval of 2%–4,000% cannot squeeze estimates of 90–120% into a few pixels.
 */

/** How far past the estimates (and 100%) an interval may stretch the axis: a factor of 4 each way. */
const STRETCH = 4;

/** Round axis ends: these mantissas in every decade (90% and 110% suit estimates close to 100%). */
const MANTISSAS = [1, 1.1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 7, 8, 9] as const;

export interface RatioAxis {
  readonly min: number;
  readonly max: number;
}

function stops(): number[] {
  const out: number[] = [];
  for (let k = -3; k <= 9; k++) for (const m of MANTISSAS) out.push(Number((m * 10 ** k).toPrecision(3)));
  return out;
}
const STOPS = stops();

/**
 * Bounds for percent ratios: `estimates` always inside, interval ends inside unless they reach more
 * than a factor STRETCH past the estimates' span (those are clipped with clipRatio).
 */
export function ratioAxis(estimates: readonly number[], intervalEnds: readonly number[]): RatioAxis {
  const finite = (xs: readonly number[]): number[] => xs.filter((x) => Number.isFinite(x) && x > 0);
  const core = [100, ...finite(estimates)];
  const lo0 = Math.min(...core);
  const hi0 = Math.max(...core);
  const all = [...core, ...finite(intervalEnds)];
  const lo = Math.max(lo0 / STRETCH, Math.min(...all)) / 1.03;
  const hi = Math.min(hi0 * STRETCH, Math.max(...all)) * 1.03;
  const min = [...STOPS].reverse().find((s) => s <= lo) ?? STOPS[0]!;
  const max = STOPS.find((s) => s >= hi) ?? STOPS[STOPS.length - 1]!;
  return { min, max };
}

/** An interval end on the axis: clipped to its bounds (0 and below: to the lower bound). */
export function clipRatio(axis: RatioAxis, x: number): { value: number; clipped: boolean } {
  if (!(x >= axis.min)) return { value: axis.min, clipped: true };
  if (x > axis.max) return { value: axis.max, clipped: true };
  return { value: x, clipped: false };
}

/** The line a clipped chart carries under its title. */
export const CLIP_NOTE = 'arrow: the interval runs past the axis edge';
