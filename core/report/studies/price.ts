/**
 * Price-performance: each variant's hourly price for its engine and class (the same lookup as
 * `plan --aws`: Aurora MySQL, the RDS engines and Aurora PostgreSQL by engine, a self-managed server
 * as its EC2 instance type; core/plan/cost.ts dbInstancePrice), its transactions per unit of money,
 * and per AZ each variant's performance ratio against its price ratio. Only for studies that
 * compare variants: one variant has nothing to weigh its price against.
 */
import { barChart, ratioChart } from '../charts';
import { analyzePairOrder, pairOrderText, type PairOrder } from './ab-confounders';
import {
  dbInstancePrice,
  dbInstancePriceKey,
  pricesAsOfText,
  regionPrices,
  unconfirmedPricesUsed,
} from '../../plan/cost';
import { num, pct } from '../../format';
import type { ReportSection, TableBlock } from '../model';
import { claimText, ratioText, verdictText, type RatioFinding, ratioCell } from '../findings';
import {
  comparableKey,
  estimate,
  inSweep,
  isNetworkStudy,
  ratioOf,
  stepLabel,
  uniqueInOrder,
  type Context,
  type VariantInfo,
} from '../context';
import { mean } from '../stats';
import { analyzeRate } from './rate';
import { analyzeThreadSweep } from './thread-sweep';
import { analyzeLocalCaveats } from '../local-caveats';

interface VariantPrice {
  readonly variant: string;
  readonly engine: string;
  readonly instanceClass: string;
  readonly instances: number;
  /** Price per hour of the variant's DB instances (writer + readers); null when the table has none. */
  readonly hourly: number | null;
  /** What a missing price was looked up as (e.g. "rds-mysql db.r6g.2xlarge"). */
  readonly pricedAs: string;
  /** The price is listed as unconfirmed in the price table (RegionPrices.unconfirmedPrices). */
  readonly unconfirmed: boolean;
  /** What is priced, as a reader names it: "rds-mysql db.r6g.2xlarge", "self-managed on EC2 r6g.2xlarge". */
  readonly label: string;
}

interface PriceRow {
  readonly workload: string;
  readonly variant: string;
  /** Mean TPS of the workload's unswept steps, or a rate sweep's capacity. */
  readonly tps: number | null;
  readonly perMoney: number | null;
}

interface PricePerformance {
  readonly az: string | null;
  readonly step: string;
  readonly workload: string;
  readonly variant: string;
  readonly baseline: string;
  readonly performance: RatioFinding;
  readonly priceRatio: number;
  /** performance / price: its interval is the performance interval over the (exact) price ratio. */
  readonly pricePerformance: RatioFinding;
  /** Repeats on the smaller side behind the interval; null without run-to-run samples. */
  readonly runs: number | null;
  /** Locally the same server on both sides (an A/A test): the true performance ratio is 100%. */
  readonly identical: boolean;
}

interface RegionPricePerformance {
  readonly region: string;
  readonly az: string | null;
  readonly step: string;
  readonly pair: string;
  readonly priceRatio: number;
  readonly pricePerformance: RatioFinding;
}

interface RegionRatio {
  readonly region: string;
  readonly pair: string;
  readonly ratio: number;
}

export interface PriceFindings {
  readonly kind: 'price';
  readonly currency: string;
  readonly region: string;
  /** The price table's other regions: the ratio holds for `region` only (S1's author priced cn-northwest-1). */
  readonly otherRegions: readonly string[];
  /** Each compared pair's price ratio in every region that prices both sides. */
  readonly regionRatios: readonly RegionRatio[];
  /** Each compared step's price-performance at each other region's prices (the Answer table's own columns). */
  readonly elsewhere: readonly RegionPricePerformance[];
  /** Where each other region's prices come from (the price file's `source`), when it says. */
  readonly regionSources: Readonly<Record<string, string>>;
  readonly pricesAsOf: string;
  /** The price basis in one phrase with one date: "us-east-1 on-demand list prices, collected 2026-11-21". */
  readonly basis: string;
  readonly fallbackNote: string | null;
  readonly variants: readonly VariantPrice[];
  readonly rows: readonly PriceRow[];
  readonly ratios: readonly PricePerformance[];
  /** Workloads priced at a rate sweep's capacity. */
  readonly sweptAtRates: readonly string[];
  /** Thread sweeps priced over the thread counts their score uses (the unsteady ones left out). */
  readonly scoredOnly: readonly string[];
  readonly local: boolean;
  /** Locally, the groups of variants that ran as the same server (local-caveats.ts): their ratio is the price list. */
  readonly sameServer: readonly (readonly string[])[];
  /** Per compared pair, whether its cells ran in the same order in every round (ab-confounders.ts). */
  readonly pairOrder: readonly PairOrder[];
}

function variantPrice(prices: ReturnType<typeof regionPrices>['prices'], v: VariantInfo): VariantPrice {
  const engine = v.engine ?? { kind: 'aurora-mysql' as const, version: '' };
  const p = dbInstancePrice(prices, engine, v.instanceClass);
  const instances = 1 + v.readers;
  // A self-managed server is an EC2 instance priced as one (core/plan/cost.ts): no db. class.
  const label =
    engine.kind === 'self-managed'
      ? `self-managed on EC2 ${v.instanceClass.replace(/^db\./, '')}`
      : `${engine.kind} ${v.instanceClass}`;
  return {
    label,
    variant: v.name,
    engine: engine.kind,
    instanceClass: v.instanceClass,
    instances,
    hourly: p.hourly === undefined ? null : p.hourly * instances,
    pricedAs: p.missingAs,
    unconfirmed:
      p.hourly !== undefined && unconfirmedPricesUsed(prices, [dbInstancePriceKey(engine, v.instanceClass)]).length > 0,
  };
}

