/**
 * Change points of a noisy performance series, by E-Divisive means with a permutation test.
 * See Matteson and James, "A nonparametric approach for multiple change point analysis of multivariate data", JASA
 * 2014.
 * MongoDB's performance CI runs the same method. See Daly et al., ICPE 2020, and PyPI signal-processing-algorithms.
 * So does Apache Otava, formerly Hunter. See Fleming et al., ICPE 2023, and PyPI apache-otava.
 *
 * The series is split where the energy statistic between before and after is largest.
 * The split is kept when a permutation test finds so large a statistic unlikely without a change.
 * Each test shuffles every segment within itself and takes the largest statistic over the segments.
 * p = #(permuted >= observed) / (permutations + 1), as both implementations count.
 * Segments are split again until the next split is not significant.
 * No distribution is assumed, so a change in level, spread or shape is a change.
 *
 * Two statistics, both with distances |x - y|.
 * 'u-statistic-best-end' is the default, after Matteson and James and Otava's calculator.py.
 * It maximises over the end of Y too, so it finds a change that is undone later. One scan is O(L^2).
 * 'v-statistic-to-end' follows signal-processing-algorithms 2.1.6.
 * Y always runs to the segment's end, and one scan is O(L log L) with Fenwick trees.
 * A change that is undone later is diluted in Y and rarely found.
 *
 * The p-values use the seeded generator of random.ts, so a history is reproducible.
 * With `stopEarly` a test stops once the candidate can no longer be significant.
 * See Besag and Clifford, "Sequential Monte Carlo p-values", Biometrika 1991.
 * The decisions and the kept change points' p-values are exactly those of the full test.
 */
import { SeededRandom } from '../random';

export type EDivisiveStatistic = 'v-statistic-to-end' | 'u-statistic-best-end';

export interface EDivisiveOptions {
  /** A split is kept when its p-value is at most this. Default 0.05, as in signal-processing-algorithms. */
  readonly significance?: number;
  /** Permutations per test. Default 100, as in both implementations. */
  readonly permutations?: number;
  /** Seed of the permutations, a uint32. Default 1. */
  readonly seed?: number;
  readonly statistic?: EDivisiveStatistic;
  /** Stop a test once it cannot be significant any more. The decision stays the full test's. Default true. */
  readonly stopEarly?: boolean;
  /**
   * With stopEarly, a test stops only once its p-value is sure to exceed this.
   * The rejected candidate's p-value is then exact up to it, so a near-miss can be told from a clear no.
   * Decisions and change points do not depend on it. Default is the significance.
   */
  readonly exactUpTo?: number;
}

interface ChangePoint {
  /** Index of the first value after the change. */
  readonly index: number;
  /** The energy statistic of the split (q-hat). */
  readonly statistic: number;
  readonly pValue: number;
  /** Permutations the test ran, and how many gave a statistic at least as large. */
  readonly permutations: number;
  readonly exceedances: number;
}

export interface EDivisiveResult {
  /** Significant change points, by index. */
  readonly changePoints: readonly ChangePoint[];
  /** Their indexes in the order they were found, the strongest split first. */
  readonly discoveryOrder: readonly number[];
  /** The candidate whose test ended the search. Null when no segment could be split. */
  readonly rejected: (ChangePoint & { readonly stoppedEarly: boolean }) | null;
}

/** A segment's values as ranks into its sorted values, with what every scan of it reuses. */
interface Prepared {
  readonly start: number;
  readonly length: number;
  /** The segment's values, ascending. */
  readonly sorted: Float64Array;
  /** Rank into `sorted` of the value at each position of the segment, in series order. */
  readonly ranks: Int32Array;
  /** Sum of |v - w| over every w of the segment, per rank. It is the same for every order of the segment. */
  readonly distanceToAll: Float64Array;
  /** Sum of |v_i - v_j| over the segment's pairs i < j. */
  readonly pairSum: number;
}

interface Best {
  readonly tau: number;
  readonly statistic: number;
}

function prepare(series: ArrayLike<number>, start: number, end: number): Prepared {
  const length = end - start;
  const order = Array.from({ length }, (_, i) => i).sort((a, b) => series[start + a]! - series[start + b]! || a - b);
  const sorted = new Float64Array(length);
  const ranks = new Int32Array(length);
  order.forEach((pos, rank) => {
    sorted[rank] = series[start + pos]!;
    ranks[pos] = rank;
  });
  let total = 0;
  for (let k = 0; k < length; k++) total += sorted[k]!;
  const distanceToAll = new Float64Array(length);
  let below = 0;
  let pairSum = 0;
  for (let k = 0; k < length; k++) {
    const v = sorted[k]!;
    // k values at or below v, length - 1 - k above it.
    distanceToAll[k] = v * k - below + (total - below - v) - v * (length - 1 - k);
    pairSum += v * (2 * k - length + 1);
    below += v;
  }
  return { start, length, sorted, ranks, distanceToAll, pairSum };
}

/** Scratch reused by every scan. A Fenwick tree of interleaved count and sum pairs by rank. */
class Scratch {
  tree: Float64Array;
  constructor(size: number) {
    this.tree = new Float64Array(2 * (size + 1));
  }
}

