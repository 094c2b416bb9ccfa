/**
 * What an Aurora cell cost from what really ran, and where the two storage configurations break even.
 * The estimate in cost.ts prices what the plan expects. This prices what was measured.
 * Serverless v2 is billed by the ACU-hours CloudWatch measured.
 * Aurora Standard adds the I/O requests the cluster made.
 * I/O-Optimized has its own prices and no I/O charge.
 */
import {
  auroraPriceKeys,
  auroraRates,
  formatMoney,
  unconfirmedPricesUsed,
  unconfirmedText,
  type RegionPrices,
} from './cost';
import type { CellPlan } from './types';
import type { EngineRef } from '../aurora/engines';

/** A month of GB-month billing in hours, 730 as the price table and AWS use. */
const HOURS_PER_MONTH = 730;

export interface CellUsage {
  readonly cellId: string;
  readonly engine: EngineRef;
  readonly variant: Pick<CellPlan['variant'], 'instanceClass' | 'readers' | 'serverless' | 'storage'>;
  /** Seconds each of the cell's DB instances existed. The volume is billed for this long. */
  readonly instanceS: number;
  /** Seconds summed over the DB instances as billed, when their lifetimes are known. */
  readonly dbInstanceS?: number;
  /** Serverless v2 ACU-seconds over the cell's instances, as measured. Undefined when none was measured. */
  readonly acuSeconds?: number;
  /** I/O requests the cluster volume made. Undefined when not measured. */
  readonly ioRequests?: number;
  /** The data's size on the volume, in GB. */
  readonly dataGb: number;
}