/** The price ratio of each compared pair in the run's region first, then in each other region pricing both. */
function regionRatios(ctx: Context, region: string, ratios: readonly PricePerformance[]): RegionRatio[] {
  const pairs = uniqueInOrder(ratios.map((r) => `${r.variant}\u0000${r.baseline}`)).map((k) => k.split('\u0000'));
  const regions = [region, ...Object.keys(ctx.prices.regions).filter((r) => r !== region)];
  return regions.flatMap((name) => {
    const prices = ctx.prices.regions[name];
    if (prices === undefined) return [];
    const hourly = (variant: string): number | null => {
      const v = ctx.variants.find((x) => x.name === variant);
      return v === undefined ? null : variantPrice(prices, v).hourly;
    };
    return pairs.flatMap(([a, b]) => {
      const [ha, hb] = [hourly(a!), hourly(b!)];
      if (ha === null || hb === null || hb <= 0) return [];
      return [{ region: name, pair: `${a}/${b}`, ratio: ha / hb }];
    });
  });
}

/** A performance ratio per unit of money: the ratio and its interval over the (exact) price ratio. */
function overPrice(perf: RatioFinding, priceRatio: number): RatioFinding {
  const i = perf.interval;
  return {
    estimate: perf.estimate === null ? null : perf.estimate / priceRatio,
    interval: i === null ? null : { ...i, low: i.low / priceRatio, high: i.high / priceRatio },
    direction:
      i === null ? 'unknown' : i.low / priceRatio > 1 ? 'higher' : i.high / priceRatio < 1 ? 'lower' : 'within-noise',
  };
}

export function analyzePrice(ctx: Context): PriceFindings | null {
  // One variant has nothing to compare its price with; scans (S4) have no meaningful transactions per dollar.
  if (ctx.variants.length < 2 || ctx.groups.length === 0 || isNetworkStudy(ctx)) return null;
  const rated = new Set(
    ctx.groups.filter((g) => (g.rate > 0 || g.rateOfCapacity !== null) && inSweep(ctx, g)).map((g) => g.stepId),
  );
  const priced = ctx.groups.filter((g) => !rated.has(g.stepId));
  const rate = analyzeRate(ctx);
  // A thread sweep's score leaves out its unsteady thread counts: price the same steps it scores.
  const unscoredOf = new Map(
    (rate === null ? (analyzeThreadSweep(ctx)?.sweeps ?? []) : []).map((s) => [s.label, s.unscored] as const),
  );
  const region = ctx.data.run.region || ctx.data.spec?.region || ctx.prices.defaultRegion;
  const lookup = regionPrices(ctx.prices, region);
  const variants = ctx.variants.map((v) => variantPrice(lookup.prices, v));
  if (variants.every((v) => v.hourly === null)) return null;
  const workloads = uniqueInOrder(ctx.groups.map((g) => g.workload));
  const sweptAtRates = new Set<string>();
  const tpsOf = (variant: string, workload: string): number | null => {
    const sweep = rate?.sweeps.find((s) => s.workload === workload);
    const capacity = sweep?.variants.find((v) => v.variant === variant)?.capacity.value ?? null;
    if (sweep !== undefined && capacity !== null) {
      sweptAtRates.add(workload);
      return capacity;
    }
    const unscored = unscoredOf.get(workload) ?? [];
    const vals = priced
      .filter((g) => g.variant === variant && g.workload === workload && !unscored.includes(g.threads))
      .map((g) => estimate(ctx, g, 'tps').value)
      .filter((v): v is number => v !== null);
    return vals.length > 0 ? mean(vals) : null;
  };
  const rows: PriceRow[] = workloads.flatMap((w) =>
    variants.map((v) => {
      const tps = tpsOf(v.variant, w);
      return {
        workload: w,
        variant: v.variant,
        tps,
        perMoney: tps !== null && v.hourly !== null && v.hourly > 0 ? (tps * 3600) / v.hourly : null,
      };
    }),
  );
  const ratios: PricePerformance[] = [];
  const caveats = analyzeLocalCaveats(ctx);
  for (const az of uniqueInOrder(ctx.variants.map((v) => v.az))) {
    const inAz = ctx.variants.filter((v) => v.az === az);
    const baseline = inAz[0]!;
    const hb = variants.find((x) => x.variant === baseline.name)?.hourly ?? null;
    for (const v of inAz.slice(1)) {
      const h = variants.find((x) => x.variant === v.name)?.hourly ?? null;
      if (h === null || hb === null || !(hb > 0)) continue;
      const priceRatio = h / hb;
      // A sweep's single points are not the comparison (its score or knee is): only standalone steps here.
      for (const g of priced.filter((x) => x.variant === v.name && !inSweep(ctx, x))) {
        const base = priced.find((x) => x.variant === baseline.name && comparableKey(x) === comparableKey(g));
        if (base === undefined) continue;
        const [ea, eb] = [estimate(ctx, g, 'tps'), estimate(ctx, base, 'tps')];
        const perf = ratioOf(ea, eb);
        const pricePerformance = overPrice(perf, priceRatio);
        ratios.push({
          az,
          step: stepLabel(g),
          workload: g.workload,
          variant: v.name,
          baseline: baseline.name,
          performance: perf,
          priceRatio,
          pricePerformance,
          runs:
            ea.source === 'repeats' && eb.source === 'repeats' ? Math.min(ea.sample?.n ?? 0, eb.sample?.n ?? 0) : null,
          identical: caveats.local && caveats.sameServer.some((s) => s.includes(v.name) && s.includes(baseline.name)),
        });
      }
    }
  }
  const byRegion = regionRatios(ctx, lookup.region, ratios);
  return {
    kind: 'price',
    currency: lookup.prices.currency,
    region: lookup.region,
    otherRegions: Object.keys(ctx.prices.regions).filter((r) => r !== lookup.region),
    regionRatios: byRegion,
    elsewhere: byRegion
      .filter((x) => x.region !== lookup.region)
      .flatMap((x) =>
        ratios
          .filter((r) => `${r.variant}/${r.baseline}` === x.pair)
          .map((r) => ({
            region: x.region,
            az: r.az,
            step: r.step,
            pair: x.pair,
            priceRatio: x.ratio,
            pricePerformance: overPrice(r.performance, x.ratio),
          })),
      ),
    regionSources: Object.fromEntries(
      Object.entries(ctx.prices.regions).flatMap(([r, p]) => (p.source !== undefined ? [[r, p.source]] : [])),
    ),
    pricesAsOf: pricesAsOfText(ctx.prices),
    basis:
      `${lookup.region} on-demand list prices, ` +
      (ctx.prices.collectedOn !== undefined ? `collected ${ctx.prices.collectedOn}` : `as of ${ctx.prices.pricesAsOf}`),
    fallbackNote: lookup.fallbackNote ?? null,
    variants,
    rows,
    ratios,
    sweptAtRates: [...sweptAtRates],
    scoredOnly: [...unscoredOf.entries()].filter(([, u]) => u.length > 0).map(([w]) => w),
    local: ctx.data.run.backend === 'local',
    sameServer: caveats.local ? caveats.sameServer : [],
    pairOrder: analyzePairOrder(
      ctx,
      uniqueInOrder(ratios.map((r) => `${r.variant}\u0000${r.baseline}`)).map((k) => {
        const [variant, baseline] = k.split('\u0000') as [string, string];
        return { az: ratios.find((r) => r.variant === variant)?.az ?? null, variant, baseline };
      }),
    ),
  };
}

