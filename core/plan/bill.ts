/**
 * What an Aurora cell cost from what really ran, and where Aurora's two storage configurations
 * break even. The estimate (cost.ts estimatePlanCost) prices what the plan expects; this prices
 * what was measured: DB instance hours (provisioned) or the ACU-hours CloudWatch measured
 * (Serverless v2), the volume's GB-months for the hours it existed, and on Aurora Standard the I/O
 * requests the cluster really made (VolumeReadIOPs + VolumeWriteIOPs); Aurora I/O-Optimized has its
 * own instance, ACU and storage prices and no I/O charge (prices/aws-prices.json
 * auroraConfigurationsSource, cost.ts auroraRates).
 */
import { auroraRates, type RegionPrices } from './cost';
import type { CellPlan } from './types';
import type { EngineRef } from '../aurora/engines';

/** A month of GB-month billing, in hours (the price table's and AWS's 730). */
const HOURS_PER_MONTH = 730;

export interface CellUsage {
  readonly cellId: string;
  readonly engine: EngineRef;
  readonly variant: Pick<CellPlan['variant'], 'instanceClass' | 'readers' | 'serverless' | 'storage'>;
  /** Seconds the cell's DB instances existed. */
  readonly instanceS: number;
  /** Serverless v2: ACU-seconds over every instance of the cell, as measured; undefined when none was measured. */
  readonly acuSeconds?: number;
  /** I/O requests the cluster volume made (undefined: not measured). */
  readonly ioRequests?: number;
  /** The data's size on the volume, GB. */
  readonly dataGb: number;
}

export interface CellBill {
  readonly cellId: string;
  /** "2 x db.r6g.large for 0.71 h" or "1,234 ACU-hours measured". */
  readonly computeWhat: string;
  readonly compute: number | null;
  readonly storage: number;
  readonly io: number;
  readonly ioRequests: number | null;
  readonly total: number | null;
  readonly missing: readonly string[];
}

/** The bill of one Aurora cell from its usage. */
export function billCell(prices: RegionPrices, usage: CellUsage): CellBill {
  const rates = auroraRates(prices, usage.engine, usage.variant);
  const instances = 1 + usage.variant.readers;
  const hours = usage.instanceS / 3600;
  const missing = [...rates.missing];
  let compute: number | null;
  let computeWhat: string;
  if (usage.variant.serverless !== undefined) {
    // Without a measurement the instances are taken at their minimum the whole time: a lower bound, said so.
    const acuHours = usage.acuSeconds !== undefined ? usage.acuSeconds / 3600 : instances * usage.variant.serverless.minAcu * hours;
    computeWhat = `${acuHours.toFixed(2)} ACU-hours ${usage.acuSeconds !== undefined ? 'measured' : 'at minAcu (none measured)'} on ${instances} instance${instances > 1 ? 's' : ''}`;
    compute = rates.acuHourly === undefined ? null : acuHours * rates.acuHourly;
  } else {
    computeWhat = `${instances} x ${usage.variant.instanceClass} for ${hours.toFixed(2)} h`;
    compute = rates.instanceHourly === undefined ? null : instances * rates.instanceHourly * hours;
  }
  const storage = (usage.dataGb * rates.storageGbMonth * hours) / HOURS_PER_MONTH;
  const io = ((usage.ioRequests ?? 0) / 1e6) * rates.ioPerMillion;
  return {
    cellId: usage.cellId,
    computeWhat,
    compute,
    storage,
    io,
    ioRequests: usage.ioRequests ?? null,
    total: compute === null ? null : compute + storage + io,
    missing,
  };
}

export interface StorageBreakEven {
  /** $/h of the cluster on Aurora Standard at the measured I/O rate, and on I/O-Optimized. */
  readonly standardHourly: number;
  readonly ioOptimizedHourly: number;
  /** The I/O requests per second above which I/O-Optimized is cheaper. */
  readonly breakEvenIoPerS: number;
}

/**
 * Aurora Standard against Aurora I/O-Optimized for one cluster: compute $/h as it ran (instances x
 * class price, or measured average ACUs x ACU price), its data's storage, and I/O at `ioPerS`.
 * Standard costs C + S + r x p, I/O-Optimized C' + S' (no I/O charge), so they break even at
 * r = (C' - C + S' - S) / p requests per second. null when a price is missing.
 */
export function storageBreakEven(
  prices: RegionPrices,
  engine: EngineRef,
  variant: Pick<CellPlan['variant'], 'instanceClass' | 'readers' | 'serverless'>,
  measured: { readonly ioPerS: number; readonly dataGb: number; readonly averageAcu?: number },
): StorageBreakEven | null {
  const standard = auroraRates(prices, engine, { ...variant, storage: 'standard' });
  const optimized = auroraRates(prices, engine, { ...variant, storage: 'io-optimized' });
  const instances = 1 + variant.readers;
  const computeOf = (r: typeof standard): number | null =>
    variant.serverless !== undefined
      ? r.acuHourly === undefined || measured.averageAcu === undefined
        ? null
        : measured.averageAcu * r.acuHourly
      : r.instanceHourly === undefined
        ? null
        : instances * r.instanceHourly;
  const c = computeOf(standard);
  const cIo = computeOf(optimized);
  if (c === null || cIo === null || standard.ioPerMillion <= 0 || optimized.missing.length > 0) return null;
  const s = (measured.dataGb * standard.storageGbMonth) / HOURS_PER_MONTH;
  const sIo = (measured.dataGb * optimized.storageGbMonth) / HOURS_PER_MONTH;
  const perRequest = standard.ioPerMillion / 1e6;
  return {
    standardHourly: c + s + measured.ioPerS * 3600 * perRequest,
    ioOptimizedHourly: cIo + sIo,
    breakEvenIoPerS: (cIo - c + sIo - s) / (3600 * perRequest),
  };
}