/**
 * signal-processing-algorithms' statistic for every tau of one order of a segment.
 * Moving the value at tau from Y to X changes the pair sums by its distances to the other values.
 * A Fenwick query over ranks gives those, so the scan is O(L log L) instead of O(L^2).
 */
function scanV(p: Prepared, ranks: Int32Array, scratch: Scratch, out?: Float64Array): Best {
  const L = p.length;
  const tree = scratch.tree;
  const sorted = p.sorted;
  const distanceToAll = p.distanceToAll;
  tree.fill(0, 0, 2 * (L + 1));
  let withinX = 0;
  let withinY = p.pairSum;
  let cross = 0;
  let sumX = 0;
  let bestTau = 0;
  let best = 0; // tau = 0 leaves X empty, so the statistic is 0
  if (out) out[0] = 0;
  for (let tau = 0; tau < L - 1; tau++) {
    const r = ranks[tau]!;
    const v = sorted[r]!;
    let below = 0;
    let belowSum = 0;
    for (let i = r; i > 0; i -= i & -i) {
      below += tree[2 * i]!;
      belowSum += tree[2 * i + 1]!;
    }
    const toBefore = v * below - belowSum + (sumX - belowSum) - v * (tau - below);
    const toAfter = distanceToAll[r]! - toBefore;
    withinX += toBefore;
    withinY -= toAfter;
    cross += toAfter - toBefore;
    sumX += v;
    for (let i = r + 1; i <= L; i += i & -i) {
      tree[2 * i] = tree[2 * i]! + 1;
      tree[2 * i + 1] = tree[2 * i + 1]! + v;
    }
    // The split after the value just moved, with n = tau + 1 values in X.
    // As in calculate_t of e_divisive.c, the within terms are full double sums over n^2 and m^2.
    const n = tau + 1;
    const m = L - n;
    const stat = ((n * m) / L) * ((2 * cross) / (n * m) - (2 * withinX) / (n * n) - (2 * withinY) / (m * m));
    if (out) out[n] = stat;
    if (stat > best) {
      best = stat;
      bestTau = n;
    }
  }
  return { tau: bestTau, statistic: best };
}

/**
 * Matteson and James' statistic maximised over tau and kappa, as in Otava's PairDistanceCalculator.
 * Q(tau, kappa) = 2/(n+m) sum|X-Y| - 2m/((n+m)(n-1)) sum_{i<k}|X_i-X_k| - 2n/((n+m)(m-1)) sum_{j<k}|Y_j-Y_k|
 * A one-value side has within terms 0.
 * The argmax runs in row order with zeros below the diagonal, as Otava's does.
 * So ties and all-negative segments give Otava's candidate.
 */
function scanU(p: Prepared, ranks: Int32Array, scratch: UScratch): Best {
  const L = p.length;
  const { values, columns, inverse, inverseLess1 } = scratch;
  for (let i = 0; i < L; i++) values[i] = p.sorted[ranks[i]!]!;
  // columns[c * L + i] = sum_{i' < i} |v_i' - v_c| for i <= c.
  for (let c = 0; c < L; c++) {
    let acc = 0;
    const base = c * L;
    columns[base] = 0;
    const vc = values[c]!;
    for (let i = 1; i <= c; i++) {
      acc += Math.abs(values[i - 1]! - vc);
      columns[base + i] = acc;
    }
  }
  let best = -Infinity;
  let bestRow = 0;
  let withinX = 0;
  const size = L - 1;
  for (let row = 0; row < size; row++) {
    const n = row + 1; // tau, with X = [0, tau)
    withinX += columns[(n - 1) * L + (n - 1)]!;
    const xTerm = inverseLess1[n]! * withinX;
    let cross = 0;
    let withinY = 0;
    // kappa = n + m runs from n + 1 to L. The value at kappa - 1 joins Y.
    for (let m = 1; n + m <= L; m++) {
      const base = (n + m - 1) * L;
      const toX = columns[base + n]!;
      cross += toX;
      withinY += columns[base + n + m - 1]! - toX;
      const q = 2 * inverse[n + m]! * (cross - m * xTerm - n * inverseLess1[m]! * withinY);
      if (q > best) {
        best = q;
        bestRow = row;
      }
    }
  }
  // Otava's matrix has zeros below the diagonal.
  // So when no split is positive, its candidate is the first zero, row 1, tau = 2.
  if (size >= 2 && (best < 0 || (best === 0 && bestRow >= 1))) return { tau: 2, statistic: 0 };
  return { tau: bestRow + 1, statistic: best };
}

/** Scratch of the O(L^2) scan. */
class UScratch {
  values: Float64Array;
  columns: Float64Array;
  /** 1/k. */
  inverse: Float64Array;
  /** 1/(k-1), and 0 for k = 1 since a one-value side has no within pairs. */
  inverseLess1: Float64Array;
  constructor(size: number) {
    this.values = new Float64Array(size);
    this.columns = new Float64Array(size * size);
    this.inverse = new Float64Array(size + 1);
    this.inverseLess1 = new Float64Array(size + 1);
    for (let k = 1; k <= size; k++) {
      this.inverse[k] = 1 / k;
      this.inverseLess1[k] = k > 1 ? 1 / (k - 1) : 0;
    }
  }
}