/** Locally the same server on both sides (an A/A test): their transactions per unit of money are the price list. */
function samePair(f: PriceFindings, a: string, b: string): boolean {
  return f.sameServer.some((g) => g.includes(a) && g.includes(b));
}

/** Point estimates as a spread: "110.5%", "from 104.9% to 114.0%". */
function spreadText(values: readonly number[]): string {
  if (values.length === 1) return pct(values[0], 1);
  return `from ${pct(Math.min(...values), 1)} to ${pct(Math.max(...values), 1)}`;
}

/**
 * A price ratio and what equal throughput reads per unit of money, both printable and recomputable:
 * the ratio at 2 decimals, and 1 over that printed ratio (1 / 89.48% = 111.76%, never 1 / 89.5% = 111.8%).
 */
function pricedText(ratio: number): { ratio: string; equal: string } {
  const printed = Number((ratio * 100).toFixed(2)) / 100;
  return { ratio: pct(printed, 2), equal: pct(1 / printed, 2) };
}

/**
 * Of A/A price-performance findings, whether their intervals include `target` (what equal throughput
 * gives): "every interval includes 111.76%", "4 of 6 intervals include 111.76% (write-only t64 misses it)".
 */
function expectedHeldText(ratios: readonly PricePerformance[], target: string): string {
  const judged = ratios.filter((r) => r.pricePerformance.interval?.covers === 'run-to-run');
  if (judged.length === 0) return 'with no run-to-run interval to judge them by';
  const misses = judged.filter((r) => {
    const i = r.pricePerformance.interval!;
    const expected = 1 / r.priceRatio;
    return expected < i.low || expected > i.high;
  });
  const n = judged.length;
  if (misses.length === 0) return n === 1 ? `its interval includes ${target}` : `every interval includes ${target}`;
  return (
    `${n - misses.length} of ${n} intervals include ${target} (${misses.map((r) => r.step).join(', ')} ` +
    `${misses.length === 1 ? 'misses' : 'miss'} it: this machine's noise or the run order, not the class)`
  );
}

/** bareText for the same server on both sides, where 1 / price ratio is already said: where the noise is read. */
function bareSameText(f: PriceFindings, points: number, priceRatio: number): string {
  if (f.sweptAtRates.length === 0) return bareText(f, points);
  return (
    ` (point estimates from the capacities; their noise: the capacity ratios' intervals in the Answer's ` +
    `capacity table, divided by ${pricedText(priceRatio).ratio})`
  );
}

