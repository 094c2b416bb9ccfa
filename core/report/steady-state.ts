/**
 * Whether a step ran at a steady state, read from its per-interval TPS (sysbench --report-interval).
 * A step's mean TPS measures the server only if the load held through the step: with hundreds of
 * threads a short local step spends seconds connecting (TPS near 0 at first, more report intervals
 * than the planned time because sysbench's timer starts once every thread is up) or stalls while a
 * queue of waiters drains. Such a mean is neither a peak nor a fall-off, and scoring it scores the
 * connecting.
 */

/** An interval below this share of the step's median interval TPS is a stall. */
const STALL_SHARE = 0.1;
/**
 * The step's first or last two intervals averaging below this share of its median: a ramp or a
 * collapse. Under this machine's fitted within-run noise (bench/noise-model.ts: sigma 0.38, phi 0.42)
 * a steady step passes it but about 1 in 2,000 times, so a 90-step run flags a steady step ~5% of the time.
 */
const EDGE_SHARE = 0.3;
/** Report intervals this many past the planned seconds: threads were still connecting when the timer started. */
const EXTRA_INTERVALS = 2;
/** Fewer intervals than this cannot show a trend apart from the noise. */
const MIN_INTERVALS = 4;

export type Unsteady = 'ramped up' | 'stalled' | 'collapsed' | 'ran long';

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

/** Why a step's intervals are not a steady state, or [] when they are (or too few to tell). */
export function unsteadyReasons(tps: readonly number[], plannedS: number | null): Unsteady[] {
  if (tps.length < MIN_INTERVALS) return [];
  const m = median(tps);
  if (!(m > 0)) return [];
  const out: Unsteady[] = [];
  if (mean(tps.slice(0, 2)) < EDGE_SHARE * m) out.push('ramped up');
  if (tps.some((x) => x < STALL_SHARE * m)) out.push('stalled');
  if (mean(tps.slice(-2)) < EDGE_SHARE * m) out.push('collapsed');
  if (plannedS !== null && tps.length >= plannedS + EXTRA_INTERVALS) out.push('ran long');
  return out;
}

/** The rule in words, said once where the ~ marks are; it tests sysbench's interval count, not the wall time. */
export const UNSTEADY_RULE =
  'TPS ramping up, stalling below a tenth of its median or collapsing within the step, or sysbench reporting 2+ ' +
  '1 s intervals more than the planned seconds; a long wall time alone (it adds warm-up and connecting) is no mark';
