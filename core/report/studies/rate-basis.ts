/**
 * What S5's Answer says of the experiment's basis: the system it runs even on AWS (sysbench on the spec's engine),
 * set against the study its description adapts, and the price list its per-money figures rest on. Locally the
 * variants are one server, so their transactions per unit of money are the price list's inverse, whatever the
 * classes: the sentence says so rather than naming a winner.
 */
import { dbInstancePrice, regionPrices } from '../../plan/cost';
import { ENGINES, engineName } from '../../aurora/engines';
import { pct } from '../../format';
import type { Context } from '../context';
import { analyzeLocalCaveats } from '../local-caveats';
import type { RatioFinding } from '../findings';

/** One sweep's capacity ratio as the basis sentences read it. */
export interface BasisRatio {
  readonly workload: string;
  readonly variant: string;
  readonly baseline: string;
  /** Transactions per unit of money over the baseline's (the capacity ratio over the price ratio). */
  readonly perMoney: RatioFinding | null;
}

/** "YCSB on MongoDB": the system an experiment's description says it adapts ("the original study's method (...)"). */
function adaptedFrom(description: string | undefined): string | null {
  const m = /original study's method \(([^,)]+)/i.exec(description ?? '');
  return m !== null ? m[1]!.trim() : null;
}

/**
 * "The experiment itself runs sysbench on Aurora MySQL 3.10.4, adapting the original study's YCSB on MongoDB: even
 * on AWS it measures these SQL transactions on that engine, not the original system." Null without a spec.
 */
export function systemSentence(ctx: Context): string | null {
  const spec = ctx.data.spec;
  if (spec === null) return null;
  const original = adaptedFrom(spec.description);
  return (
    `The experiment itself runs sysbench on ${engineName(spec.engine)}` +
    (original !== null
      ? `, adapting the original study's ${original}: even on AWS it measures these SQL transactions on that ` +
        'engine, not the original system.'
      : ': even on AWS it measures these SQL transactions on that engine.')
  );
}

/** The hourly price of a variant's class for its engine in the run's region; null when the table has none. */
function hourlyOf(ctx: Context, variant: string): number | null {
  const v = ctx.variants.find((x) => x.name === variant);
  const engine = v?.engine ?? ctx.data.spec?.engine;
  if (v === undefined || engine === undefined) return null;
  const region = regionOf(ctx);
  return dbInstancePrice(regionPrices(ctx.prices, region).prices, engine, v.instanceClass).hourly ?? null;
}

/**
 * The per-money line: the price basis and ratio, and each sweep's transactions per unit of money as the capacity
 * ratio over the price ratio, rounded to whole percents with its interval (the capacity interval over the exact
 * price ratio). Locally on one server that is the price list's inverse; the sentence says so. Null without prices.
 */
export function perMoneySentence(ctx: Context, ratios: readonly BasisRatio[]): string | null {
  const first = ratios[0];
  if (first === undefined) return null;
  const region = regionOf(ctx);
  const currency = currencyOf(ctx);
  const price = priceRatioOf(ctx, first.variant, first.baseline);
  if (price === null) return null;
  const engine = ctx.variants.find((x) => x.name === first.variant)?.engine ?? ctx.data.spec?.engine;
  const pricedAs = engine !== undefined ? `${ENGINES[engine.kind].label} ` : '';
  const each = ratios
    .filter((r) => r.variant === first.variant && r.baseline === first.baseline && r.perMoney?.estimate != null)
    .map((r) => `${r.workload} ${perMoneyText(r.perMoney!)}`);
  if (each.length === 0) return null;
  const list = each.length > 1 ? `${each.slice(0, -1).join(', ')} and ${each[each.length - 1]!}` : each[0]!;
  const same = analyzeLocalCaveats(ctx).sameServer.some((g) => g.includes(first.variant) && g.includes(first.baseline));
  return (
    `Per ${currency}: priced as ${pricedAs}instances (${region} on-demand list prices), ` +
    `${first.variant} costs ${pct(price, 2)} of ${first.baseline} an hour; ${first.variant} gives ${list} of ` +
    `${first.baseline}'s transactions per ${currency} (the capacity table)` +
    (same
      ? `: on identical servers that is the price list (1 / ${pct(price, 2)} = ${pct(1 / price, 2)}), nothing ` +
        'about the classes.'
      : '.')
  );
}

/** The price table's currency for the run's region. */
export const currencyOf = (ctx: Context): string => regionPrices(ctx.prices, regionOf(ctx)).prices.currency;

const regionOf = (ctx: Context): string => ctx.data.run.region || ctx.data.spec?.region || ctx.prices.defaultRegion;

/** A variant's price over its baseline's, as printed (two decimals of a percent); null without both prices. */
export function priceRatioOf(ctx: Context, variant: string, baseline: string): number | null {
  const [a, b] = [hourlyOf(ctx, variant), hourlyOf(ctx, baseline)];
  if (a === null || b === null || b <= 0) return null;
  // As the price section prints it, and its inverse from that.
  return Number(((a / b) * 100).toFixed(2)) / 100;
}

/** "111% (80%–154%)": a per-money ratio in whole percents, its interval likewise. */
export function perMoneyText(r: RatioFinding): string {
  if (r.estimate === null) return '-';
  const i = r.interval;
  return `${pct(r.estimate, 0)}${i !== null ? ` (${pct(i.low, 0)}–${pct(i.high, 0)})` : ''}`;
}