/** Why a per-money point has no interval here, and where its noise is read. */
function bareText(f: PriceFindings, points: number): string {
  const what = points > 1 ? 'these are point estimates' : 'this is a point estimate';
  if (f.sweptAtRates.length > 0)
    return (
      ` (${what} from the capacities: their noise is the capacity ratios' in the Answer's capacity table, divided ` +
      'by the price ratio; equal capacities alone give the inverse of the price ratio)'
    );
  return ` (${what} of one run with no interval: cannot be judged against the noise)`;
}

/**
 * The question's answer, per workload: the variant with the most transactions per unit of money,
 * its ratio over the next one, and what the noise lets the run say of that lead.
 */
function winnerSentence(f: PriceFindings, ctx: Context): string | null {
  // Across AZs each pair is its own question (S1 answers it per AZ): a winner over all of them is not.
  if (uniqueInOrder(ctx.variants.map((v) => v.az)).length > 1) return null;
  const leads: { text: string; verdict: string }[] = [];
  for (const w of uniqueInOrder(f.rows.map((r) => r.workload))) {
    const ranked = f.rows
      .filter((r) => r.workload === w && r.perMoney !== null && r.perMoney > 0)
      .sort((a, b) => b.perMoney! - a.perMoney!);
    const [top, next] = ranked;
    if (top === undefined || next === undefined) continue;
    // The same server twice: the lead is the price list's, so no winner is named (the pair lines say why).
    if (samePair(f, top.variant, next.variant)) continue;
    // The pair's one-step price-performance finding (S1's per-AZ pairs), when the run has one.
    const pair = f.ratios.filter(
      (r) =>
        r.workload === w &&
        [r.variant, r.baseline].includes(top.variant) &&
        [r.variant, r.baseline].includes(next.variant),
    );
    const p = pair.length === 1 ? pair[0]!.pricePerformance : null;
    const verdict =
      p?.interval?.covers === 'run-to-run'
        ? p.direction === 'within-noise'
          ? 'within the run-to-run noise'
          : 'beyond the run-to-run noise'
        : f.sweptAtRates.includes(w)
          ? 'point estimates, not judged here: their noise is the capacity ratios’ (the Answer’s capacity ' +
            'table) over the price ratio'
          : 'one run’s point estimates: not judged against the noise';
    leads.push({
      // A rate sweep's ratio is shown with its interval in the rate sweep section: named there, not here.
      text: f.sweptAtRates.includes(w)
        ? `${w} ${top.variant}`
        : `${w} ${top.variant}, ${pct(top.perMoney! / next.perMoney!, 1)} of the next (${next.variant})`,
      verdict,
    });
  }
  if (leads.length === 0) return null;
  // One "not judged" for every workload is said once, after the list; a verdict stays beside its ratio.
  const same = new Set(leads.map((l) => l.verdict)).size === 1 && !leads[0]!.verdict.includes('run-to-run');
  const unconfirmed = f.variants.some((v) => v.unconfirmed) ? ' (unconfirmed prices)' : '';
  return (
    `Most transactions per ${f.currency}${unconfirmed}: ` +
    (same
      ? `${leads.map((l) => l.text).join('; ')}; ${leads[0]!.verdict}`
      : leads.map((l) => `${l.text}: ${l.verdict}`).join('; ')) +
    // Locally every server is one engine on this machine: a lead is the price list times this machine's noise.
    (ctx.data.run.backend === 'local'
      ? ' (locally every server is the same engine on this machine, so this lead is the price list times local ' +
        'noise, not what the classes are worth)'
      : '') +
    `.`
  );
}

/**
 * What qualifies a price-performance verdict beyond the noise: a fixed run order, and locally the same
 * server on both sides, where equal performance reads 100% over the price ratio and so a "better" can be
 * the method seeing the price difference, not the class.
 */
function beyondCaveats(f: PriceFindings, r: PricePerformance): string[] {
  if (r.pricePerformance.direction !== 'higher' && r.pricePerformance.direction !== 'lower') return [];
  const out: string[] = [];
  const order = f.pairOrder.find((o) => o.variant === r.variant && o.baseline === r.baseline);
  const said = order !== undefined ? pairOrderText(order) : null;
  if (said !== null) out.push(`${said}: an order effect is not ruled out`);
  if (r.identical) {
    const expected = 1 / r.priceRatio;
    const holds =
      r.pricePerformance.interval !== null &&
      r.pricePerformance.interval.low <= expected &&
      expected <= r.pricePerformance.interval.high;
    out.push(
      `${r.variant} and ${r.baseline} are the same server here, so equal performance reads ` +
        `${pct(expected, 1)} (100% over the ${pct(r.priceRatio, 1)} price)` +
        (holds ? ': this is the method seeing the price difference, not a class being better value' : ''),
    );
  }
  return out;
}

/** Why the other steps of an A/A pair do not show the price difference: few repeats, little power. */
function powerText(f: PriceFindings, beyond: readonly PricePerformance[]): string {
  if (!beyond.some((r) => r.identical)) return '';
  const rest = f.ratios.filter((r) => r.identical && !beyond.includes(r) && r.runs !== null);
  if (rest.length === 0) return '';
  const runs = Math.min(...rest.map((r) => r.runs!));
  return (
    `; the other ${rest.length} step${rest.length === 1 ? '' : 's'} of the same servers do not resolve it: ` +
    `${runs} repeat${runs === 1 ? '' : 's'} a side leave little power`
  );
}

/**
 * A pair that ran as the same server: no winner, only the price list. "AZ a: r6g-a is priced at 89.48% of
 * r5-a per hour; here they are the same server, so equal throughput would give 111.76% transactions per USD ..."
 */
