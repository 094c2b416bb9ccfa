/**
 * S5, offered vs achieved: per rate sweep and variant, each repeat's curve at the rates that repeat
 * was really offered, its knee (core/report/knee.ts) and its capacity; across repeats the capacity
 * with its interval and the capacity ratio of each later variant to the first (the baseline).
 *
 * Why per repeat: a local rehearsal offers multiples of each repeat's own measured capacity
 * (ratesOfCapacity), so the repeats probe different rates. Averaging their offered rates gives a
 * rate nobody offered, and their achieved spread would mostly be the difference in offered rate.
 * The capacity of a repeat is its saturation throughput, as the study defines saturation: where achieved
 * levels off under offered load, the highest rate it achieved at an offered rate (open loop). The
 * unlimited-rate step (closed loop: the threads wait for their own replies) can run faster than any offered
 * rate achieves; it is kept apart as the unlimited-rate TPS, the base of the relative rates (0.5x ...).
 */
import type { StepResult } from '../../lake/results';
import { lineChart, spansDecades, type XYSeries } from '../charts';
import { fixed, pct } from '../../format';
import {
  findKnee,
  median,
  pooledReference,
  DEFAULT_LATENCY_FLOOR_MS,
  DEFAULT_TRACKING_RATIO,
  type KneeReference,
  type KneeResult,
} from '../knee';
import type { ChartBlock, ReportSection, TableBlock } from '../model';
import {
  coversOf,
  rangeText,
  ratioFinding,
  ratioText,
  verdictText,
  whole,
  type Estimated,
  type RatioFinding,
} from '../findings';
import {
  mean,
  meanCi,
  repeatsToResolve,
  summarize,
  welchDifferenceCi,
  welchRatioCi,
  type ConfidenceInterval,
} from '../stats';
import { rateSweepKeys, sweepKeyOf, uniqueInOrder, type Context, type StepGroup } from '../context';
import { analyzeLocalCaveats, scopeSentence } from '../local-caveats';
import { currencyOf, perMoneySentence, perMoneyText, priceRatioOf, systemSentence } from './rate-basis';

interface RatePoint {
  readonly repeat: number;
  /** The step and the repeat's cell: where its server metrics are. */
  readonly stepId: string;
  readonly cellId: string;
  /** The rate this repeat was offered, transactions/s over all clients. */
  readonly offered: number;
  readonly achieved: number | null;
  /** The run's percentile (p99 in S5), ms; at most the run's exact max (see latencyCapped). */
  readonly latencyMs: number | null;
  /** sysbench's percentile (a histogram bucket's upper end) was above the exact max: the max is shown. */
  readonly latencyCapped: boolean;
  /** The run's p50, ms; null when not printed (an overloaded step has no histogram). */
  readonly p50Ms: number | null;
  readonly status: 'ok' | 'overloaded' | 'failed' | 'skipped';
  readonly clientBound: boolean;
  /** The multiple of the repeat's capacity offered (ratesOfCapacity); null for an absolute rate. */
  readonly rateOfCapacity: number | null;
}

interface RepeatKnee {
  readonly repeat: number;
  /** The highest rate this repeat offered and kept up with (an offered rate, never a mean). */
  readonly kneeOffered: number | null;
  readonly kneeAchieved: number | null;
  /** The lowest offered rate it did not keep up with, and why. */
  readonly saturatedAtOffered: number | null;
  readonly reason: KneeResult['reason'];
  readonly capacity: number | null;
  /** What this repeat's unlimited-rate step achieved: the base of its relative rates (0.5x, 0.9x ...). */
  readonly unlimitedTps: number | null;
  /** The offered rate whose achieved is the capacity, and its multiple of the unlimited-rate TPS (or null). */
  readonly capacityAt: { readonly offered: number; readonly x: number | null } | null;
  /** No offered rate saturated this repeat: its capacity is a lower bound. */
  readonly capacityLowerBound: boolean;
  /** The lowest offered rate at which the client saturated its CPU; null when it never did. */
  readonly clientBoundFrom: number | null;
  /** Where this repeat's knee lies, as its offered rates can say it; null when it was offered no rate. */
  readonly bracket: RepeatBracket | null;
}

interface RateVariant {
  readonly variant: string;
  readonly instanceClass: string;
  readonly points: readonly RatePoint[];
  readonly repeats: readonly RepeatKnee[];
  /** Capacity (saturation throughput) over the repeats: the mean, with a run-to-run interval from 2+ repeats. */
  readonly capacity: Estimated;
  /** The unlimited-rate TPS over the repeats (closed loop); null when no repeat ran one. */
  readonly unlimitedTps: number | null;
  /** The knees' offered rates over the repeats (lowest, highest); null when no repeat tracked. */
  readonly kneeRange: readonly [number, number] | null;
  /** What every repeat's curve is judged against: the median over the repeats of their lowest-rate values. */
  readonly reference: KneeReference;
  /** The p99 limit the knee rule applied to every repeat, ms; null without a reference p99. */
  readonly latencyLimitMs: number | null;
  /** The knee over the repeats: one bracket when they agree, each repeat's when they do not (kneeBracketOf). */
  readonly bracket: KneeBracket | null;
  /** How many of the sweep's rates ran in some repeat (a rate skipped after an overload did not). */
  readonly ranGrid: number;
}

/**
 * Where one repeat's knee lies, as the rates it was offered can say it: between the highest rate it kept
 * up with and the next one it was offered; below its lowest rate, or above its highest, otherwise. The
 * multiples (0.5x ...) of its unlimited-rate TPS are null for absolute rates.
 */
type RepeatBracket =
  | {
      readonly kind: 'between';
      readonly lower: number;
      readonly upper: number;
      readonly lowerX: number | null;
      readonly upperX: number | null;
      /** upper / lower > 1.2: the grid is too coarse to place the knee more closely. */
      readonly coarse: boolean;
    }
  | { readonly kind: 'below'; readonly lowest: number; readonly lowestX: number | null }
  | { readonly kind: 'above'; readonly highest: number; readonly highestX: number | null };

/**
 * The knee over the repeats. When every repeat's bracket is the same (the same offered rates, or the same
 * multiples of each repeat's own unlimited-rate TPS) one bracket spans them: from the lowest lower end to
 * the highest upper end, both rates really offered. When they differ the repeats disagree, and each is
 * shown: no one bracket holds both a knee below 0.9x and one above it.
 */
type KneeBracket =
  | { readonly kind: 'agree'; readonly repeats: number; readonly bracket: RepeatBracket }
  | {
      readonly kind: 'disagree';
      readonly each: readonly { readonly repeat: number; readonly bracket: RepeatBracket }[];
    };

/** An overloaded rate offered past this multiple of the highest rate that ran to its end is not charted. */
const PAST_AXIS = 2;

/** A bracket wider than this (upper / lower) does not place a knee: add rates between its ends. */
const COARSE_BRACKET = 1.2;

interface RateSweep {
  readonly label: string;
  readonly workload: string;
  readonly threads: number;
  readonly latencyPercentile: number;
  readonly variants: readonly RateVariant[];
  /** The first variant's capacity over each later one's, with its interval over the repeats. */
  readonly capacityRatios: readonly {
    readonly variant: string;
    readonly baseline: string;
    readonly ratio: RatioFinding;
    /** Transactions per unit of money over the baseline's: the ratio over the price ratio; null without prices. */
    readonly perMoney: RatioFinding | null;
    /** The smallest factor (either way) the interval can tell from 1: the root of its high / low; null without. */
    readonly resolves: number | null;
    /** Repeats a variant that would resolve a RESOLVE_TARGET difference at these repeats' noise; null unknown. */
    readonly repeatsFor: number | null;
  }[];
  /** The p99 at each rate every variant kept up with on throughput, and each later variant's over the first's. */
  readonly p99AtRates: readonly P99AtRate[];
  /** Statements a transaction at the unlimited rate (sysbench's reads, writes, other over its events). */
  readonly perTransaction: { readonly reads: number; readonly writes: number; readonly other: number } | null;
  /** The highest CPU % of its cores any sysbench client of the sweep reached; null when not measured. */
  readonly clientCpuMaxPct: number | null;
  /** Set when the low-load p99 the limit rests on is above the unlimited-rate step's (not a queue; cause unknown). */
  readonly stalledReference: StalledReference | null;
  /** Server and machine CPU % where each repeat levelled off and at its unlimited-rate step (see cpuOf). */
  readonly cpu: SweepCpu;
}

/**
 * CPU % at each repeat's unlimited-rate step and at the rate its saturation came from: the server's
 * (CPUUtilization: its process over the CPUs it may use) and the whole machine's (the runner's ClientHostCPU).
 * Locally both share one machine: a busy machine and a server short of 100% cannot say which set the plateau.
 */
interface SweepCpu {
  readonly serverPct: readonly number[];
  readonly hostPct: readonly number[];
}

/**
 * A p99 limit built on a low-load p99 higher than the p99 with no rate set (the server at full concurrency):
 * at half the load that is a stall of a second or two in a short step, not a queue. What it costs: the
 * limits between the highest p99 that kept up and the lowest that failed the limit give the same knees.
 */
interface StalledReference {
  readonly limitMs: number;
  /** Each repeat's p99 at its lowest rate (what the limit's median is over), lowest and highest. */
  readonly lowLoadMs: readonly [number, number];
  /** The p50s of those same steps, lowest and highest; null when none was printed. */
  readonly lowLoadP50Ms: readonly [number, number] | null;
  /** How many of those lowest-rate p99s are above the unlimited-rate p99, of how many. */
  readonly above: number;
  readonly of: number;
  /** The median over every variant's repeats of the unlimited-rate step's p99. */
  readonly unlimitedMs: number;
  /** Any limit in [keptMs, failedMs) gives the same knees: a p99 above it fails. failedMs is null when none failed. */
  readonly keptMs: number | null;
  readonly failedMs: number | null;
}