/**
 * signal-processing-algorithms' statistic at every tau of a series, for checks.
 * @internal Exported for its tests.
 */
export function vStatistics(series: readonly number[]): Float64Array {
  const p = prepare(series, 0, series.length);
  const out = new Float64Array(series.length);
  if (series.length > 0) scanV(p, p.ranks, new Scratch(series.length), out);
  return out;
}

/**
 * The best split of a whole series under a statistic, for checks.
 * @internal Exported for its tests.
 */
export function bestSplit(
  series: readonly number[],
  statistic: EDivisiveStatistic = 'u-statistic-best-end',
): { index: number; statistic: number } {
  const p = prepare(series, 0, series.length);
  const best =
    statistic === 'v-statistic-to-end'
      ? scanV(p, p.ranks, new Scratch(series.length))
      : scanU(p, p.ranks, new UScratch(series.length));
  return { index: best.tau, statistic: best.statistic };
}

/** Relative difference below which two statistics are the same value computed in a different order. */
const TIE_TOLERANCE = 1e-9;

export function eDivisive(series: readonly number[], options: EDivisiveOptions = {}): EDivisiveResult {
  const significance = options.significance ?? 0.05;
  const permutations = options.permutations ?? 100;
  const statistic = options.statistic ?? 'u-statistic-best-end';
  const stopEarly = options.stopEarly ?? true;
  const exactUpTo = Math.max(significance, options.exactUpTo ?? significance);
  if (!(significance > 0 && significance < 1))
    throw new RangeError(`significance must be in (0, 1), got ${significance}`);
  if (!Number.isInteger(permutations) || permutations < 1)
    throw new RangeError(`permutations must be a positive integer, got ${permutations}`);
  for (let i = 0; i < series.length; i++) {
    if (!Number.isFinite(series[i])) throw new RangeError(`series[${i}] is not a finite number: ${series[i]}`);
  }
  const n = series.length;
  const rng = new SeededRandom(options.seed ?? 1);
  const scratch = new Scratch(n);
  const uScratch = statistic === 'u-statistic-best-end' ? new UScratch(n) : null;
  const permuted = new Int32Array(n);
  const scan = (p: Prepared, ranks: Int32Array): Best =>
    uScratch === null ? scanV(p, ranks, scratch) : scanU(p, ranks, uScratch);

  const found: ChangePoint[] = [];
  const discoveryOrder: number[] = [];
  const observed = new Map<string, { prepared: Prepared; best: Best }>();
  const segmentOf = (start: number, end: number) => {
    const key = `${start}:${end}`;
    let s = observed.get(key);
    if (!s) {
      const prepared = prepare(series, start, end);
      s = { prepared, best: scan(prepared, prepared.ranks) };
      observed.set(key, s);
    }
    return s;
  };

  for (;;) {
    const bounds = [0, ...found.map((c) => c.index).sort((a, b) => a - b), n];
    const segments = [];
    for (let i = 0; i + 1 < bounds.length; i++)
      if (bounds[i + 1]! - bounds[i]! >= 2) segments.push(segmentOf(bounds[i]!, bounds[i + 1]!));
    if (segments.length === 0) return { changePoints: sorted(found), discoveryOrder, rejected: null };
    let candidate = segments[0]!;
    for (const s of segments) if (s.best.statistic > candidate.best.statistic) candidate = s;
    const observedStatistic = candidate.best.statistic;
    const index = candidate.prepared.start + candidate.best.tau;

    // A permutation that reproduces the observed split or its mirror image is a tie and counts.
    // Summed in another order, its statistic can differ in the last bits.
    // So "at least as large" allows for rounding.
    const atLeast = observedStatistic - TIE_TOLERANCE * Math.abs(observedStatistic);
    let exceedances = 0;
    let ran = 0;
    let stoppedEarly = false;
    for (let k = 0; k < permutations; k++) {
      let permutedBest = -Infinity;
      for (const s of segments) {
        const ranks = permuted.subarray(0, s.prepared.length);
        ranks.set(s.prepared.ranks);
        rng.shuffle(ranks);
        const b = scan(s.prepared, ranks);
        if (b.statistic > permutedBest) permutedBest = b.statistic;
      }
      ran++;
      if (permutedBest >= atLeast) exceedances++;
      if (stopEarly && exceedances > exactUpTo * (permutations + 1)) {
        stoppedEarly = ran < permutations;
        break;
      }
    }
    const pValue = exceedances / (permutations + 1);
    const point: ChangePoint = { index, statistic: observedStatistic, pValue, permutations: ran, exceedances };
    if (pValue > significance)
      return { changePoints: sorted(found), discoveryOrder, rejected: { ...point, stoppedEarly } };
    found.push(point);
    discoveryOrder.push(index);
  }
}

function sorted(points: readonly ChangePoint[]): ChangePoint[] {
  return [...points].sort((a, b) => a.index - b.index);
}
