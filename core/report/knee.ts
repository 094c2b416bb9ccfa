/**
 * S5's saturation knee: sweep the offered rate, plot achieved throughput and p99
 * against it, and find where achieved stops tracking offered.
 *
 * The rule, applied in order of increasing offered rate (unlimited-rate points are ignored):
 *  1. Baseline efficiency e0 = achieved / offered at the lowest offered rate, capped at 1 (or the
 *     reference's, below). A system that lags even at the lowest load (the original study's RMW case,
 *     ~17% below target throughout) is judged against its own baseline, and the lag is reported.
 *  2. A point tracks when achieved >= 95% x e0 x offered AND its p99 <= max(3 x the baseline p99
 *     (p99 at the lowest rate), an absolute floor of 10 ms). Either failing is saturation: a queue
 *     that keeps up on throughput but explodes on latency is saturated too. The floor keeps a
 *     sub-millisecond baseline from calling 3 ms "saturated" (3x of 0.8 ms is noise, not a queue).
 *     An overloaded point (sysbench's event queue filled: offered > capacity) never tracks.
 *  3. The knee is the last tracking point before the first non-tracking one: the highest offered
 *     rate the system sustains. The capacity is the highest achieved rate over the whole sweep (the
 *     plateau the original study reads off, e.g. r6g ~64.8k ops/s).
 * A failed step (no achieved rate) counts as not tracking.
 *
 * A sweep repeated on fresh servers passes one reference to every repeat (KneeOptions.reference: the
 * median over the repeats of their lowest-rate efficiency and p99). Each repeat's own lowest-rate p99
 * is one noisy sample: judged against it, the same curve got opposite verdicts in two repeats.
 */

/** The default absolute latency floor of the knee rule, ms. */
export const DEFAULT_LATENCY_FLOOR_MS = 10;

/** The default share of (baseline efficiency x offered) a point must achieve to track. */
export const DEFAULT_TRACKING_RATIO = 0.95;

export interface RatePoint {
  /** Offered transactions/s (all clients). */
  readonly offered: number;
  /** Achieved transactions/s; null when the step failed. */
  readonly achieved: number | null;
  /** Tail latency (p99 or the run's percentile) in ms; null when unknown. */
  readonly p99Ms: number | null;
  /** sysbench's event queue filled (offered > capacity); achieved is the rate before it stopped. */
  readonly overloaded?: boolean;
}

export interface KneeOptions {
  /** Share of (baseline-efficiency x offered) achieved still counted as tracking. Default 0.95. */
  readonly trackingRatio?: number;
  /** p99 above this multiple of the baseline p99 is saturation. Default 3. */
  readonly latencyFactor?: number;
  /** ... but only when also above this many ms. Default DEFAULT_LATENCY_FLOOR_MS. */
  readonly latencyFloorMs?: number;
  /**
   * The baseline to judge against instead of this curve's own lowest point (one reference for every
   * repeat of a variant, so that the same curve gets the same verdict in each).
   */
  readonly reference?: KneeReference;
}

/** What a curve is judged against: its efficiency and p99 at low load. */
export interface KneeReference {
  /** achieved / offered at the lowest rate, at most 1; null when unknown. */
  readonly efficiency: number | null;
  /** p99 at the lowest rate, ms; null when unknown. */
  readonly p99Ms: number | null;
}

/** The median of the values (the mean of the middle two for an even count); null when there are none. */
export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const s = [...values].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** A curve's own reference: its lowest offered rate's efficiency (capped at 1) and p99. */
function ownReference(points: readonly RatePoint[]): KneeReference {
  const first = points.filter((p) => p.offered > 0).sort((a, b) => a.offered - b.offered)[0];
  if (first === undefined) return { efficiency: null, p99Ms: null };
  return {
    efficiency: first.achieved !== null ? Math.min(1, first.achieved / first.offered) : null,
    p99Ms: first.p99Ms !== null && first.p99Ms > 0 ? first.p99Ms : null,
  };
}

/**
 * One reference for several repeats of a curve: the median of their own references, so that no single
 * repeat's lowest-rate sample sets the limit for the others.
 */
export function pooledReference(curves: readonly (readonly RatePoint[])[]): KneeReference {
  const own = curves.map(ownReference);
  return {
    efficiency: median(own.map((r) => r.efficiency).filter((e): e is number => e !== null)),
    p99Ms: median(own.map((r) => r.p99Ms).filter((e): e is number => e !== null)),
  };
}