/**
 * The p99 at one offered rate (a multiple of each repeat's capacity, or an absolute rate) over the repeats
 * that kept up with it on throughput: the study's p99 comparison at matched offered rates, and, between the
 * repeats of one variant (identical servers), the p99's own run-to-run noise.
 */
interface P99AtRate {
  /** "0.5x" of each repeat's unlimited-rate TPS, or "4,000/s". */
  readonly rate: string;
  /** Each variant's repeats' p99s, and the rate each of them was offered (the same multiple, different rates). */
  readonly each: readonly {
    readonly variant: string;
    readonly p99Ms: readonly number[];
    readonly offered: readonly number[];
  }[];
  readonly ratios: readonly { readonly variant: string; readonly baseline: string; readonly ratio: RatioFinding }[];
}

/** The difference the report says how many repeats would resolve (10%). */
const RESOLVE_TARGET = 0.1;

/** Fewer repeats than this measure their spread too loosely for the repeats-needed count to be firm. */
const FEW_REPEATS = 4;

export interface RateFindings {
  readonly kind: 'rate-sweep';
  readonly sweeps: readonly RateSweep[];
  readonly anyOverloaded: boolean;
  readonly anySkipped: boolean;
}

function rateSweeps(ctx: Context): { label: string; groups: StepGroup[] }[] {
  return rateSweepKeys(ctx.groups).map((key) => {
    const groups = ctx.groups.filter((g) => sweepKeyOf(g) === key);
    const first = groups[0]!;
    return {
      label: `${first.workload} (${first.threads} threads${first.target !== 'writer' ? `, ${first.target}` : ''})`,
      groups,
    };
  });
}

function statusOf(r: StepResult): RatePoint['status'] {
  return r.status === 'overloaded'
    ? 'overloaded'
    : r.status === 'skipped'
      ? 'skipped'
      : r.status === 'ok'
        ? 'ok'
        : 'failed';
}

/** A variant's rate steps (offered a rate, absolute or relative to its capacity). */
function ratedGroups(groups: readonly StepGroup[], variant: string): StepGroup[] {
  return groups.filter((g) => g.variant === variant && (g.rate > 0 || g.rateOfCapacity !== null));
}

/** One repeat's curve as the knee rule reads it; skipped points were never offered and take no part. */
function curveOf(points: readonly RatePoint[], repeat: number) {
  return points
    .filter((p) => p.repeat === repeat && p.status !== 'skipped')
    .map((p) => ({
      offered: p.offered,
      achieved: p.achieved,
      p99Ms: p.latencyMs,
      overloaded: p.status === 'overloaded',
    }));
}

/** Every repeat's curve of a variant. */
function curvesOf(points: readonly RatePoint[]) {
  return uniqueInOrder(points.map((p) => p.repeat)).map((repeat) => curveOf(points, repeat));
}

/** A row's percentile, capped at its exact max: a histogram bucket can reach past the slowest transaction. */
function latencyOf(r: StepResult): { latencyMs: number | null; latencyCapped: boolean } {
  const p = r.status === 'ok' || r.status === 'overloaded' ? r.lat_pct_ms : null;
  const max = r.lat_max_ms ?? null;
  if (p === null || max === null || p <= max) return { latencyMs: p, latencyCapped: false };
  return { latencyMs: max, latencyCapped: true };
}

function pointsOf(rated: readonly StepGroup[]): RatePoint[] {
  return rated
    .flatMap((g) =>
      g.rows.map((r) => ({
        repeat: r.repeat,
        stepId: g.stepId,
        cellId: r.cell_id,
        offered: r.offered_tps,
        achieved: r.status === 'ok' || r.status === 'overloaded' ? r.tps : null,
        ...latencyOf(r),
        p50Ms: r.status === 'ok' ? (r.lat_p50_ms ?? null) : null,
        status: statusOf(r),
        clientBound: r.saturated_clients > 0,
        rateOfCapacity: g.rateOfCapacity,
      })),
    )
    .sort((a, b) => a.offered - b.offered || a.repeat - b.repeat);
}

/**
 * @param sweepP99Ms the p99 at low load over every variant's repeats of the sweep (analyzeRate): one latency
 *   limit for all the variants compared, so that identical servers get the same verdict from the rule.
 */
function analyzeVariant(
  groups: readonly StepGroup[],
  variant: string,
  instanceClass: string,
  sweepP99Ms: number | null,
): RateVariant | null {
  const rated = ratedGroups(groups, variant);
  if (rated.length === 0) return null;
  const unlimited = groups.filter((g) => g.variant === variant && g.rate === 0 && g.rateOfCapacity === null);
  const points = pointsOf(rated);
  const repeatIds = uniqueInOrder(points.map((p) => p.repeat)).sort((a, b) => a - b);
  // One reference for every repeat (core/report/knee.ts): the variant's own low-load efficiency (a lag is
  // its own), the sweep's low-load p99 (one limit for every variant).
  const reference = { ...pooledReference(curvesOf(points)), p99Ms: sweepP99Ms };
  let latencyLimitMs: number | null = null;
  const repeats: RepeatKnee[] = repeatIds.map((repeat) => {
    const own = points.filter((p) => p.repeat === repeat && p.status !== 'skipped');
    const knee = findKnee(curveOf(points, repeat), { reference });
    latencyLimitMs ??= knee.latencyLimitMs;
    const probe = unlimited
      .flatMap((g) => g.ok.filter((r) => r.repeat === repeat && r.tps !== null))
      .map((r) => r.tps!);
    const bound = own.filter((p) => p.clientBound);
    const probed = probe.length > 0 ? mean(probe) : null;
    // The highest achieved at an offered rate (a step whose offered rate was not recorded included).
    const achieved = own.flatMap((p) => (p.achieved !== null ? [p.achieved] : []));
    const plateau = achieved.length > 0 ? Math.max(...achieved) : null;
    const top = own.find((p) => p.achieved !== null && p.achieved === plateau);
    return {
      repeat,
      kneeOffered: knee.kneeOffered,
      kneeAchieved: knee.kneeAchieved,
      saturatedAtOffered: knee.saturatedAtOffered,
      reason: knee.reason,
      capacity: plateau,
      unlimitedTps: probed,
      capacityAt: top !== undefined ? { offered: top.offered, x: top.rateOfCapacity } : null,
      capacityLowerBound: plateau !== null && knee.kneeOffered !== null && knee.saturatedAtOffered === null,
      clientBoundFrom: bound.length > 0 ? bound[0]!.offered : null,
      bracket: repeatBracketOf(own, knee),
    };
  });
  const caps = repeats.map((r) => r.capacity).filter((c): c is number => c !== null);
  const capacity: Estimated =
    caps.length === 0
      ? { value: null, interval: null }
      : { value: mean(caps), interval: caps.length >= 2 ? coversOf(meanCi(caps), 'run-to-run') : null };
  const knees = repeats.map((r) => r.kneeOffered).filter((k): k is number => k !== null);
  const probes = repeats.map((r) => r.unlimitedTps).filter((c): c is number => c !== null);
  return {
    variant,
    instanceClass,
    points,
    repeats,
    capacity,
    unlimitedTps: probes.length > 0 ? mean(probes) : null,
    kneeRange: knees.length > 0 ? [Math.min(...knees), Math.max(...knees)] : null,
    reference,
    latencyLimitMs,
    bracket: kneeBracketOf(repeats),
    ranGrid: uniqueInOrder(rated.filter((g) => g.rows.some((r) => r.status !== 'skipped')).map((g) => g.stepId)).length,
  };
}

/** The multiple of capacity a repeat was offered at a rate; null when the rate was absolute. */
function multipleAt(own: readonly RatePoint[], offered: number): number | null {
  return own.find((p) => p.offered === offered)?.rateOfCapacity ?? null;
}

/** One repeat's knee as two of the rates it was offered (see RepeatBracket); null when it was offered none. */
function repeatBracketOf(own: readonly RatePoint[], knee: KneeResult): RepeatBracket | null {
  if (own.length === 0) return null;
  if (knee.saturatedAtOffered === null) {
    const highest = Math.max(...own.map((p) => p.offered));
    return { kind: 'above', highest, highestX: multipleAt(own, highest) };
  }
  const upper = knee.saturatedAtOffered;
  if (knee.kneeOffered === null) return { kind: 'below', lowest: upper, lowestX: multipleAt(own, upper) };
  const lower = knee.kneeOffered;
  return {
    kind: 'between',
    lower,
    upper,
    lowerX: multipleAt(own, lower),
    upperX: multipleAt(own, upper),
    coarse: upper / lower > COARSE_BRACKET,
  };
}

/**
 * What makes two repeats' brackets the same: the same multiples of their own unlimited-rate TPS when the
 * rates were relative (each repeat was offered different absolute rates), the same offered rates otherwise.
 */
function bracketKey(b: RepeatBracket): string {
  if (b.kind === 'between')
    return b.lowerX !== null && b.upperX !== null
      ? `between ${b.lowerX}x ${b.upperX}x`
      : `between ${b.lower} ${b.upper}`;
  if (b.kind === 'below') return b.lowestX !== null ? `below ${b.lowestX}x` : `below ${b.lowest}`;
  return b.highestX !== null ? `above ${b.highestX}x` : `above ${b.highest}`;
}