export interface CellBill {
  readonly cellId: string;
  /** e.g. "2 x db.r6g.large for 0.71 h" or "1,234 ACU-hours measured". */
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
  const instanceHours = usage.dbInstanceS !== undefined ? usage.dbInstanceS / 3600 : instances * hours;
  const missing = [...rates.missing];
  let compute: number | null;
  let computeWhat: string;
  if (usage.variant.serverless !== undefined) {
    // Without a measurement the instances are taken at their minimum throughout. That is a lower bound, and the text
    // says so.
    const acuHours =
      usage.acuSeconds !== undefined ? usage.acuSeconds / 3600 : usage.variant.serverless.minAcu * instanceHours;
    computeWhat =
      `${acuHours.toFixed(2)} ` +
      `ACU-hours ${usage.acuSeconds !== undefined ? 'measured' : 'at minAcu (none measured)'} on ${instances} ` +
      `instance${instances > 1 ? 's' : ''}`;
    compute = rates.acuHourly === undefined ? null : acuHours * rates.acuHourly;
  } else {
    computeWhat =
      usage.dbInstanceS !== undefined
        ? `${usage.variant.instanceClass}: ${instanceHours.toFixed(2)} instance-hours over ${instances} ` +
          `instance${instances > 1 ? 's' : ''}`
        : `${instances} x ${usage.variant.instanceClass} for ${hours.toFixed(2)} h`;
    compute = rates.instanceHourly === undefined ? null : rates.instanceHourly * instanceHours;
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
 * Aurora Standard against Aurora I/O-Optimized for one cluster.
 * Standard costs C + S + r x p and I/O-Optimized C' + S', with no I/O charge.
 * So they break even at r = (C' - C + S' - S) / p requests per second.
 * Null when a price is missing.
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

/**
 * When each DB cluster, DB instance and EC2 instance of a cell was created and when it was gone.
 * Creation times are the APIs' own. See botocore rds 2014-10-31 and ec2 2016-11-15 service-2.json.
 * RDS gives ClusterCreateTime and InstanceCreateTime, and EC2 gives LaunchTime.
 * Deletion time is the first teardown pass that found the resource gone, or the last pass.
 */
type ResourceKind = 'db-cluster' | 'db-instance' | 'ec2-instance';

export interface ResourceLifetime {
  readonly kind: ResourceKind;
  readonly id: string;
  /** The DB instance class or EC2 instance type. Null for a cluster. */
  readonly type: string | null;
  /** ISO time from the API. Null when the API gave none. */
  readonly createdAt: string | null;
  /** ISO time the teardown saw it gone. Null while it exists. */
  readonly deletedAt: string | null;
}

/** One resource as a teardown pass saw it. */
export interface ObservedResource {
  readonly kind: ResourceKind;
  readonly id: string;
  readonly type: string | null;
  readonly createdAt: string | null;
  /** Deleted or on its way. RDS "deleting" still bills until gone, and EC2 "shutting-down" does not. */
  readonly state: 'live' | 'deleting' | 'gone';
}

/**
 * The lifetimes after one more look.
 * A resource seen for the first time gets its creation time, and the earliest one wins.
 * One seen gone gets `now` as its deletion time unless it had one.
 * When `done`, everything still open is closed at `now`.
 */
export function mergeLifetimes(
  stored: readonly ResourceLifetime[],
  observed: readonly ObservedResource[],
  now: string,
  done: boolean,
): ResourceLifetime[] {
  const key = (r: { kind: string; id: string }): string => `${r.kind}\u0000${r.id}`;
  const seen = new Map(observed.map((o) => [key(o), o]));
  const out: ResourceLifetime[] = stored.map((s) => {
    const o = seen.get(key(s));
    const createdAt = s.createdAt ?? o?.createdAt ?? null;
    const gone = o === undefined || o.state === 'gone' || done;
    return { ...s, type: s.type ?? o?.type ?? null, createdAt, deletedAt: s.deletedAt ?? (gone ? now : null) };
  });
  const known = new Set(stored.map(key));
  for (const o of observed) {
    if (known.has(key(o))) continue;
    out.push({
      kind: o.kind,
      id: o.id,
      type: o.type,
      createdAt: o.createdAt,
      deletedAt: o.state === 'gone' || done ? now : null,
    });
  }
  return out;
}

/** Seconds a resource existed. Null without both times. */
function lifetimeS(r: ResourceLifetime): number | null {
  if (r.createdAt === null || r.deletedAt === null) return null;
  return Math.max(0, (Date.parse(r.deletedAt) - Date.parse(r.createdAt)) / 1000);
}

/** A server_metrics datapoint as the lake holds it. */
export interface MetricPoint {
  readonly step_id: string;
  readonly instance_id: string;
  readonly metric: string;
  readonly ts: string;
  readonly value: number;
}

/** What CloudWatch measured over a cell's steps. */
export interface MeasuredUsage {
  /** Serverless v2 ACU-seconds over the measured steps. Null when none was measured. */
  readonly acuSecondsInSteps: number | null;
  /** Seconds of the steps that have capacity datapoints. */
  readonly measuredStepS: number;
  /** Volume read and write I/Os of the 5-minute windows collected, each window once. Null when none. */
  readonly ioRequests: number | null;
}

/**
 * The capacity and volume I/O a cell's steps measured.
 * ServerlessDatabaseCapacity is an instance's ACUs at one-minute resolution.
 * VolumeReadIOPs and VolumeWriteIOPs count billed I/Os per 5-minute interval.
 * See Aurora User Guide, "Cluster-level metrics for Amazon Aurora". A window shared by two steps counts once.
 */
export function measureUsage(
  steps: readonly { readonly stepId: string; readonly start: string; readonly end: string }[],
  points: readonly MetricPoint[],
): MeasuredUsage {
  let acuS = 0;
  let measuredS = 0;
  for (const step of steps) {
    const byInstance = new Map<string, number[]>();
    for (const p of points) {
      if (p.step_id !== step.stepId || p.metric !== 'ServerlessDatabaseCapacity') continue;
      byInstance.set(p.instance_id, [...(byInstance.get(p.instance_id) ?? []), p.value]);
    }
    if (byInstance.size === 0) continue;
    const lengthS = Math.max(0, (Date.parse(step.end) - Date.parse(step.start)) / 1000);
    let acu = 0;
    for (const values of byInstance.values()) acu += values.reduce((a, v) => a + v, 0) / values.length;
    acuS += acu * lengthS;
    measuredS += lengthS;
  }
  const windows = new Map<string, number>();
  for (const p of points)
    if (p.metric === 'VolumeReadIOPs' || p.metric === 'VolumeWriteIOPs')
      windows.set(`${p.metric}\u0000${p.ts}`, p.value);
  return {
    acuSecondsInSteps: measuredS > 0 ? acuS : null,
    measuredStepS: measuredS,
    ioRequests: windows.size === 0 ? null : [...windows.values()].reduce((a, b) => a + b, 0),
  };
}

/** What a cell cost from what really ran. The run's manifest keeps it per cell. */
export interface ActualCellCost {
  readonly cellId: string;
  readonly currency: string;
  /** The compute, storage and I/O of the cluster or its DB instances. */
  readonly db: CellBill;
  /** EC2 instances, both clients and a self-managed cell's servers. */
  readonly ec2: number | null;
  readonly ec2What: string;
  readonly total: number | null;
  /** The plan's estimate for the same cell. */
  readonly estimate: number | null;
  /** Prices it used that the table lists as unconfirmed. */
  readonly unconfirmed: readonly string[];
  /** Resources without both times. They are priced at nothing and named here. */
  readonly unknownLifetimes: readonly string[];
}

export interface BillingMinimums {
  /** RDS bills per second with a 10-minute minimum. See Aurora User Guide, "DB instance billing for Aurora". */
  readonly rdsMinimumBillingS: number;
  /** EC2 Linux On-Demand bills per second with a 60-second minimum, per the EC2 On-Demand pricing page. */
  readonly ec2MinimumBillingS: number;
}

/**
 * The bill of one Aurora cell from its resources' lifetimes and what CloudWatch measured.
 * Each DB instance is billed for its life, at least the RDS minimum.
 * Serverless v2 uses the ACUs measured while steps ran, and minAcu for the rest.
 * Each EC2 instance is billed for its life at its type's price.
 */
export function actualCellCost(
  prices: RegionPrices,
  minimums: BillingMinimums,
  cell: { readonly cellId: string; readonly variant: CellUsage['variant'] },
  engine: EngineRef,
  lifetimes: readonly ResourceLifetime[],
  measured: MeasuredUsage,
  dataGb: number,
  estimate: number | null,
): ActualCellCost {
  const unknown = lifetimes.filter((r) => lifetimeS(r) === null).map((r) => `${r.kind}:${r.id}`);
  const dbInstances = lifetimes.filter((r) => r.kind === 'db-instance' && lifetimeS(r) !== null);
  const billedDbS = dbInstances.map((r) => Math.max(lifetimeS(r)!, minimums.rdsMinimumBillingS));
  const cluster = lifetimes.find((r) => r.kind === 'db-cluster' && lifetimeS(r) !== null);
  // The volume lives from the cluster's creation to its deletion. Without a cluster, the longest instance counts.
  const volumeS = cluster ? lifetimeS(cluster)! : Math.max(0, ...dbInstances.map((r) => lifetimeS(r)!));
  let acuSeconds: number | undefined;
  const serverless = cell.variant.serverless;
  if (serverless !== undefined && measured.acuSecondsInSteps !== null) {
    const unmeasured = dbInstances.reduce((a, r) => a + Math.max(0, lifetimeS(r)! - measured.measuredStepS), 0);
    acuSeconds = measured.acuSecondsInSteps + serverless.minAcu * unmeasured;
  }
  const usage: CellUsage = {
    cellId: cell.cellId,
    engine,
    variant: { ...cell.variant, readers: Math.max(0, dbInstances.length - 1) },
    instanceS: volumeS,
    dbInstanceS: billedDbS.reduce((a, s) => a + s, 0),
    ...(acuSeconds !== undefined ? { acuSeconds } : {}),
    ...(measured.ioRequests !== null ? { ioRequests: measured.ioRequests } : {}),
    dataGb,
  };
  const db = billCell(prices, usage);
  const ec2 = lifetimes.filter((r) => r.kind === 'ec2-instance' && lifetimeS(r) !== null);
  let ec2Cost: number | null = 0;
  const missing = [...db.missing];
  for (const r of ec2) {
    const hourly = r.type === null ? undefined : prices.ec2Hourly[r.type];
    if (hourly === undefined) {
      ec2Cost = null;
      missing.push(r.type ?? `ec2-instance:${r.id}`);
    } else if (ec2Cost !== null) ec2Cost += (hourly * Math.max(lifetimeS(r)!, minimums.ec2MinimumBillingS)) / 3600;
  }
  const ec2Hours = ec2.reduce((a, r) => a + lifetimeS(r)!, 0) / 3600;
  const used = [...auroraPriceKeys(engine, cell.variant), ...ec2.map((r) => `ec2Hourly.${r.type ?? ''}`)];
  return {
    cellId: cell.cellId,
    currency: prices.currency,
    db: { ...db, missing },
    ec2: ec2Cost,
    ec2What: `${ec2.length} EC2 instance${ec2.length === 1 ? '' : 's'} for ${ec2Hours.toFixed(2)} h`,
    total: db.total === null || ec2Cost === null ? null : db.total + ec2Cost,
    estimate,
    unconfirmed: unconfirmedPricesUsed(prices, used),
    unknownLifetimes: unknown,
  };
}

/**
 * The closing lines of a run's output, each cell's real cost beside the plan's estimate.
 * None when no cell has a cost.
 */
export function runCostLines(costs: readonly ActualCellCost[]): string[] {
  if (costs.length === 0) return [];
  const currency = costs[0]!.currency;
  const money = (v: number): string => formatMoney(v, currency);
  const sum = (f: (c: ActualCellCost) => number | null): number | null =>
    costs.reduce<number | null>((a, c) => (a === null || f(c) === null ? null : a + f(c)!), 0);
  const total = sum((c) => c.total);
  const estimate = sum((c) => c.estimate);
  const compute = sum((c) => c.db.compute);
  const storage = sum((c) => c.db.storage);
  const io = sum((c) => c.db.io);
  const ec2 = sum((c) => c.ec2);
  const ioMeasured = costs.some((c) => c.db.ioRequests !== null);
  const ioRequests = costs.reduce((a, c) => a + (c.db.ioRequests ?? 0), 0);
  const unconfirmed = [...new Set(costs.flatMap((c) => c.unconfirmed))];
  const missing = [...new Set(costs.flatMap((c) => c.db.missing))];
  const unknown = costs.flatMap((c) => c.unknownLifetimes);
  const lines = [
    total === null
      ? `What the run cost: unknown (no price for ${missing.join(', ')}; add them with --prices)`
      : `What the run cost, from what really ran: ${money(total)} (DB compute ${money(compute ?? 0)}, ` +
        `storage ${money(storage ?? 0)}, ` +
        `I/O ` +
        (ioMeasured
          ? `${money(io ?? 0)} for ${ioRequests.toLocaleString('en-US')} requests measured`
          : 'not measured (no VolumeReadIOPs / VolumeWriteIOPs datapoints)') +
        `, ` +
        `EC2 ${money(ec2 ?? 0)}); ` +
        `the plan estimated ${estimate === null ? 'unknown' : money(estimate)} for the same ${costs.length} ` +
        `cell${costs.length === 1 ? '' : 's'}${unconfirmedText(unconfirmed)}`,
  ];
  for (const c of costs) {
    lines.push(
      `  ${c.cellId}: ${c.total === null ? '-' : money(c.total)} (${c.db.computeWhat}; ${c.ec2What}) vs ` +
        `estimate ${c.estimate === null ? '-' : money(c.estimate)}`,
    );
  }
  if (unknown.length > 0) lines.push(`  without a creation or deletion time (not counted): ${unknown.join(', ')}`);
  return lines;
}