function samePairSentence(f: PriceFindings, az: string | null, v: VariantPrice, base: VariantPrice): string {
  const priceRatio = v.hourly! / base.hourly!;
  const steps = f.ratios.filter((r) => r.az === az && r.variant === v.variant && r.baseline === base.variant);
  const per = uniqueInOrder(f.rows.map((r) => r.workload)).flatMap((w) => {
    const ofW = steps.filter((r) => r.workload === w && r.pricePerformance.estimate !== null);
    if (ofW.length > 0) return [`${w} ${spreadText(ofW.map((r) => r.pricePerformance.estimate!))}`];
    const a = f.rows.find((r) => r.workload === w && r.variant === v.variant)?.perMoney ?? null;
    const b = f.rows.find((r) => r.workload === w && r.variant === base.variant)?.perMoney ?? null;
    return a !== null && b !== null && b > 0 ? [`${w} ${pct(a / b, 1)}`] : [];
  });
  const bare = steps.length === 0 && per.length > 0;
  return (
    (az !== null ? `AZ ${az}: ` : '') +
    `${v.variant} is priced at ${pricedText(priceRatio).ratio} of ${base.variant} per hour; here they are the ` +
    `same server, so equal throughput would give ${pricedText(priceRatio).equal} transactions per ` +
    `${f.currency} (1 / ${pricedText(priceRatio).ratio}), whatever the classes` +
    (per.length > 0
      ? `; measured (point estimates): ${per.join(', ')}` +
        (bare ? bareSameText(f, per.length, priceRatio) : `; ${expectedHeldText(steps, pricedText(priceRatio).equal)}`)
      : '') +
    '.'
  );
}

/** "AZ a: r6g-a costs 89.5% of r5-a per hour; its transactions per USD are ..." per later variant of each AZ. */
function priceSentences(f: PriceFindings, ctx: Context): string[] {
  const out: string[] = [];
  for (const az of uniqueInOrder(ctx.variants.map((v) => v.az))) {
    const inAz = ctx.variants.filter((v) => v.az === az);
    const base = f.variants.find((v) => v.variant === inAz[0]!.name)!;
    for (const other of inAz.slice(1)) {
      const v = f.variants.find((x) => x.variant === other.name)!;
      if (v.hourly === null || base.hourly === null) continue;
      if (samePair(f, v.variant, base.variant)) {
        out.push(samePairSentence(f, az, v, base));
        continue;
      }
      // Said once after the list: points with no interval cannot be judged against the noise.
      const bare = { points: 0 };
      const per = uniqueInOrder(f.rows.map((r) => r.workload))
        .map((w) => {
          // A workload of one step: its price-performance finding, interval and verdict with it.
          const steps = f.ratios.filter((r) => r.az === az && r.variant === v.variant && r.workload === w);
          if (steps.length === 1) {
            const caveats = beyondCaveats(f, steps[0]!);
            const but = caveats.length > 0 ? ` (but ${caveats.join('; ')})` : '';
            return `${w} ${claimText(steps[0]!.pricePerformance, true)}${but}`;
          }
          const a = f.rows.find((r) => r.workload === w && r.variant === v.variant)?.perMoney ?? null;
          const b = f.rows.find((r) => r.workload === w && r.variant === base.variant)?.perMoney ?? null;
          if (a === null || b === null || b <= 0) return null;
          if (steps.length > 1)
            return (
              `${w} ${pct(a / b, 1)} (a point estimate over its ${steps.length} steps, ` +
              'whose intervals are in the table)'
            );
          bare.points += 1;
          return `${w} ${pct(a / b, 1)}`;
        })
        .filter((x): x is string => x !== null);
      out.push(
        (az !== null ? `AZ ${az}: ` : '') +
          `${v.variant} (${v.label}) costs ${pct(v.hourly / base.hourly, 1)} ` +
          `of ${base.variant} (${base.label}) per hour` +
          (v.unconfirmed || base.unconfirmed ? ' (unconfirmed price)' : '') +
          (per.length > 0 ? `; its transactions per ${f.currency} are ${per.join(', ')} of ${base.variant}'s` : '') +
          (bare.points > 0 ? bareText(f, bare.points) : '') +
          `.`,
      );
    }
  }
  return out;
}

/**
 * One sentence: the price ratio against the performance ratios, and whether price-performance differs beyond the noise.
 */