/** The knee over the repeats (see KneeBracket); null when no repeat was offered a rate. */
function kneeBracketOf(repeats: readonly RepeatKnee[]): KneeBracket | null {
  const each = repeats.flatMap((r) => (r.bracket !== null ? [{ repeat: r.repeat, bracket: r.bracket }] : []));
  const first = each[0]?.bracket;
  if (first === undefined) return null;
  if (each.some((e) => bracketKey(e.bracket) !== bracketKey(first))) return { kind: 'disagree', each };
  const all = each.map((e) => e.bracket);
  // The same bracket in every repeat: the span from the lowest lower end to the highest upper end holds each.
  const spanned: RepeatBracket =
    first.kind === 'between'
      ? {
          ...first,
          lower: Math.min(...all.map((b) => (b.kind === 'between' ? b.lower : Infinity))),
          upper: Math.max(...all.map((b) => (b.kind === 'between' ? b.upper : -Infinity))),
          coarse: all.some((b) => b.kind === 'between' && b.coarse),
        }
      : first.kind === 'below'
        ? { ...first, lowest: Math.max(...all.map((b) => (b.kind === 'below' ? b.lowest : -Infinity))) }
        : { ...first, highest: Math.min(...all.map((b) => (b.kind === 'above' ? b.highest : Infinity))) };
  return { kind: 'agree', repeats: each.length, bracket: spanned };
}

export function analyzeRate(ctx: Context): RateFindings | null {
  const found = rateSweeps(ctx);
  if (found.length === 0) return null;
  const sweeps = found.map(({ label, groups }): RateSweep => {
    const first = groups[0]!;
    // The median over every variant's repeats of the p99 at their lowest rate: one limit per workload.
    const sweepP99Ms = pooledReference(
      ctx.variants.flatMap((v) => curvesOf(pointsOf(ratedGroups(groups, v.name)))),
    ).p99Ms;
    const variants = ctx.variants
      .map((v) => analyzeVariant(groups, v.name, v.instanceClass, sweepP99Ms))
      .filter((v): v is RateVariant => v !== null);
    const capsOf = (v: RateVariant): number[] =>
      v.repeats.map((r) => r.capacity).filter((c): c is number => c !== null);
    // Each later variant over the spec's first, as in the A/B and price sections: one rule, so a
    // study that lists r5 first reads r6g/r5 in every section.
    const baseline = variants[0];
    const capacityRatios =
      baseline === undefined
        ? []
        : variants.slice(1).map((v) => {
            const [a, b] = [summarize(capsOf(v)), summarize(capsOf(baseline))];
            const ci = welchRatioCi(a, b);
            // With fewer than two repeats a side the interval is NaN: ratioFinding says "unknown".
            const ratio = ratioFinding(ci, 'run-to-run');
            const i = ratio.interval;
            // A difference of RESOLVE_TARGET at each side's observed spread (coefficient of variation).
            const cv = (x: typeof a) => (x.mean > 0 ? x.sd / x.mean : NaN);
            const k = 1 + RESOLVE_TARGET;
            const repeatsFor =
              a.n >= 2 && b.n >= 2
                ? repeatsToResolve({ n: a.n, mean: k, sd: k * cv(a) }, { n: b.n, mean: 1, sd: cv(b) })
                : null;
            // Per unit of money: the capacity ratio (and its interval) over the exact price ratio.
            const price = priceRatioOf(ctx, v.variant, baseline.variant);
            const perMoney: RatioFinding | null =
              price === null
                ? null
                : {
                    ...ratio,
                    estimate: ratio.estimate !== null ? ratio.estimate / price : null,
                    interval: i !== null ? { ...i, low: Math.max(0, i.low) / price, high: i.high / price } : null,
                  };
            return {
              variant: v.variant,
              baseline: baseline.variant,
              ratio,
              perMoney,
              resolves: i !== null && i.low > 0 ? Math.sqrt(i.high / i.low) : null,
              repeatsFor,
            };
          });
    return {
      label,
      workload: first.workload,
      threads: first.threads,
      latencyPercentile: first.latPct,
      variants,
      capacityRatios,
      p99AtRates: p99AtRatesOf(variants),
      stalledReference: stalledReferenceOf(groups, variants, sweepP99Ms),
      cpu: cpuOf(ctx, groups, variants),
      perTransaction: perTransactionOf(groups),
      clientCpuMaxPct: maxOrNull(groups.flatMap((g) => g.rows.map((r) => r.client_cpu_max_pct ?? null))),
    };
  });
  return {
    kind: 'rate-sweep',
    sweeps,
    anyOverloaded: sweeps.some((s) => s.variants.some((v) => v.points.some((p) => p.status === 'overloaded'))),
    anySkipped: sweeps.some((s) => s.variants.some((v) => v.points.some((p) => p.status === 'skipped'))),
  };
}

const maxOrNull = (xs: readonly (number | null)[]): number | null => {
  const ok = xs.filter((x): x is number => x !== null);
  return ok.length > 0 ? Math.max(...ok) : null;
};

/** The sweep's SweepCpu: step means of each repeat's unlimited-rate step and of its saturation step. */
function cpuOf(ctx: Context, groups: readonly StepGroup[], variants: readonly RateVariant[]): SweepCpu {
  const unlimited = groups.filter((g) => g.rate === 0 && g.rateOfCapacity === null);
  const at = variants.flatMap((v) =>
    v.repeats.flatMap((r) => {
      const top = v.points.find((p) => p.repeat === r.repeat && p.achieved !== null && p.achieved === r.capacity);
      const probe = unlimited
        .filter((g) => g.variant === v.variant)
        .flatMap((g) =>
          g.ok.filter((x) => x.repeat === r.repeat).map((x) => ({ stepId: g.stepId, cellId: x.cell_id })),
        );
      return [...(top !== undefined ? [{ stepId: top.stepId, cellId: top.cellId }] : []), ...probe];
    }),
  );
  const values = (metric: string) =>
    at.flatMap(({ stepId, cellId }) => {
      const ms = ctx.data.metrics.filter((m) => m.metric === metric && m.step_id === stepId && m.cell_id === cellId);
      return ms.length > 0 ? [mean(ms.map((m) => m.avg_value))] : [];
    });
  return { serverPct: values('CPUUtilization'), hostPct: values('ClientHostCPU') };
}

/** Statements a transaction in the sweep's unlimited-rate steps; null when sysbench's counts are missing. */
function perTransactionOf(groups: readonly StepGroup[]): RateSweep['perTransaction'] {
  const rows = groups
    .filter((g) => g.rate === 0 && g.rateOfCapacity === null)
    .flatMap((g) => g.ok.filter((r) => r.status === 'ok'));
  const counted = rows.filter(
    (r) => r.events != null && r.events > 0 && r.reads != null && r.writes != null && r.other != null,
  );
  if (counted.length === 0) return null;
  const per = (f: 'reads' | 'writes' | 'other') => mean(counted.map((r) => Number(r[f]) / Number(r.events)));
  return { reads: per('reads'), writes: per('writes'), other: per('other') };
}

/** The sweep's StalledReference, or null when its low-load p99 is at most the unlimited-rate p99. */
function stalledReferenceOf(
  groups: readonly StepGroup[],
  variants: readonly RateVariant[],
  sweepP99Ms: number | null,
): StalledReference | null {
  const unlimitedMs = median(
    groups
      .filter((g) => g.rate === 0 && g.rateOfCapacity === null)
      .flatMap((g) => g.ok.flatMap((r) => (r.lat_pct_ms !== null && r.lat_pct_ms > 0 ? [r.lat_pct_ms] : []))),
  );
  const limitMs = variants.find((v) => v.latencyLimitMs !== null)?.latencyLimitMs ?? null;
  if (sweepP99Ms === null || unlimitedMs === null || limitMs === null || sweepP99Ms <= unlimitedMs) return null;
  const lowest = variants.flatMap((v) =>
    v.repeats.flatMap((r) => {
      const first = v.points.find((p) => p.repeat === r.repeat && p.status !== 'skipped');
      return first?.latencyMs != null ? [first] : [];
    }),
  );
  const low = lowest.map((p) => p.latencyMs!);
  const p50s = lowest.flatMap((p) => (p.p50Ms !== null ? [p.p50Ms] : []));
  // The p99s the limit decided: those of points that kept up, and of points that failed it on latency.
  const kept = variants.flatMap((v) =>
    v.points.filter((p) =>
      v.repeats.some((r) => r.repeat === p.repeat && r.kneeOffered !== null && p.offered <= r.kneeOffered),
    ),
  );
  const failed = variants.flatMap((v) =>
    v.points.filter((p) =>
      v.repeats.some((r) => r.repeat === p.repeat && r.reason === 'latency' && p.offered === r.saturatedAtOffered),
    ),
  );
  const p99s = (ps: readonly RatePoint[]) => ps.flatMap((p) => (p.latencyMs !== null ? [p.latencyMs] : []));
  return {
    limitMs,
    lowLoadMs: [Math.min(...low), Math.max(...low)],
    lowLoadP50Ms: p50s.length > 0 ? [Math.min(...p50s), Math.max(...p50s)] : null,
    unlimitedMs,
    above: low.filter((x) => x > unlimitedMs).length,
    of: low.length,
    keptMs: p99s(kept).length > 0 ? Math.max(...p99s(kept)) : null,
    failedMs: p99s(failed).length > 0 ? Math.min(...p99s(failed)) : null,
  };
}

/**
 * A point below its repeat's knee: it ran to its end, kept up with its rate on throughput and its p99 stayed
 * within the knee's limit. Past the knee p99 is queue time, which climbs steeply with the offered rate, and at
 * one multiple each repeat was offered a different rate: such p99s are not compared like for like.
 */