export interface KneeResult {
  /** Highest offered rate still tracked; null when even the lowest point does not track. */
  readonly kneeOffered: number | null;
  readonly kneeAchieved: number | null;
  /** Lowest offered rate that no longer tracks; null when every point tracks (not saturated). */
  readonly saturatedAtOffered: number | null;
  /** Why saturatedAtOffered does not track. */
  readonly reason: 'throughput' | 'latency' | 'overloaded' | 'failed' | null;
  /** Lowest offered rate whose step overloaded; null when none did. */
  readonly firstOverloadedOffered: number | null;
  /** The p99 limit the latency rule applied: max(latencyFactor x baseline, floor); null without a baseline. */
  readonly latencyLimitMs: number | null;
  /** Highest achieved rate over the sweep. */
  readonly capacity: number | null;
  readonly baselineEfficiency: number | null;
  readonly baselineP99Ms: number | null;
  readonly points: number;
  /** One sentence for the report. */
  readonly summary: string;
}

export function findKnee(input: readonly RatePoint[], options: KneeOptions = {}): KneeResult {
  const trackingRatio = options.trackingRatio ?? DEFAULT_TRACKING_RATIO;
  const latencyFactor = options.latencyFactor ?? 3;
  const latencyFloorMs = options.latencyFloorMs ?? DEFAULT_LATENCY_FLOOR_MS;
  const points = input
    .filter((p) => p.offered > 0)
    .slice()
    .sort((a, b) => a.offered - b.offered);
  const achievedAll = points.map((p) => p.achieved).filter((a): a is number => a !== null);
  const capacity = achievedAll.length > 0 ? Math.max(...achievedAll) : null;
  const first = points[0];
  if (first === undefined) {
    return {
      kneeOffered: null,
      kneeAchieved: null,
      saturatedAtOffered: null,
      reason: null,
      firstOverloadedOffered: null,
      latencyLimitMs: null,
      capacity,
      baselineEfficiency: null,
      baselineP99Ms: null,
      points: 0,
      summary: 'no offered-rate points (rate > 0) to find a knee in',
    };
  }
  const reference = options.reference ?? ownReference(points);
  const e0 = reference.efficiency;
  const p0 = reference.p99Ms;
  const latencyLimit = p0 !== null && p0 > 0 ? Math.max(latencyFactor * p0, latencyFloorMs) : null;
  let knee: RatePoint | undefined;
  let saturated: RatePoint | undefined;
  let reason: KneeResult['reason'] = null;
  for (const p of points) {
    if (p.overloaded === true) {
      saturated = p;
      reason = 'overloaded';
      break;
    }
    if (p.achieved === null || e0 === null) {
      saturated = p;
      reason = 'failed';
      break;
    }
    if (p.achieved < trackingRatio * e0 * p.offered) {
      saturated = p;
      reason = 'throughput';
      break;
    }
    if (latencyLimit !== null && p.p99Ms !== null && p.p99Ms > latencyLimit) {
      saturated = p;
      reason = 'latency';
      break;
    }
    knee = p;
  }
  const fmt = (x: number): string => Math.round(x).toLocaleString('en-US');
  const fmtMs = (x: number): string => (x >= 10 ? x.toFixed(0) : x.toFixed(1));
  const lag =
    e0 !== null && e0 < trackingRatio
      ? ` Even the lowest rate achieved only ${(e0 * 100).toFixed(0)}% of offered; tracking is judged against that.`
      : '';
  let summary: string;
  if (saturated === undefined) {
    summary =
      `not saturated: achieved tracks offered up to ${fmt(points[points.length - 1]!.offered)}/s (the ` +
      `highest rate tried).${lag}`;
  } else if (knee === undefined) {
    summary =
      `saturated from the lowest rate tried (${fmt(saturated.offered)}/s, ${reason}); ` +
      `capacity ${capacity !== null ? fmt(capacity) + '/s' : 'unknown'}.${lag}`;
  } else {
    const why =
      reason === 'latency'
        ? `p99 rose above ${latencyLimit !== null ? `${fmtMs(latencyLimit)} ms` : '?'} (${latencyFactor}x its ` +
          `baseline, at least ${latencyFloorMs} ms)`
        : reason === 'overloaded'
          ? `the server could not keep up (sysbench's event queue ` +
            `filled; ${saturated.achieved !== null ? `achieved ${fmt(saturated.achieved)}/s` : 'achieved unknown'})`
          : reason === 'failed'
            ? 'the step failed'
            : `achieved fell below ${(trackingRatio * 100).toFixed(0)}% of offered`;
    summary =
      `knee at ${fmt(knee.offered)}/s offered; at ${fmt(saturated.offered)}/s ${why}; capacity ` +
      `~${capacity !== null ? fmt(capacity) : '?'}/s.${lag}`;
  }
  return {
    kneeOffered: knee?.offered ?? null,
    kneeAchieved: knee?.achieved ?? null,
    saturatedAtOffered: saturated?.offered ?? null,
    reason,
    firstOverloadedOffered: points.find((p) => p.overloaded === true)?.offered ?? null,
    latencyLimitMs: latencyLimit,
    capacity,
    baselineEfficiency: e0,
    baselineP99Ms: p0,
    points: points.length,
    summary,
  };
}