function pricePerformanceSentence(f: PriceFindings): string {
  if (f.ratios.every((r) => r.identical)) return samePriceSentence(f);
  const pairs = uniqueInOrder(f.ratios.map((r) => `${r.variant}/${r.baseline}`));
  const priceRatios = uniqueInOrder(f.ratios.map((r) => pct(r.priceRatio, 1)));
  const perf = f.ratios.map((r) => r.performance.estimate).filter((x): x is number => x !== null);
  const beyond = f.ratios.filter(
    (r) =>
      r.pricePerformance.interval?.covers === 'run-to-run' &&
      r.pricePerformance.direction !== 'within-noise' &&
      r.pricePerformance.direction !== 'unknown',
  );
  const judged = f.ratios.some((r) => r.pricePerformance.interval?.covers === 'run-to-run');
  const manyAzs = new Set(f.ratios.map((r) => r.az)).size > 1;
  // A spread of point estimates, not an interval: written "from x to y".
  const range =
    perf.length === 0
      ? '-'
      : perf.length === 1
        ? pct(perf[0], 1)
        : `from ${pct(Math.min(...perf), 1)} to ${pct(Math.max(...perf), 1)} ` +
          `(the ${perf.length} steps' point estimates)`;
  const verdict = !judged
    ? 'the run-to-run noise is not measured'
    : beyond.length === 0
      ? 'price-performance differs beyond the noise at no step'
      : `price-performance differs beyond the noise at ` +
        beyond
          .map((r) => {
            const caveats = beyondCaveats(f, r);
            const but = caveats.length > 0 ? `, but ${caveats.join('; ')}` : '';
            return `${r.step}${manyAzs ? ` in AZ ${r.az}` : ''} (${verdictText(r.pricePerformance, true)}${but})`;
          })
          .join(', ') +
        powerText(f, beyond);
  const unconfirmed = f.variants.some((v) => v.unconfirmed) ? ' (unconfirmed price)' : '';
  // "r6g-a/r5-a is 89.5%", "r6g-a/r5-a and r6g-b/r5-b are each 89.5%", "... are 89.5% and 92.0%".
  const named = pairs.length === 1 ? pairs[0]! : `${pairs.slice(0, -1).join(', ')} and ${pairs[pairs.length - 1]}`;
  const is =
    pairs.length === 1
      ? 'is'
      : priceRatios.length === 1
        ? 'are each'
        : priceRatios.length === pairs.length
          ? 'are'
          : 'span';
  return (
    `Price: per hour, ${named} ${is} ${priceRatios.join(priceRatios.length === 2 ? ' and ' : ', ')}${unconfirmed} ` +
    `at ${f.region} prices` +
    otherRegionsText(f) +
    `; ${pairs.length === 1 ? 'its' : 'their'} performance ` +
    `(TPS) is ${range} of the baseline's; ${verdict}.` +
    (f.local ? ' (Local run: the performance is this machine’s.)' : '')
  );
}

/**
 * The Answer's price line when every compared pair is the same server (a local A/A run): no per-money
 * winner can show, only the price list (equal throughput reads 1 / price ratio) plus the A/A noise.
 */
function samePriceSentence(f: PriceFindings): string {
  const pairs = uniqueInOrder(f.ratios.map((r) => `${r.variant}/${r.baseline}`));
  const priceRatios = uniqueInOrder(f.ratios.map((r) => r.priceRatio));
  const named = pairs.length === 1 ? pairs[0]! : `${pairs.slice(0, -1).join(', ')} and ${pairs[pairs.length - 1]}`;
  const measured = f.ratios.filter((r) => r.pricePerformance.estimate !== null && r.performance.estimate !== null);
  const head =
    `Price: no per-${f.currency} winner can show here: ${named} ${pairs.length === 1 ? 'is' : 'are each'} one ` +
    `server twice, so transactions per ${f.currency} are the price list plus A/A noise`;
  if (priceRatios.length !== 1) {
    const each = pairs.map((p) => {
      const r = f.ratios.find((x) => `${x.variant}/${x.baseline}` === p)!;
      return `${pricedText(r.priceRatio).equal} for ${p}`;
    });
    return `${head}: equal throughput reads 1 / the price ratio (${f.basis}): ${each.join(', ')}.`;
  }
  // Each region the price table prices both sides in, said alike: the experiment's first, then the others.
  const regions = [f.region, ...f.otherRegions].flatMap((region) => {
    const ratio = f.regionRatios.find((r) => r.region === region)?.ratio;
    if (ratio === undefined) return [];
    const source = f.regionSources[region]?.split('. ')[0]?.replace(/\.$/, '');
    // "us-east-1 (the experiment's region; on-demand list prices, collected 2026-11-21: price ratio 89.48%)"
    const what =
      region === f.region
        ? `the experiment's region; ${f.basis.replace(`${region} `, '')}`
        : (source ?? 'the price file');
    return [
      { equal: pricedText(ratio).equal, where: `at ${region} (${what}: price ratio ${pricedText(ratio).ratio})` },
    ];
  });
  if (regions.length === 0) return `${head}.`;
  // Per unit of money, not per USD: another region prices in its own currency, and only the ratio compares.
  const said = regions.map((x, i) =>
    i === 0 ? `${x.equal} of its baseline's transactions per unit of money ${x.where}` : `${x.equal} ${x.where}`,
  );
  const each = said.length === 1 ? said[0]! : `${said.slice(0, -1).join(', ')} and ${said.at(-1)!}`;
  const held = measured.length > 0 ? expectedHeldText(f.ratios, 'that figure') : null;
  return (
    `${head}. Equal throughput would give the variant ${each}` +
    (held !== null ? `; ${held}${regions.length > 1 ? ' at either region’s prices' : ''}` : '') +
    '.'
  );
}

/**
 * The table's rows as a chart: each pair's TPS ratio with its 95% interval, the 100% line and the
 * pair's price ratio. An interval wholly right of the price mark is more transactions per unit of
 * money beyond the noise ("better" in the table), wholly left of it fewer.
 */