function belowKnee(p: RatePoint, v: RateVariant): boolean {
  const e0 = v.reference.efficiency ?? 1;
  return (
    p.status === 'ok' &&
    p.achieved !== null &&
    p.latencyMs !== null &&
    p.achieved >= DEFAULT_TRACKING_RATIO * e0 * p.offered &&
    (v.latencyLimitMs === null || p.latencyMs <= v.latencyLimitMs)
  );
}

/**
 * The ratio of the geometric means of a over b, with Welch's interval on the log scale: a p99 is skewed, so
 * its repeats are compared as logs, and the point estimate is the one the interval is centred on.
 */
function geometricRatioCi(a: readonly number[], b: readonly number[]): ConfidenceInterval {
  const d = welchDifferenceCi(summarize(a.map(Math.log)), summarize(b.map(Math.log)));
  const [estimate, low, high] = [Math.exp(d.estimate), Math.exp(d.low), Math.exp(d.high)];
  return { ...d, estimate, low, high, halfWidth: (high - low) / 2 };
}

/** The p99 at each rate that every variant kept up with on throughput (see P99AtRate), in rate order. */
function p99AtRatesOf(variants: readonly RateVariant[]): P99AtRate[] {
  const keyOf = (p: RatePoint): string =>
    p.rateOfCapacity !== null ? `${p.rateOfCapacity}x` : `${whole(p.offered)}/s`;
  const rates = uniqueInOrder(
    variants
      .flatMap((v) => v.points.filter((p) => belowKnee(p, v)))
      .sort((a, b) => (a.rateOfCapacity ?? a.offered) - (b.rateOfCapacity ?? b.offered))
      .map(keyOf),
  );
  return rates.flatMap((rate) => {
    const each = variants.map((v) => {
      const at = v.points.filter((p) => belowKnee(p, v) && keyOf(p) === rate);
      return { variant: v.variant, p99Ms: at.map((p) => p.latencyMs!), offered: at.map((p) => p.offered) };
    });
    if (each.some((e) => e.p99Ms.length === 0)) return [];
    const base = each[0]!;
    const ratios = each.slice(1).map((e) => ({
      variant: e.variant,
      baseline: base.variant,
      ratio: ratioFinding(geometricRatioCi(e.p99Ms, base.p99Ms), 'run-to-run'),
    }));
    return [{ rate, each, ratios }];
  });
}

// ---------------------------------------------------------------------------------------------
// Rendering

/** A round axis end at or above x: 1, 2 or 5 times a power of ten, or a half step between. */
function niceCeil(x: number): number {
  const p = 10 ** Math.floor(Math.log10(x));
  return ([1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10].find((m) => m * p >= x) ?? 10) * p;
}

/**
 * A point's status as the knee rule reads it: a step that ran to its end ("ok" to sysbench) but fell behind
 * its offered rate or whose p99 passed the limit is saturated, not "ok"; an overloaded step that stopped
 * before its first measured interval (within the warm-up) has nothing to show.
 */
function pointStatusText(p: RatePoint, v: RateVariant, pct: number): string {
  if (p.status === 'overloaded') return isUnmeasuredOverload(p) ? 'overloaded in warm-up (not measured)' : 'overloaded';
  if (p.status !== 'ok' || p.achieved === null) return p.status;
  const e0 = v.reference.efficiency ?? 1;
  if (p.achieved < DEFAULT_TRACKING_RATIO * e0 * p.offered) return 'saturated (fell behind)';
  if (v.latencyLimitMs !== null && p.latencyMs !== null && p.latencyMs > v.latencyLimitMs)
    return `saturated (p${pct} past limit)`;
  return 'ok';
}

/** "; here 99%–100%": the low-load efficiencies the knee rule used, over every sweep and variant. */
function efficiencyText(f: RateFindings): string {
  const e = f.sweeps.flatMap((sw) =>
    sw.variants.flatMap((v) => (v.reference.efficiency !== null ? [v.reference.efficiency] : [])),
  );
  if (e.length === 0) return '';
  const [lo, hi] = [pct(Math.min(...e), 0), pct(Math.max(...e), 0)];
  return `; here ${lo === hi ? lo : `${lo}–${hi}`}`;
}

/** An overloaded step that stopped before its first measured interval: no achieved rate to show. */
const isUnmeasuredOverload = (p: RatePoint): boolean => p.status === 'overloaded' && p.achieved === null;

/**
 * What one transaction is in each sweep, when they differ: a capacity in transactions/s counts a
 * transaction of four statements as one, so two sweeps' capacities compare different work.
 */
function statementsSentence(f: RateFindings): string | null {
  const known = f.sweeps.filter((sw) => sw.perTransaction !== null);
  const text = (t: NonNullable<RateSweep['perTransaction']>): string =>
    (
      [
        [t.reads, 'read'],
        [t.writes, 'write'],
        [t.other, 'other'],
      ] as const
    )
      .filter(([n]) => n >= 0.05)
      .map(([n, what]) => `${fixed(n, 1)} ${what}`)
      .join(', ');
  const each = known.map((sw) => ({ sw, t: text(sw.perTransaction!) }));
  if (uniqueInOrder(each.map((e) => e.t)).length < 2) return null;
  return (
    `Statements a transaction at the unlimited rate: ${each.map((e) => `${e.sw.workload} ${e.t}`).join('; ')} ` +
    '(sysbench counts BEGIN and COMMIT as other): each sweep’s capacity counts its own transaction as one, so ' +
    'the sweeps’ capacities compare different work.'
  );
}

/** The thread count was the spec's, not swept; whether a client's CPU saturated, with its highest reading. */
function threadsSentence(f: RateFindings, local: boolean): string | null {
  const threads = uniqueInOrder(f.sweeps.map((sw) => sw.threads));
  const cpu = maxOrNull(f.sweeps.map((sw) => sw.clientCpuMaxPct));
  const bound = f.sweeps.some((sw) => sw.variants.some((v) => v.repeats.some((r) => r.clientBoundFrom !== null)));
  if (cpu === null || bound) return null;
  return (
    `${threads.join(', ')} client threads, the spec's: this run does not sweep them. No sysbench client ` +
    `saturated its CPU (at most ${fixed(cpu, 1)}% of its cores)` +
    (local
      ? `; the clients and servers shared this machine's CPUs, so that does not say whether the machine ` +
        'was the bottleneck.'
      : '.')
  );
}

/** The p99 limit the knee rule applied, drawn on the p99 chart: one per sweep (every variant shares it). */
function limitLines(sw: RateSweep): { value: number; label: string }[] {
  const limit = sw.variants.find((v) => v.latencyLimitMs !== null)?.latencyLimitMs ?? null;
  return limit !== null
    ? [{ value: limit, label: `p${sw.latencyPercentile} limit ${fixed(limit, 1)} ms (knee rule)` }]
    : [];
}

/** Why a repeat did not keep up with a rate, as its sentence says it. */
function reasonText(reason: NonNullable<KneeResult['reason']>, v: RateVariant): string {
  if (reason === 'latency')
    return v.latencyLimitMs !== null
      ? `p99 rose past the ${fixed(v.latencyLimitMs, 1)} ms limit`
      : 'p99 rose past its limit';
  return {
    throughput: 'achieved fell below 95% of offered',
    overloaded: "sysbench's event queue filled",
    failed: 'the step failed',
  }[reason];
}

/** "0.5x and 0.9x" of a bracket offered as multiples of the unlimited-rate TPS; null for absolute rates. */
function multiplesText(b: RepeatBracket): string | null {
  if (b.kind === 'between') return b.lowerX !== null && b.upperX !== null ? `${b.lowerX}x and ${b.upperX}x` : null;
  if (b.kind === 'below') return b.lowestX !== null ? `${b.lowestX}x, the lowest rate` : 'the lowest rate';
  return b.highestX !== null ? `${b.highestX}x, the highest rate` : 'the highest rate';
}

/** One repeat's bracket in a list of disagreeing repeats: "between 2,227 and 4,009/s offered (0.5x and 0.9x)". */
function repeatBracketText(b: RepeatBracket): string {
  const x = multiplesText(b);
  const rates =
    b.kind === 'between'
      ? `between ${whole(b.lower)} and ${whole(b.upper)}/s offered`
      : b.kind === 'below'
        ? `below ${whole(b.lowest)}/s offered`
        : `above ${whole(b.highest)}/s offered`;
  return rates + (x !== null ? ` (${x})` : '');
}

/**
 * The knee as the Answer and its table say it: one bracket when the repeats agree ("between 2,192 and
 * 4,573/s offered (0.5x and 0.9x the unlimited-rate TPS, both repeats)"). When they do not, the table gives
 * each repeat's bracket and the Answer only says so.
 */
function bracketText(k: KneeBracket | null, inTable = false, said = false): string {
  if (k === null) return 'no rate offered';
  if (k.kind === 'disagree')
    return (
      // The Answer says it once; each repeat's bracket is in the table beside it, not repeated.
      inTable
        ? 'repeats disagree: ' + k.each.map((e) => `repeat ${e.repeat} ${repeatBracketText(e.bracket)}`).join(', ')
        : `its ${k.each.length} repeats disagree (run-to-run noise; each repeat's knee is in the capacity table)`
    );
  const b = k.bracket;
  const all = k.repeats === 2 ? 'both repeats' : k.repeats > 2 ? `all ${k.repeats} repeats` : null;
  // A between-bracket spans its repeats' ends, which may come from different repeats: say it is their union.
  const union = all !== null ? `the union of ${all}' brackets` : null;
  if (b.kind === 'above')
    return (
      `above ${whole(b.highest)}/s offered (no rate tried saturated it${all !== null ? `, ${all}` : ''}): ` +
      'add higher rates'
    );
  if (b.kind === 'below')
    return (
      `below ${whole(b.lowest)}/s offered (the lowest rate did not keep up${all !== null ? `, ${all}` : ''}): ` +
      'add lower rates'
    );
  // Said once a sentence: a later variant's multiples are of the same base.
  const of = inTable || said ? '' : " each repeat's own unlimited-rate TPS";
  const x = b.lowerX !== null && b.upperX !== null ? `${b.lowerX}x and ${b.upperX}x${of}` : null;
  const why = [x, union].filter((t): t is string => t !== null);
  return `between ${whole(b.lower)} and ${whole(b.upper)}/s offered${why.length > 0 ? ` (${why.join(', ')})` : ''}`;
}