function pricePerformanceChart(f: PriceFindings) {
  return ratioChart(
    'price-performance',
    `TPS ratio with 95% CI (log scale); red bar: the price ratio at ${f.region} (dashed: 100%)`,
    f.ratios
      .filter((r) => r.performance.estimate !== null)
      .map((r) => ({
        label: `${r.az !== null ? `AZ ${r.az} ` : ''}${r.step}: ${r.variant}/${r.baseline}`,
        estimate: r.performance.estimate!,
        low: r.performance.interval?.low ?? null,
        high: r.performance.interval?.high ?? null,
        mark: r.priceRatio,
      })),
    'price ratio',
  );
}

/** " (the experiment's region; at cn-northwest-1 prices 92.6%)": the ratio holds for one region only. */
function otherRegionsText(f: PriceFindings): string {
  if (f.otherRegions.length === 0) return '';
  const there = f.otherRegions.map((region) => {
    const ratios = uniqueInOrder(f.regionRatios.filter((r) => r.region === region).map((r) => pct(r.ratio, 1)));
    return ratios.length > 0 ? `at ${region} prices ${ratios.join(' / ')}` : `${region} does not price these classes`;
  });
  return ` (the experiment's region; ${there.join('; ')}: see the price ratio table)`;
}

/**
 * For the Appendix: the prices the report weighs are the experiment region's; another region the price
 * table holds (S1's author priced cn-northwest-1) gives another ratio, named with where its prices come from.
 */
export function priceRegionDeviation(f: PriceFindings): string | null {
  const ratioIn = (region: string): string =>
    uniqueInOrder(f.regionRatios.filter((r) => r.region === region).map((r) => pricedText(r.ratio).ratio)).join(' / ');
  const others = f.otherRegions
    .filter((region) => ratioIn(region) !== '')
    .map((region) => {
      const source = f.regionSources[region]?.split('. ')[0]?.replace(/\.$/, '');
      return `${region} prices${source !== undefined ? ` (${source})` : ''} give ${ratioIn(region)}`;
    });
  if (others.length === 0 || ratioIn(f.region) === '') return null;
  return (
    `prices are ${f.region}'s (the experiment's region): price ratio ${ratioIn(f.region)}; ` +
    `${others.join('; ')} (the price ratio table shows each region).`
  );
}

/** How many DB instances each variant's price counts: "1 each (the writer)", "r5-a 3 (writer + 2 readers), ...". */
function instancesText(f: PriceFindings): string {
  const of = (n: number, each = ''): string =>
    n === 1
      ? `1 DB instance${each} (the writer, no readers)`
      : `${n} DB instances${each} (writer + ${n - 1} reader${n === 2 ? '' : 's'})`;
  const counts = uniqueInOrder(f.variants.map((v) => v.instances));
  if (counts.length === 1) return of(counts[0]!, ' each');
  return f.variants.map((v) => `${v.variant} ${of(v.instances)}`).join(', ');
}

/** What the table's TPS is: a rate sweep's capacity, else the mean over the workload's steps (or its one step). */
function priceTpsText(f: PriceFindings, workloads: readonly string[], steps: (w: string) => number): string {
  const swept = workloads.filter((w) => f.sweptAtRates.includes(w));
  if (swept.length === 0)
    return f.scoredOnly.length > 0
      ? "TPS: mean over each workload's scored thread counts, the steps its score uses"
      : workloads.every((w) => steps(w) === 1)
        ? "TPS: each workload's one step"
        : "TPS: mean over each workload's steps";
  if (swept.length === workloads.length)
    return 'TPS: each workload’s capacity in the rate sweep, not a mean over its offered rates';
  return `TPS: the capacity for ${swept.join(', ')} (rate sweeps), else the mean over the workload's steps`;
}

/** The price ratio per region: it differs by region, and a study priced elsewhere reads its own row. */
function regionRatioTable(f: PriceFindings): TableBlock {
  return {
    title: 'Price ratio by region (DB instances)',
    head: ['region', 'ratio', 'price ratio'],
    rows: f.regionRatios.map((r) => [
      r.region === f.region ? `${r.region} (the experiment's region)` : r.region,
      r.pair,
      pricedText(r.ratio).ratio,
    ]),
    numeric: [2],
    notes: [
      'From prices/aws-prices.json; each region in its own currency, so only the ratio compares.' +
        f.otherRegions
          .map((o) => {
            const source = f.regionSources[o]?.split('. ')[0]?.replace(/\.$/, '');
            return source !== undefined ? ` ${o}: ${source}.` : '';
          })
          .join(''),
    ],
  };
}

/** A pair's price ratio in another region the price file prices both sides in, or null. */
function regionRatioOf(f: PriceFindings, region: string, r: PricePerformance): number | null {
  return f.regionRatios.find((x) => x.region === region && x.pair === `${r.variant}/${r.baseline}`)?.ratio ?? null;
}