/** Every repeat's bracket of a variant (one per repeat offered a rate). */
function repeatBrackets(v: RateVariant): RepeatBracket[] {
  return v.repeats.flatMap((r) => (r.bracket !== null ? [r.bracket] : []));
}

/**
 * One sentence per variant: each repeat's knee between the two rates it was offered (the repeats were
 * offered different rates: they are not pooled). The capacity is the Answer's, not repeated here.
 * @internal exported for its tests (a test seam)
 */
export function rateVariantSentence(sweep: RateSweep, v: RateVariant): string {
  const n = v.repeats.length;
  const each = v.repeats.map((r) => {
    const who = n >= 2 ? `repeat ${r.repeat} ` : '';
    if (r.kneeOffered === null)
      return (
        `${who}did not keep up even at the lowest rate offered (${whole(r.saturatedAtOffered)}/s` +
        (r.reason !== null ? `: ${reasonText(r.reason, v)})` : ')')
      );
    if (r.saturatedAtOffered === null) return `${who}kept up with every rate offered, up to ${whole(r.kneeOffered)}/s`;
    return (
      `${who}kept up with ${whole(r.kneeOffered)}/s and not ${whole(r.saturatedAtOffered)}/s offered` +
      (r.reason !== null ? ` (${reasonText(r.reason, v)})` : '')
    );
  });
  const client = v.repeats.find(
    (r) => r.clientBoundFrom !== null && (r.saturatedAtOffered === null || r.clientBoundFrom <= r.saturatedAtOffered),
  );
  const clientNote =
    client !== undefined
      ? ` The client saturated its CPU from ${whole(client.clientBoundFrom)}/s offered: the knee may be the client's.`
      : '';
  return `${sweep.label}, ${v.variant}: ${each.join('; ')}.${clientNote}`;
}

/**
 * The answer's sentence for a sweep: each variant's capacity (the repeats' values, not an average
 * rate), the capacity ratio with its interval, and the knee bracketed by rates really offered.
 */
function rateSweepSentence(sweep: RateSweep): string {
  const caps = sweep.variants.map((v) => {
    const each = v.repeats.map((r) => r.capacity).filter((c): c is number => c !== null);
    return (
      `${v.variant} ${whole(v.capacity.value)}/s` + (each.length >= 2 ? ` (repeats ${each.map(whole).join(', ')})` : '')
    );
  });
  const ratios = sweep.capacityRatios.map(
    (c) =>
      `${c.variant}/${c.baseline} ${ratioText(c.ratio)}` +
      (c.ratio.interval !== null ? `, ${verdictText(c.ratio, true)}` : ' (one repeat: noise not measured)'),
  );
  const knees = sweep.variants.map(
    (v, i) => `${v.variant}${v.bracket?.kind === 'disagree' ? ',' : ''} ${bracketText(v.bracket, false, i > 0)}`,
  );
  // The closed-loop figure, named apart from saturation, and where each repeat's open loop levelled off against
  // its own closed loop: a range over the repeats, so no repeat contradicts it (a mean's "higher" did).
  const unlimited = sweep.variants.map((v) => v.unlimitedTps).filter((u): u is number => u !== null);
  const shares = sweep.variants.flatMap((v) =>
    v.repeats.flatMap((r) =>
      r.capacity !== null && r.unlimitedTps !== null && r.unlimitedTps > 0 ? [r.capacity / r.unlimitedTps] : [],
    ),
  );
  const [lo, hi] = [pct(Math.min(...shares), 0), pct(Math.max(...shares), 0)];
  const closed =
    unlimited.length > 0
      ? `; unlimited-rate TPS (no rate set: closed loop) ${unlimited.map(whole).join(' and ')}/s` +
        (shares.length > 0
          ? `; the open loop levelled off at ${lo === hi ? lo : `${lo} to ${hi}`} of its repeat's closed loop`
          : '')
      : '';
  return (
    `${sweep.label}: saturation (the highest achieved at an offered rate) ${caps.join(', ')}` +
    `${ratios.length > 0 ? `; ${ratios.join('; ')}` : ''}${closed}. ` +
    `Knee: ${knees.join('; ')}.` +
    (sweep.stalledReference !== null ? ` ${stallText(sweep, sweep.stalledReference)}` : '')
  );
}

/** "53.9–83.0 ms", or one figure when both ends round alike. */
const msRange = ([lo, hi]: readonly [number, number]): string =>
  fixed(lo, 1) === fixed(hi, 1) ? `${fixed(lo, 1)} ms` : `${fixed(lo, 1)}–${fixed(hi, 1)} ms`;

/**
 * "Its p99 limit (190.5 ms) rests on low-load p99s (53.9–83.0 ms) above the unlimited-rate p99 (median 12.6 ms)
 * in 4 of 4 repeats: cause not measured; not sustained overload (p50 0.5–0.6 ms); any limit from 83.0 ms up to,
 * not including, 244.3 ms gives the same knees."
 * A burst stall is a short queue: the p50 says only that the load was not past capacity.
 */
function stallText(sw: RateSweep, s: StalledReference): string {
  const p = `p${sw.latencyPercentile}`;
  const [lo, hi] = s.lowLoadMs;
  const rangeMs = msRange([lo, hi]);
  const same =
    s.keptMs !== null && s.failedMs !== null && s.keptMs < s.failedMs
      ? `; any limit from ${fixed(Math.ceil(s.keptMs * 10) / 10, 1)} ms up to, not including, ` +
        `${fixed(Math.floor(s.failedMs * 10) / 10, 1)} ms gives the same knees`
      : s.failedMs === null
        ? '; no rate failed on that limit'
        : '; the knees depend on that limit: a longer step would tell';
  return (
    `Its ${p} limit (${fixed(s.limitMs, 1)} ms) rests on low-load ${p}s (${rangeMs}) above the unlimited-rate ` +
    `${p} (median ${fixed(s.unlimitedMs, 1)} ms) in ${s.above} of ${s.of} repeats: cause not measured` +
    (s.lowLoadP50Ms !== null ? `; not sustained overload (p50 ${msRange(s.lowLoadP50Ms)})` : '') +
    `${same}.`
  );
}

/**
 * Locally: how busy the shared machine and the server were where the repeats levelled off, and what that
 * leaves open. Null when either was not sampled.
 */
function cpuSentence(f: RateFindings): string | null {
  const server = f.sweeps.flatMap((sw) => sw.cpu.serverPct);
  const host = f.sweeps.flatMap((sw) => sw.cpu.hostPct);
  if (server.length === 0 || host.length === 0) return null;
  const range = (xs: readonly number[]) => {
    const [a, b] = [fixed(Math.min(...xs), 0), fixed(Math.max(...xs), 0)];
    return a === b ? `${a}%` : `${a}% to ${b}%`;
  };
  return (
    `At the unlimited-rate steps and where each repeat levelled off, this machine's CPUs were ${range(host)} ` +
    `busy and the server used ${range(server)} of them (the rest: the sysbench client and the system): this ` +
    'rehearsal cannot tell whether the server or the shared machine set the plateau.'
  );
}

type CapacityRatio = RateSweep['capacityRatios'][number];

/** " (at 0.9x)": the offered rate (or its multiple) whose achieved is the repeat's saturation. */
const atText = (r: RepeatKnee): string =>
  r.capacityAt === null ? '' : ` (at ${r.capacityAt.x !== null ? `${r.capacityAt.x}x` : whole(r.capacityAt.offered)})`;

/**
 * A capacity with its interval; an interval whose low end falls below 0 (two repeats far apart) is shown
 * reaching 0, not cut silently: no rate is negative, and such an interval bounds nothing from below.
 */
function capacityText(e: Estimated): string {
  if (e.value === null || e.interval === null || e.interval.low > 0) return rangeText(e);
  const d = Math.abs(e.value) >= 100 ? 0 : 2;
  return `${fixed(e.value, d)} (reaches 0; up to ${fixed(e.interval.high, d)})`;
}

/** "beyond 2.04x either way (2 repeats); 10% with ~21 repeats": what a ratio's repeats can tell. */
function resolvesCell(c: CapacityRatio, repeats: number): string {
  if (c.resolves === null) return '-';
  return (
    `past ${factorText(c.resolves)} either way (95% interval, ${repeats} repeats); ` +
    `${fixed(RESOLVE_TARGET * 100, 0)}% at 80% power: ~${repeatsForText(c)} repeats`
  );
}

/** A factor as "2.04x"; past 10x (as ratioText's ">1,000%") ">10x": no figure is known that far. */
const factorText = (x: number | null): string => (x === null ? '-' : x > 10 ? '>10x' : `${fixed(x, 2)}x`);

const repeatsForText = (c: CapacityRatio): string => (c.repeatsFor !== null ? whole(c.repeatsFor) : 'over 1,000');

/** The fewest repeats of a sweep's variants: what its capacity ratios rest on. */
const fewestRepeats = (sw: RateSweep): number => Math.min(...sw.variants.map((v) => v.repeats.length));

/**
 * What the capacity ratios' repeats can resolve, once: the smallest factor each interval tells from 100%,
 * and about how many repeats a variant would resolve a RESOLVE_TARGET difference. A few repeats far apart
 * resolve only a large difference: "within noise" then says little.
 */
function resolutionSentence(f: RateFindings): string | null {
  const all = f.sweeps.flatMap((sw) =>
    sw.capacityRatios
      .filter((c) => c.resolves !== null)
      .map((c) => ({
        c,
        n: fewestRepeats(sw),
        who: sw.capacityRatios.length > 1 ? `${sw.workload} ${c.variant}/${c.baseline}` : sw.workload,
      })),
  );
  if (all.length === 0) return null;
  const ns = uniqueInOrder(all.map((x) => x.n));
  // Two criteria, named apart: what this run's 95% interval excludes, and the repeats that would find a
  // RESOLVE_TARGET difference 4 times in 5; the second rests on a spread that a few repeats barely measure.
  const few = Math.min(...ns) < FEW_REPEATS;
  // Several ratios: their range here, each one in its row of the capacity table.
  const span = (text: (c: CapacityRatio) => string, key: (c: CapacityRatio) => number): string => {
    if (all.length === 1) return `${text(all[0]!.c)} (${all[0]!.who})`;
    const sorted = [...all].sort((a, b) => key(a.c) - key(b.c));
    const [lo, hi] = [text(sorted[0]!.c), text(sorted[sorted.length - 1]!.c)];
    return lo === hi ? `${lo} (each)` : `${lo} to ${hi}`;
  };
  const perRow = all.length > 1 ? ' (each ratio: the capacity table)' : '';
  return (
    `With ${ns.length === 1 ? ns[0]! : `${Math.min(...ns)} to ${Math.max(...ns)}`} repeats a variant, the ` +
    `smallest capacity ratio the 95% intervals tell from 1.0 is ` +
    `${span(
      (c) => factorText(c.resolves),
      (c) => c.resolves ?? Infinity,
    )} either way; finding a ` +
    `${fixed(RESOLVE_TARGET * 100, 0)}% difference 4 times in 5 (80% power) takes about ` +
    `${span(repeatsForText, (c) => c.repeatsFor ?? Infinity)} repeats a variant${perRow}` +
    (few ? `, counts estimated from ${Math.min(...ns)} repeats' spread and themselves very uncertain` : '') +
    // Both criteria at once only reads as a contradiction: say why one can need more repeats than ran.
    (all.some((x) => x.c.resolves! < 1 + RESOLVE_TARGET && (x.c.repeatsFor ?? Infinity) > x.n)
      ? ` (80% power asks more than this run's interval excluding 100%: more repeats than ran even where the ` +
        `interval resolves under ${fixed(RESOLVE_TARGET * 100, 0)}%).`
      : '.')
  );
}

/** The p99 at each matched rate per variant (its repeats) and each later variant's over the first's. */
function p99AtRatesTable(f: RateFindings): TableBlock | null {
  const rows = f.sweeps.flatMap((sw) => sw.p99AtRates.map((r) => ({ sw, r })));
  if (rows.length === 0) return null;
  const pct0 = f.sweeps[0]!.latencyPercentile;
  const variants = uniqueInOrder(rows.flatMap(({ r }) => r.each.map((e) => e.variant)));
  const pairs = uniqueInOrder(rows.flatMap(({ r }) => r.ratios.map((x) => `${x.variant}/${x.baseline}`)));
  // A multiple of each repeat's own unlimited-rate TPS is a different rate in each repeat: each p99 says its rate.
  const relative = rows.some(({ r }) => r.rate.endsWith('x'));
  return {
    title: relative
      ? `p${pct0} below the knee at the same multiple of each repeat's unlimited-rate TPS (ms at the rate ` +
        `offered; each repeat that kept up) and its ratio`
      : `p${pct0} below the knee at the same offered rate (ms, each repeat that kept up) and its ratio`,
    head: [
      'sweep',
      relative ? 'multiple' : 'offered',
      ...variants.map((v) => `${v} p${pct0} ms`),
      ...pairs.map((p) => `${p} (95% interval)`),
    ],
    rows: rows.map(({ sw, r }) => [
      sw.label,
      r.rate,
      ...variants.map((v) => {
        const e = r.each.find((x) => x.variant === v);
        if (e === undefined) return '-';
        return e.p99Ms
          .map((x, i) => (relative ? `${fixed(x, 1)} at ${whole(e.offered[i]!)}/s` : fixed(x, 1)))
          .join(', ');
      }),
      ...pairs.map((p) => {
        const x = r.ratios.find((y) => `${y.variant}/${y.baseline}` === p);
        if (x === undefined) return '-';
        return x.ratio.interval !== null
          ? `${ratioText(x.ratio)}, ${verdictText(x.ratio, false)}`
          : `${ratioText(x.ratio)} (one repeat: noise not measured)`;
      }),
    ]),
    numeric: [],
    notes: [
      `Only the rates every repeat of every variant kept up with by the knee rule (achieved >= ` +
        `${fixed(DEFAULT_TRACKING_RATIO * 100, 0)}% of offered times its low-load efficiency, p${pct0} within ` +
        `the knee's limit, the step run to its end). Past its knee a repeat's p${pct0} is queue time, which ` +
        'climbs steeply with the offered rate' +
        (relative ? ', and at one multiple each repeat was offered a different rate' : '') +
        `: those p${pct0}s are not compared (the Points table and the charts show them). ` +
        `Ratio: of the geometric means of the repeats' p${pct0}s, its interval Welch's on their logs; lower ` +
        `p${pct0} is better. The repeats of one variant are identical servers: how far apart their p${pct0}s ` +
        `lie is the p${pct0}'s own run-to-run noise.`,
    ],
  };
}

/**
 * The p99's own noise and the p99 comparison, once: how far apart the p99s of one variant's repeats
 * (identical servers) lie at one rate, the widest, and which later-variant/first p99 ratios at a matched rate
 * the repeats tell from 100%. A p99 difference smaller than that spread is not shown by the run.
 */
function p99Sentence(f: RateFindings): string | null {
  const spreads = f.sweeps.flatMap((sw) =>
    sw.p99AtRates.flatMap((r) =>
      r.each
        .filter((e) => e.p99Ms.length >= 2)
        .map((e) => {
          const [lo, hi] = [Math.min(...e.p99Ms), Math.max(...e.p99Ms)];
          const at = (x: number) => e.offered[e.p99Ms.indexOf(x)]!;
          return { sw, rate: r.rate, variant: e.variant, lo, hi, loAt: at(lo), hiAt: at(hi) };
        }),
    ),
  );
  const ratios = f.sweeps.flatMap((sw) => sw.p99AtRates.flatMap((r) => r.ratios.map((x) => ({ sw, rate: r.rate, x }))));
  if (spreads.length === 0 && ratios.length === 0) return null;
  const pct0 = f.sweeps[0]!.latencyPercentile;
  const parts: string[] = [];
  if (spreads.length > 0) {
    const w = spreads.reduce((a, b) => (b.hi / b.lo > a.hi / a.lo ? b : a));
    const relative = w.rate.endsWith('x');
    const ms = (x: number, at: number) => `${fixed(x, 1)} ms${relative ? ` at ${whole(at)}/s` : ''}`;
    parts.push(
      `the p${pct0} of one variant's repeats at the same ${relative ? 'multiple' : 'rate'} lie up to ` +
        `${fixed(w.hi / w.lo, 2)}x apart (${w.sw.workload} ${w.variant} at ${w.rate}: ${ms(w.lo, w.loAt)} and ` +
        `${ms(w.hi, w.hiAt)})`,
    );
  }
  const judged = ratios.filter((r) => r.x.ratio.interval !== null);
  const told = judged.filter((r) => r.x.ratio.direction !== 'within-noise');
  const pair = ratios.length > 0 ? `${ratios[0]!.x.variant}/${ratios[0]!.x.baseline}` : '';
  if (judged.length > 0)
    parts.push(
      told.length === 0
        ? `no ${pair} p${pct0} ratio (of geometric means) is told from 100%`
        : `${pair} p${pct0} told from 100% at ` +
            andList(told.map((r) => `${r.sw.workload} ${r.rate} ${ratioText(r.x.ratio)}`)),
    );
  return `Below the knee (every repeat kept up), ${parts.join('; ')} (the p${pct0} table).`;
}

/**
 * What the grid of rates can say: a knee bracketed by rates further apart than COARSE_BRACKET is not
 * placed, and the Answer says so once, with the rates each sweep really ran (a rate skipped after an
 * overload is not one of them) and how far apart the brackets' ends are.
 */