export function priceSection(f: PriceFindings, ctx: Context): ReportSection {
  // The other regions that price every compared pair: the Answer's table gives each its own columns.
  const others = f.otherRegions.filter((o) => f.ratios.every((r) => regionRatioOf(f, o, r) !== null));
  const workloads = uniqueInOrder(f.rows.map((r) => r.workload));
  // Steps per workload of one variant (the first priced): one step needs no "mean over" in the title.
  const stepsOf = (w: string): number =>
    uniqueInOrder(
      ctx.groups.filter((g) => g.workload === w && g.variant === f.variants[0]?.variant).map((g) => g.stepId),
    ).length;
  const rows = f.rows.map((r) => {
    const v = f.variants.find((x) => x.variant === r.variant)!;
    return [
      r.workload,
      r.variant,
      `${v.label}${v.instances > 1 ? ` x${v.instances}` : ''}`,
      v.hourly !== null
        ? `${num(v.hourly, 3)} ${f.currency}${v.unconfirmed ? ' (unconfirmed price)' : ''}`
        : `no price (${v.pricedAs})`,
      num(r.tps, 0),
      r.perMoney !== null ? num(r.perMoney, 0) : '-',
    ];
  });
  const notes = [
    `Price: ${f.basis} (prices/aws-prices.json, the same figures as plan --aws; override with --prices), per ` +
      `hour of each variant's DB instances for its engine: ${instancesText(f)}; clients are the load ` +
      `generator and are not counted. Transactions per ${f.currency}: TPS × 3600 s/h ÷ ${f.currency}/hour.`,
  ];
  if (f.fallbackNote !== null) notes.push(f.fallbackNote);
  const unconfirmed = f.variants
    .filter((v) => v.unconfirmed)
    .map((v) => (v.engine === 'self-managed' ? `EC2 ${v.instanceClass.replace(/^db\./, '')}` : v.instanceClass));
  if (unconfirmed.length > 0) {
    notes.push(
      `Unconfirmed price: ` +
        uniqueInOrder(unconfirmed).join(', ') +
        ` (prices/aws-prices.json lists it under unconfirmed, with its one source): check it before ` +
        `relying on the ratio.`,
    );
  }
  if (f.sweptAtRates.length > 0)
    notes.push(
      `${f.sweptAtRates.join(', ')}: a rate sweep; TPS is its capacity (the Answer's capacity table), not the ` +
        `mean over the offered rates.`,
    );
  if (f.local)
    notes.push(
      'Local run: "priced as" names what the price is for, not what ran: the throughput was measured on this ' +
        'machine' +
        (f.sameServer.length > 0
          ? ', the same server for each variant, so the column differs by the price list and by run-to-run noise'
          : '') +
        '; the table shows the method, not the classes’ value.',
    );
  const winner = winnerSentence(f, ctx);
  const findings = [...(winner !== null ? [winner] : []), ...priceSentences(f, ctx)];
  return {
    id: 'price',
    title: 'Price-performance',
    question: 'Which variant gives the most transactions per unit of money?',
    findings,
    tables: [
      {
        title: `Transactions per ${f.currency} (${priceTpsText(f, workloads, stepsOf)})`,
        head: [
          'workload',
          'variant',
          f.local ? 'priced as' : 'engine and class',
          `${f.currency}/hour`,
          'TPS',
          `transactions per ${f.currency}`,
        ],
        rows,
        numeric: [3, 4, 5],
        notes,
      },
      ...(f.regionRatios.length > 0 ? [regionRatioTable(f)] : []),
    ],
    charts:
      workloads.length > 0
        ? [
            barChart(
              'price-tx-per-money',
              `Transactions per ${f.currency}`,
              workloads,
              f.variants.map((v) => ({
                name: v.variant,
                values: workloads.map(
                  (w) => f.rows.find((r) => r.workload === w && r.variant === v.variant)?.perMoney ?? null,
                ),
              })),
              `transactions per ${f.currency}`,
              undefined,
              ctx.styles,
            ),
          ]
        : [],
    ...(f.ratios.length > 0
      ? {
          answer: {
            lines: [pricePerformanceSentence(f)],
            tables: [
              {
                title: 'Performance ratio vs price ratio (TPS; transactions per unit of money = performance / price)',
                head: [
                  'AZ',
                  'step',
                  'ratio',
                  'performance (95% CI)',
                  ...(others.length > 0 ? [`price, ${f.region}`, `price-performance, ${f.region} (95% CI)`] : []),
                  ...(others.length > 0 ? [] : ['price', 'price-performance (95% CI)']),
                  ...others.flatMap((o) => [`price, ${o}`, `price-performance, ${o} (95% CI)`]),
                ],
                rows: f.ratios.map((r) => [
                  r.az ?? '-',
                  r.step,
                  `${r.variant}/${r.baseline}`,
                  ratioText(r.performance),
                  pricedText(r.priceRatio).ratio,
                  ratioCell(r.pricePerformance, true),
                  ...others.flatMap((o) => {
                    const there = f.elsewhere.find(
                      (x) =>
                        x.region === o && x.az === r.az && x.step === r.step && x.pair === `${r.variant}/${r.baseline}`,
                    );
                    return there === undefined
                      ? ['-', '-']
                      : [pricedText(there.priceRatio).ratio, ratioCell(there.pricePerformance, true)];
                  }),
                ]),
                numeric: [3, 4, 5, ...others.flatMap((_, i) => [6 + 2 * i, 7 + 2 * i])],
                notes: [
                  `Price-performance: the performance ratio and its interval divided by the price ratio (per ` +
                    `hour, the price section's basis${others.length > 0 ? '; each region at its own prices' : ''}). ` +
                    `In the chart (a log axis) an interval wholly right ` +
                    `of its red bar (the price ratio) is more transactions per ${f.currency} beyond the noise.` +
                    (f.local ? ' Local run: performance was measured on this machine, not on the priced classes.' : ''),
                ],
              },
            ],
            charts: [pricePerformanceChart(f)],
          },
        }
      : {}),
  };
}