function gridSentence(f: RateFindings): string | null {
  const all = f.sweeps.flatMap((sw) => sw.variants);
  const coarse = all.flatMap((v) => repeatBrackets(v).filter((b) => b.kind === 'between' && b.coarse));
  if (coarse.length === 0) return null;
  const ran = f.sweeps.map((sw) => ({ sw, run: ranRates(sw) }));
  const counts = uniqueInOrder(ran.map((r) => r.run.count)).sort((a, b) => a - b);
  const relative = ran.some((r) => r.run.multiples.length > 0);
  // Sweeps that ran the same rates are listed together: "read-modify-write and update 0.5x, 0.9x, 1.5x, 6x".
  const byRates = new Map<string, string[]>();
  for (const r of ran) {
    const key = r.run.multiples.map((x) => `${x}x`).join(', ');
    if (key !== '') byRates.set(key, [...(byRates.get(key) ?? []), r.sw.workload]);
  }
  const lists = [...byRates].map(([rates, who]) => (byRates.size > 1 ? `${andList(who)} ${rates}` : rates));
  const which = relative ? ` (${lists.join('; ')} each repeat's unlimited-rate TPS)` : '';
  const gaps = coarse.map((b) => (b.kind === 'between' ? Math.round((b.upper / b.lower - 1) * 100) : 0));
  const [lo, hi] = [Math.min(...gaps), Math.max(...gaps)];
  const apart = `${lo === hi ? `${lo}%` : `${lo}% to ${hi}%`} apart`;
  const n = counts.length === 1 ? `${counts[0]!}` : `${counts[0]!} to ${counts[counts.length - 1]!}`;
  const total = all.reduce((k, v) => k + repeatBrackets(v).length, 0);
  return coarse.length === total
    ? `A sweep of ${n} rates${which} cannot place a knee closer than the brackets above: each lies between ` +
        `two offered rates ${apart}; add rates between them.`
    : `${coarse.length} of ${total} knees lie between two offered rates ${apart}, which a sweep of ${n} ` +
        `rates${which} cannot narrow: add rates between them.`;
}

/**
 * What a sweep's charts leave out, said on each chart: the overloaded steps offered past its axis (their achieved
 * and p99 are in the Points table). Null when every measured point is drawn.
 */
function pastAxisNote(past: readonly RatePoint[]): string | null {
  const shown = past.filter((p) => p.status === 'overloaded' && p.achieved !== null);
  if (shown.length === 0) return null;
  const span = (xs: readonly number[]) => {
    const [lo, hi] = [whole(Math.min(...xs)), whole(Math.max(...xs))];
    return lo === hi ? lo : `${lo}–${hi}`;
  };
  const multiples = uniqueInOrder(shown.flatMap((p) => (p.rateOfCapacity !== null ? [`${p.rateOfCapacity}x`] : [])));
  return (
    `Not drawn: ${shown.length} overloaded step${shown.length > 1 ? 's' : ''} offered past the axis ` +
    `(${multiples.length > 0 ? `${multiples.join(', ')}, ` : ''}${span(shown.map((p) => p.offered))}/s offered, ` +
    `${span(shown.map((p) => p.achieved!))}/s achieved): see Points.`
  );
}

/** A chart with its note as the title's subtext (below the title, above the plot). */
function withNote(c: ChartBlock, note: string | null): ChartBlock {
  if (note === null) return c;
  const option = c.option as { title?: object; grid?: object };
  return {
    ...c,
    option: { ...c.option, title: { ...option.title, subtext: note }, grid: { ...option.grid, top: 74 } },
  };
}

/** The rates a sweep really ran (a skipped rate is not one): how many, and their multiples of capacity. */
function ranRates(sw: RateSweep): { count: number; multiples: number[] } {
  const run = sw.variants.flatMap((v) => v.points.filter((p) => p.status !== 'skipped'));
  const multiples = uniqueInOrder(run.flatMap((p) => (p.rateOfCapacity !== null ? [p.rateOfCapacity] : [])));
  return {
    count: Math.max(...sw.variants.map((v) => v.ranGrid)),
    multiples: multiples.sort((a, b) => a - b),
  };
}

const andList = (items: readonly string[]): string =>
  items.length > 1 ? `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]!}` : (items[0] ?? '');

export function rateSection(f: RateFindings, ctx?: Context): ReportSection {
  const styles = ctx?.styles;
  // The client column only when some repeat's client saturated: a column of dashes says nothing.
  const anyClientBound = f.sweeps.some((sw) =>
    sw.variants.some((v) => v.repeats.some((r) => r.clientBoundFrom !== null)),
  );
  const kneeRows: string[][] = [];
  const pointRows: string[][] = [];
  const charts = f.sweeps.flatMap((sw, i) => {
    const achieved: XYSeries[] = [];
    const latency: XYSeries[] = [];
    // The axis ends a little past the highest rate drawn: an overloaded rate offered far beyond the last that
    // ran to its end (past PAST_AXIS times it, e.g. 6x) would squeeze every other point into the axis' first
    // tenth. Those are not drawn (no point sits at a false rate): the Points table has them.
    const measuredOffered = sw.variants.flatMap((v) =>
      v.points.filter((p) => p.status === 'ok' && p.achieved !== null).map((p) => p.offered),
    );
    const lastRan = measuredOffered.length > 0 ? Math.max(...measuredOffered) : undefined;
    const drawnOffered = sw.variants.flatMap((v) =>
      v.points
        .filter((p) => p.achieved !== null && (lastRan === undefined || p.offered <= PAST_AXIS * lastRan))
        .map((p) => p.offered),
    );
    const edge = lastRan !== undefined ? niceCeil(Math.max(...drawnOffered) * 1.15) : undefined;
    const onAxis = (p: RatePoint): boolean => edge === undefined || p.offered <= edge;
    for (const v of sw.variants) {
      for (const r of v.repeats) {
        kneeRows.push([
          sw.label,
          v.variant,
          String(r.repeat),
          r.kneeOffered !== null ? whole(r.kneeOffered) : '-',
          r.saturatedAtOffered !== null ? `${whole(r.saturatedAtOffered)} (${r.reason})` : 'not reached',
          fixed(v.latencyLimitMs, 1),
          r.unlimitedTps !== null ? whole(r.unlimitedTps) : '-',
          r.capacity !== null ? `${r.capacityLowerBound ? '≥ ' : ''}${whole(r.capacity)}${atText(r)}` : '-',
          ...(anyClientBound ? [r.clientBoundFrom !== null ? whole(r.clientBoundFrom) : '-'] : []),
        ]);
      }
      for (const p of v.points) {
        pointRows.push([
          sw.label,
          v.variant,
          String(p.repeat),
          p.rateOfCapacity !== null ? `${whole(p.offered)} (${p.rateOfCapacity}x)` : whole(p.offered),
          whole(p.achieved),
          p.achieved !== null && p.offered > 0 ? pct(p.achieved / p.offered, 0) : '-',
          (p.latencyCapped ? '≤ ' : '') + fixed(p.latencyMs, 1),
          pointStatusText(p, v, sw.latencyPercentile) + (p.clientBound ? ', client-bound' : ''),
        ]);
      }
      const drawn = v.points.filter((p) => p.status !== 'skipped' && p.achieved !== null);
      const measured = drawn.filter((p) => p.status !== 'overloaded');
      const overloaded = drawn.filter((p) => p.status === 'overloaded' && onAxis(p));
      const kneePoints = v.repeats
        .filter((r) => r.kneeOffered !== null && r.kneeAchieved !== null)
        .map((r) => [r.kneeOffered!, r.kneeAchieved!] as const);
      const failed = v.points.filter((p) => p.status === 'failed');
      achieved.push({
        name: v.variant,
        scatter: v.repeats.length > 1,
        points: measured.map((p) => [p.offered, p.achieved] as const),
        marks: [
          {
            label: 'overloaded (at achieved)',
            symbol: 'diamond',
            points: overloaded.map((p) => [p.offered, p.achieved!] as const),
          },
          { label: 'last rate kept up with (the knee lies past it)', symbol: 'circle', points: kneePoints },
        ],
        ...(failed.length > 0 ? { errorPoints: failed.map((p) => [p.offered, 0] as const) } : {}),
      });
      latency.push({
        name: v.variant,
        scatter: v.repeats.length > 1,
        points: measured.map((p) => [p.offered, p.latencyMs] as const),
        marks: [
          {
            // A step cut short: its p99 is that of the seconds before sysbench stopped it, a lower bound.
            label: 'overloaded: p99 cut short, a lower bound',
            symbol: 'arrow',
            points: overloaded.filter((p) => p.latencyMs !== null).map((p) => [p.offered, p.latencyMs!] as const),
          },
        ],
      });
    }
    const offeredAll = sw.variants.flatMap((v) => v.points.filter((p) => p.status !== 'skipped').map((p) => p.offered));
    const hi = edge ?? Math.max(...offeredAll);
    achieved.push({
      name: 'ideal (achieved = offered)',
      points: [
        [0, 0],
        [hi, hi],
      ],
      dashed: true,
    });
    const capacityLines = sw.variants
      .filter((v) => v.capacity.value !== null)
      .map((v) => ({ value: v.capacity.value!, label: `${v.variant} saturation ${whole(v.capacity.value)}/s` }));
    const latencyValues = sw.variants.flatMap((v) => v.points.map((p) => p.latencyMs));
    const note = pastAxisNote(
      sw.variants.flatMap((v) => v.points.filter((p) => !isUnmeasuredOverload(p) && !onAxis(p))),
    );
    return [
      lineChart(`rate-achieved-${i}`, `${sw.label}: achieved vs offered TPS`, 'offered TPS', 'achieved TPS', achieved, {
        fromZero: true,
        hLines: capacityLines,
        styles,
        ...(edge !== undefined ? { xMax: edge } : {}),
      }),
      lineChart(
        `rate-latency-${i}`,
        `${sw.label}: p${sw.latencyPercentile} latency vs offered TPS`,
        'offered TPS',
        `p${sw.latencyPercentile} ms`,
        latency,
        {
          fromZero: true,
          logY: spansDecades(latencyValues),
          hLines: limitLines(sw),
          styles,
          ...(edge !== undefined ? { xMax: edge } : {}),
        },
      ),
    ].map((c) => withNote(c, note));
  });
  const lines = [
    ...f.sweeps.flatMap((sw) => sw.variants.map((v) => rateVariantSentence(sw, v))),
    ...[statementsSentence(f), threadsSentence(f, ctx !== undefined && analyzeLocalCaveats(ctx).local)].filter(
      (x): x is string => x !== null,
    ),
  ];
  const grid = gridSentence(f);
  const resolution = resolutionSentence(f);
  const p99 = p99Sentence(f);
  const variants = uniqueInOrder(f.sweeps.flatMap((sw) => sw.variants.map((v) => v.variant)));
  const classes = uniqueInOrder(f.sweeps.flatMap((sw) => sw.variants.map((v) => v.instanceClass)));
  const scope =
    ctx !== undefined
      ? scopeSentence(analyzeLocalCaveats(ctx), variants, `where ${classes.join(' and ')} saturate on AWS`)
      : null;
  // The system that ran, in the Answer, not only in the Appendix: sysbench's SQL stand-ins on this server.
  const server = ctx?.data.run.server_version ?? null;
  const system = ctx !== undefined ? systemSentence(ctx) : null;
  const ran =
    scope !== null && server !== null
      ? `What ran: sysbench's SQL transactions (${andList(f.sweeps.map((sw) => sw.workload))}) on ${server}.` +
        (system !== null ? ` ${system}` : '')
      : null;
  const cpu = ctx !== undefined && analyzeLocalCaveats(ctx).local ? cpuSentence(f) : null;
  // The price half of the study's question, in the Answer: each capacity ratio over the price ratio.
  const money =
    ctx !== undefined
      ? perMoneySentence(
          ctx,
          f.sweeps.flatMap((sw) => sw.capacityRatios.map((c) => ({ workload: sw.workload, ...c }))),
        )
      : null;
  const basis = [scope !== null && ran !== null ? `${scope} ${ran}` : scope, money].filter((x) => x !== null);
  const opening = [
    ...(basis.length > 0 ? [basis.join(' ')] : []),
    ...f.sweeps.map(rateSweepSentence),
    // What the repeats and the grid cannot resolve is one finding: the Answer keeps five.
    ...([resolution, p99, grid, cpu].some((x) => x !== null)
      ? [[resolution, p99, grid, cpu].filter((x) => x !== null).join(' ')]
      : []),
  ];
  const pct0 = f.sweeps[0]!.latencyPercentile;
  const relative = f.sweeps.some((sw) => sw.variants.some((v) => v.points.some((p) => p.rateOfCapacity !== null)));
  const pointNotes = [
    'Each repeat at the rate it was offered: a local rehearsal offers multiples of each repeat’s own ' +
      'unlimited-rate TPS, so the repeats’ rates differ and are not averaged.',
  ];
  if (f.anyOverloaded)
    pointNotes.push(
      `Overloaded: sysbench's event queue filled (the server fell far behind; sysbench 1.0.20 stops a --rate run ` +
        'when ' +
        `131,072 events wait): achieved is the mean of the intervals before it stopped and p${pct0} the worst of ` +
        `them (queue time included). A measurement, not a failure.` +
        (f.sweeps.some((sw) => sw.variants.some((v) => v.points.some(isUnmeasuredOverload)))
          ? ' Overloaded in warm-up: the queue filled before the first measured interval, so no achieved rate or ' +
            `p${pct0} was measured (-); such a step is left out of the charts and the latency table.`
          : ''),
    );
  if (
    f.sweeps.some((sw) =>
      sw.variants.some((v) => v.points.some((p) => pointStatusText(p, v, pct0).startsWith('saturated'))),
    )
  )
    pointNotes.push(
      `Saturated: the step ran to its end (sysbench's queue did not fill) but did not keep up by the knee rule: ` +
        `achieved below ${fixed(DEFAULT_TRACKING_RATIO * 100, 0)}% of offered (fell behind), or p${pct0} past ` +
        'the limit in the knee table.',
    );
  if (f.sweeps.some((sw) => sw.variants.some((v) => v.points.some((p) => p.latencyCapped))))
    pointNotes.push(
      `≤: sysbench's p${pct0} (the upper end of its histogram bucket) reached past the step's exact slowest ` +
        `transaction; the max is shown, the p${pct0} is no higher.`,
    );
  if (f.anySkipped)
    pointNotes.push(
      'Skipped: not run because a lower rate already overloaded (stopAtOverload), or no unlimited-rate TPS was ' +
        'measured for a rate relative to it.',
    );
  // The capacities and ratios the sentences quote, with the intervals they quote.
  const capacityRows = f.sweeps.flatMap((sw) => [
    ...sw.variants.map((v) => [
      sw.label,
      v.variant,
      String(v.repeats.length),
      v.capacity.value === null ? '-' : capacityText(v.capacity),
      bracketText(v.bracket, true),
    ]),
    ...sw.capacityRatios.map((c) => [
      sw.label,
      `${c.variant}/${c.baseline}`,
      '-',
      ratioText(c.ratio) + (c.ratio.interval !== null ? `, ${verdictText(c.ratio, true)}` : '') + perUsdCell(c),
      c.resolves !== null ? `resolves only ${resolvesCell(c, fewestRepeats(sw))}` : '-',
    ]),
  ]);
  // Per unit of money beside each capacity ratio: what the Answer's price sentence quotes.
  function perUsdCell(c: CapacityRatio): string {
    return ctx !== undefined && c.perMoney !== null && c.perMoney.estimate !== null
      ? `; per ${currencyOf(ctx)} ${perMoneyText(c.perMoney)}`
      : '';
  }
  // The author's table: per sweep and instance type, the capacity and where the knee lies.
  const answerTable: TableBlock = {
    title:
      'Capacity: saturation throughput (the highest achieved at an offered rate, transactions/s, 95% interval ' +
      'over the repeats), its ratio and knee',
    head: [
      'sweep',
      'variant or ratio',
      'repeats',
      'saturation/s or ratio (95% interval)',
      'knee, or what a ratio resolves',
    ],
    rows: capacityRows,
    numeric: [2, 3],
    notes: [
      'Saturation: where achieved levels off under offered load; a repeat’s is the highest rate it achieved at ' +
        'an offered rate (not its unlimited-rate step, a closed loop that can run faster); a variant’s is the ' +
        'mean of its repeats’. Ratio: each later variant’s mean over the spec’s first’s, its interval Welch’s on ' +
        'the log scale (delta method); "within noise": the interval includes 100%. Knee: one bracket when every ' +
        'repeat’s is the same (the same offered rates, or the same multiples of each repeat’s unlimited-rate ' +
        'TPS), from the lowest rate a repeat kept up with to the highest it did not; each repeat’s when they ' +
        'disagree (per repeat: the knee table below)' +
        (relative ? '; its multiples (0.5x ...) are of each repeat’s own unlimited-rate TPS' : '') +
        '. Resolves: the smallest factor this run’s 95% interval tells from 100% (the root of high over low); ' +
        `then the repeats a variant that would find a ${fixed(RESOLVE_TARGET * 100, 0)}% difference 4 times in ` +
        '5 at this spread (80% power): a different criterion, so it can exceed the repeats run even when the ' +
        'interval already resolves less than 10%. An interval below 0 is shown reaching 0.',
    ],
  };
  const p99Table = p99AtRatesTable(f);
  const tables: TableBlock[] = [
    {
      title: 'Knee, unlimited-rate TPS and saturation per repeat',
      head: [
        'sweep',
        'variant',
        'repeat',
        'kept up at (offered/s)',
        'not at (offered/s)',
        `p${pct0} limit ms`,
        'unlimited-rate TPS',
        'saturation/s',
        ...(anyClientBound ? ['client saturated at'] : []),
      ],
      rows: kneeRows,
      numeric: anyClientBound ? [2, 3, 5, 6, 7, 8] : [2, 3, 5, 6, 7],
      notes: [
        `The knee lies between a row's two offered rates. Kept up: the highest offered rate where achieved ` +
          `>= ${fixed(DEFAULT_TRACKING_RATIO * 100, 0)}% of offered times the variant's efficiency at low load ` +
          `(achieved/offered at its repeats' lowest rate, the median, at most 100%${efficiencyText(f)}), ` +
          `p${pct0} at most its limit, and the step not overloaded. p${pct0} limit: one per workload, for every ` +
          `variant and repeat: 3x its ` +
          `p${pct0} at low load (the median over every variant's repeats of the p${pct0} at each one's lowest ` +
          `offered rate), at least ${DEFAULT_LATENCY_FLOOR_MS} ms, so the same curve gets the same verdict in ` +
          `each, whichever server drew it.`,
        'Unlimited-rate TPS: what the repeat achieved with no rate set' +
          (relative ? '; its rates (0.5x ...) are multiples of it. ' : '. ') +
          'Saturation: the highest rate the repeat achieved at an offered rate (at: where), ≥ when no rate ' +
          'saturated it.' +
          (relative
            ? ' The multiples are of each repeat’s own unlimited-rate TPS: the same multiple is a different rate ' +
              'in another repeat or variant; compare the offered rates.'
            : '') +
          (anyClientBound
            ? ` Client saturated at: the lowest offered rate at which a sysbench client's CPU saturated (from ` +
              `then on the knee may be the client's).`
            : ''),
      ],
    },
    {
      title: 'Points',
      head: ['sweep', 'variant', 'repeat', 'offered/s', 'achieved/s', 'achieved/offered', `p${pct0} ms`, 'status'],
      rows: pointRows,
      numeric: [2, 3, 4, 5, 6],
      notes: pointNotes,
    },
  ];
  return {
    id: 'rate',
    title: 'Rate sweep: offered vs achieved',
    question: 'Up to which offered rate does each variant keep up, and where does its throughput level off?',
    findings: lines,
    tables,
    charts: [],
    answer: { lines: opening, tables: [answerTable, ...(p99Table !== null ? [p99Table] : [])], charts },
  };
}
