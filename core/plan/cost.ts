/**
 * Prices and cost: the estimate of what an AWS run of a plan costs, and the budget check.
 * The price table lives in prices/aws-prices.json and a user file may override it.
 */
import { estimate } from './plan';
import { cellEngine, type CellPlan, type Plan, type StepPlan } from './types';
import { ENGINES, rdsAllocatedStorageGib, serverVolumeGib, type EngineRef } from '../aurora/engines';
import { isServerless } from '../aurora/aurora-configurations';
// Imported rather than read from disk, so a bundled Lambda carries the table too.
import bundledPriceDoc from '../../prices/aws-prices.json';
import type { Spec } from '../experiment/schema';
import { READ_ONLY_TESTS } from '../experiment/read-only-tests';
import { AuroraBenchError } from '../errors';
import { loadPrices, type PriceTable, type RegionPrices } from './price-file';
import { PriceTableError } from './price-error';

export type { PriceTable, RegionPrices } from './price-file';
export { loadPrices } from './price-file';

/** The keys of `used` that the table lists as unconfirmed, once each. */
export function unconfirmedPricesUsed(prices: RegionPrices, used: readonly string[]): string[] {
  const patterns = (prices.unconfirmedPrices ?? []).map(
    (p) =>
      new RegExp(
        `^${p
          .split('*')
          .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
          .join('.*')}$`,
      ),
  );
  return [...new Set(used.filter((key) => patterns.some((re) => re.test(key))))];
}

/** The figures' date, for plan and report lines. */
export function pricesAsOfText(table: PriceTable): string {
  return `as of ${table.pricesAsOf}${table.collectedOn ? ` (collected ${table.collectedOn})` : ''}`;
}

/**
 * A custom script's declared row size, from a comment line `-- aurora-bench: bytes-per-row N`.
 * @internal Exported for its tests.
 */
export function declaredBytesPerRow(scriptBody: string | undefined): number | undefined {
  const m = /^--\s*aurora-bench:\s*bytes-per-row\s+(\d+)\s*$/m.exec(scriptBody ?? '');
  return m ? Number(m[1]) : undefined;
}

export class BudgetExceededError extends AuroraBenchError {
  override readonly name = 'BudgetExceededError';
}

/**
 * The repo's price table as bundled with the code, for Lambdas without a checkout.
 * It is not parsed here, or the Tasks that price a run would bundle zod for a file fixed at build.
 * test/unit/report-cost.test.ts proves the bundled file is what PriceTableSchema makes of it.
 */
export function bundledPrices(): PriceTable {
  return bundledPriceDoc;
}

export interface RegionLookup {
  readonly region: string;
  readonly prices: RegionPrices;
  /** Set when the region has no prices and another region's are used. */
  readonly fallbackNote?: string;
}

export function regionPrices(table: PriceTable, region: string): RegionLookup {
  const own = table.regions[region];
  if (own !== undefined) return { region, prices: own };
  const fallback = table.regions[table.defaultRegion];
  if (fallback === undefined)
    throw new PriceTableError(`price table has no region "${region}" and no default region "${table.defaultRegion}"`);
  return {
    region: table.defaultRegion,
    prices: fallback,
    fallbackNote:
      `no prices for ${region} in the price table: ${table.defaultRegion} prices used ` +
      `(add ${region} with --prices)`,
  };
}

/** $/h of a variant's writer and readers. Null when the class has no price. */
export function variantHourly(prices: RegionPrices, instanceClass: string, readers: number): number | null {
  const p = prices.dbInstanceHourly[instanceClass];
  return p === undefined ? null : p * (1 + readers);
}

export function networkLimitGbps(table: PriceTable, instanceClass: string): number | null {
  const v = table.dbInstanceNetworkGbps[instanceClass];
  return typeof v === 'number' ? v : null;
}

const EBS_STORAGE =
  "self-managed variants: each server's gp3 root volume as sized for the data (core/aurora/engines.ts " +
  "serverVolumeGib) at ebsGp3GbMonth for the cell's hours; no IOPS or throughput charge (gp3 includes 3,000 " +
  'IOPS and 125 MB/s)';
const RDS_STORAGE =
  'RDS variants: gp3 storage as allocated for the data (core/aurora/engines.ts rdsAllocatedStorageGib) on the ' +
  'source and each read replica, at rdsGp3GbMonth; no I/O charge (gp3 includes 3,000 IOPS)';

interface CellCost {
  readonly cellId: string;
  readonly instanceClass: string;
  readonly dbInstances: number;
  readonly hours: number;
  readonly dbCost: number | null;
  readonly clients: number;
  readonly clientType: string;
  readonly clientCost: number | null;
  readonly storageCost: number;
  readonly ioRequests: number;
  readonly ioCost: number;
  readonly total: number | null;
}

export interface PlanCost {
  readonly currency: string;
  readonly region: string;
  /** pricesAsOfText of the table. */
  readonly pricesAsOf: string;
  readonly cells: readonly CellCost[];
  /** null when any price is missing. */
  readonly total: number | null;
  /** Instance classes and types without a price. */
  readonly missing: readonly string[];
  /** Price keys the estimate used that the table lists as unconfirmed. */
  readonly unconfirmed: readonly string[];
  readonly notes: readonly string[];
}

/**
 * $/h of one DB instance of `instanceClass` on `engine`, and the name a missing price is reported under.
 * A self-managed server is priced as the EC2 instance of the same name without "db.".
 * Aurora PostgreSQL without its own entry falls back to the Aurora MySQL figures, with a note.
 * AWS's Aurora pricing page says its prices apply to both editions except where noted.
 */
export function dbInstancePrice(
  prices: RegionPrices,
  engine: EngineRef,
  instanceClass: string,
): { hourly: number | undefined; missingAs: string; fallback?: string } {
  if (engine.kind === 'aurora-mysql')
    return { hourly: prices.dbInstanceHourly[instanceClass], missingAs: instanceClass };
  if (engine.kind === 'self-managed') {
    const ec2Type = instanceClass.replace(/^db\./, '');
    return { hourly: prices.ec2Hourly[ec2Type], missingAs: `${ec2Type} (self-managed server)` };
  }
  const own = prices.dbInstanceHourlyByEngine?.[engine.kind]?.[instanceClass];
  if (own !== undefined || engine.kind !== 'aurora-postgresql')
    return { hourly: own, missingAs: `${engine.kind} ${instanceClass}` };
  const mysql = prices.dbInstanceHourly[instanceClass];
  return {
    hourly: mysql,
    missingAs: `${engine.kind} ${instanceClass}`,
    ...(mysql !== undefined
      ? {
          fallback:
            `Aurora PostgreSQL ${instanceClass} priced at the Aurora MySQL-Compatible figure (no ` +
            `aurora-postgresql entry in dbInstanceHourlyByEngine): confirm it on the PostgreSQL-Compatible tab ` +
            `of https://aws.amazon.com/rds/aurora/pricing/ and add it with --prices`,
        }
      : {}),
  };
}

/**
 * What an Aurora cell's compute, storage and I/O cost per unit under its storage configuration.
 * I/O-Optimized multiplies the instance price by ioOptimizedInstanceMultiplier.
 * I/O is billed on Aurora Standard only. See Aurora User Guide, "DB instance billing for Aurora".
 * `missing` names what the table lacks.
 */
export interface AuroraRates {
  readonly ioOptimized: boolean;
  /** $/h of one provisioned instance. Undefined for Serverless v2 or a missing price. */
  readonly instanceHourly: number | undefined;
  /** $ per ACU-hour. Undefined for a provisioned variant or a missing price. */
  readonly acuHourly: number | undefined;
  readonly storageGbMonth: number;
  readonly ioPerMillion: number;
  readonly missing: readonly string[];
  readonly fallback?: string;
}

export function auroraRates(
  prices: RegionPrices,
  engine: EngineRef,
  variant: Pick<CellPlan['variant'], 'instanceClass' | 'serverless' | 'storage'>,
): AuroraRates {
  const ioOptimized = variant.storage === 'io-optimized';
  const missing: string[] = [];
  let instanceHourly: number | undefined;
  let acuHourly: number | undefined;
  let fallback: string | undefined;
  if (isServerless(variant.instanceClass)) {
    acuHourly = ioOptimized ? prices.acuHourlyIoOptimized : prices.acuHourly;
    if (acuHourly === undefined) missing.push(ioOptimized ? 'acuHourlyIoOptimized' : 'acuHourly');
  } else {
    const standard = dbInstancePrice(prices, engine, variant.instanceClass);
    fallback = standard.fallback;
    if (standard.hourly === undefined) missing.push(standard.missingAs);
    if (ioOptimized && prices.ioOptimizedInstanceMultiplier === undefined)
      missing.push('ioOptimizedInstanceMultiplier');
    instanceHourly =
      standard.hourly === undefined
        ? undefined
        : standard.hourly * (ioOptimized ? (prices.ioOptimizedInstanceMultiplier ?? NaN) : 1);
    if (instanceHourly !== undefined && Number.isNaN(instanceHourly)) instanceHourly = undefined;
  }
  if (ioOptimized && prices.storageGbMonthIoOptimized === undefined) missing.push('storageGbMonthIoOptimized');
  return {
    ioOptimized,
    instanceHourly,
    acuHourly,
    storageGbMonth: (ioOptimized ? prices.storageGbMonthIoOptimized : prices.storageGbMonth) ?? 0,
    ioPerMillion: ioOptimized ? 0 : (prices.ioPerMillion ?? 0),
    missing,
    ...(fallback !== undefined ? { fallback } : {}),
  };
}

/** The price keys an Aurora cell's bill reads. */
export function auroraPriceKeys(
  engine: EngineRef,
  variant: Pick<CellPlan['variant'], 'instanceClass' | 'serverless' | 'storage'>,
): string[] {
  const io = variant.storage === 'io-optimized';
  const keys: string[] = [];
  if (variant.serverless !== undefined) keys.push(io ? 'acuHourlyIoOptimized' : 'acuHourly');
  else {
    keys.push(
      engine.kind === 'aurora-mysql'
        ? `dbInstanceHourly.${variant.instanceClass}`
        : `dbInstanceHourlyByEngine.${engine.kind}.${variant.instanceClass}`,
    );
    if (io) keys.push('ioOptimizedInstanceMultiplier');
  }
  keys.push(io ? 'storageGbMonthIoOptimized' : 'storageGbMonth');
  if (!io) keys.push('ioPerMillion');
  return keys;
}

/** The price key of one DB instance of `instanceClass` on `engine`. */
export function dbInstancePriceKey(engine: EngineRef, instanceClass: string): string {
  if (engine.kind === 'aurora-mysql') return `dbInstanceHourly.${instanceClass}`;
  if (engine.kind === 'self-managed') return `ec2Hourly.${instanceClass.replace(/^db\./, '')}`;
  return `dbInstanceHourlyByEngine.${engine.kind}.${instanceClass}`;
}

const SERVERLESS_ESTIMATE =
  'Aurora Serverless v2 variants: while steps run each instance is taken at its maxAcu (an upper bound), ' +
  'during set-up and teardown at its minAcu, at the ACU-hour price; the bill after a run uses the ACUs ' +
  'CloudWatch measured (ServerlessDatabaseCapacity)';

/** Whether a step's workload writes. Only stock read-only tests are known not to, and custom scripts may. */
function stepWrites(test: string | undefined): boolean {
  return test !== undefined && !READ_ONLY_TESTS.has(test);
}

/**
 * The cost of running `plan` on AWS.
 * DB instances are billed for provisioning and run time, per second with a 10-minute minimum.
 * Clients are billed for the run time, per second with a 1-minute minimum.
 * Storage and Aurora Standard's I/O are added, from the prepares and an assumed rate while steps run.
 * Cells that run at once do not share instances, so concurrency changes wall time, not cost.
 */
export function estimatePlanCost(plan: Plan, table: PriceTable): PlanCost {
  const lookup = regionPrices(table, plan.region);
  const prices = lookup.prices;
  const a = table.assumptions;
  const missing = new Set<string>();
  const notes: string[] = [];
  const used = new Set<string>();
  if (lookup.fallbackNote) notes.push(lookup.fallbackNote);
  const declared = new Map<string, number>();
  const stepBytesPerRow = (s: StepPlan): number =>
    (s.script ? declared.get(s.script.name) : undefined) ?? a.bytesPerRow;
  for (const [name, body] of Object.entries(plan.scripts)) {
    const bytes = declaredBytesPerRow(body);
    if (bytes !== undefined) declared.set(name, bytes);
  }
  const cells = plan.cells.map((cell: CellPlan): CellCost => {
    const cellS = estimate([cell], 'aws', 1).wallTimeS;
    const provisionS = estimate([cell], 'aws', 1).provisionS;
    const runS = Math.max(0, cellS - provisionS);
    const dbInstances = 1 + cell.variant.readers;
    const engine = cellEngine(plan, cell);
    // Aurora bills its cluster volume and, on Standard, its I/O.
    // RDS bills each instance's allocated gp3 storage, and no I/O below gp3's baseline.
    // See RDS User Guide, "Amazon RDS DB instance storage".
    // A self-managed server bills its gp3 root volume.
    const topology = ENGINES[engine.kind].topology;
    const aurora = topology === 'cluster';
    const rates = aurora ? auroraRates(prices, engine, cell.variant) : undefined;
    const price = rates === undefined ? dbInstancePrice(prices, engine, cell.variant.instanceClass) : undefined;
    const dbHourly = rates !== undefined ? rates.instanceHourly : price!.hourly;
    for (const m of rates?.missing ?? (price!.hourly === undefined ? [price!.missingAs] : [])) missing.add(m);
    const fallback = rates?.fallback ?? price?.fallback;
    if (fallback !== undefined && !notes.includes(fallback)) notes.push(fallback);
    const serverless = cell.variant.serverless;
    if (serverless !== undefined && !notes.includes(SERVERLESS_ESTIMATE)) notes.push(SERVERLESS_ESTIMATE);
    if (topology === 'ec2' && !notes.includes(EBS_STORAGE)) notes.push(EBS_STORAGE);
    if (topology === 'ec2' && prices.ebsGp3GbMonth === undefined)
      missing.add(`ebsGp3GbMonth (self-managed servers' EBS volumes)`);
    if (topology === 'instance' && !notes.includes(RDS_STORAGE)) notes.push(RDS_STORAGE);
    for (const k of aurora
      ? auroraPriceKeys(engine, cell.variant)
      : [dbInstancePriceKey(engine, cell.variant.instanceClass)])
      used.add(k);
    if (topology === 'ec2') used.add('ebsGp3GbMonth');
    if (topology === 'instance') used.add('rdsGp3GbMonth');
    used.add(`ec2Hourly.${cell.variant.clients.instanceType}`);
    const acuHourly = rates?.acuHourly;
    const dbCost =
      serverless !== undefined
        ? acuHourly === undefined
          ? null
          : (dbInstances * acuHourly * (serverless.maxAcu * runS + serverless.minAcu * provisionS)) / 3600
        : dbHourly === undefined
          ? null
          : (dbInstances * dbHourly * Math.max(cellS, a.rdsMinimumBillingS)) / 3600;
    const clientType = cell.variant.clients.instanceType;
    const clients = cell.variant.clients.count;
    const clientHourly = prices.ec2Hourly[clientType];
    if (clientHourly === undefined) missing.add(clientType);
    // Clients start once the cluster is ready and stop at the cell's end.
    const clientS = runS + 120;
    const clientCost =
      clientHourly === undefined ? null : (clients * clientHourly * Math.max(clientS, a.ec2MinimumBillingS)) / 3600;
    // Each step's data is as wide as its workload's rows.
    // Storage holds the widest data set, and every prepare writes its own.
    const rows = cell.data.tables * cell.data.tableSize;
    const dataBytes = rows * Math.max(...cell.steps.map(stepBytesPerRow));
    const preparedBytes = cell.steps.filter((s) => s.prepare).reduce((acc, s) => acc + rows * stepBytesPerRow(s), 0);
    const rdsStorageGb =
      topology === 'instance' ? (dbInstances * rdsAllocatedStorageGib(cell.data).allocated * 2 ** 30) / 1e9 : 0;
    const serverVolumesGb = topology === 'ec2' ? dbInstances * serverVolumeGib(cell.data) : 0;
    const storageCost = aurora
      ? ((dataBytes / 1e9) * rates!.storageGbMonth * (cellS / 3600)) / 730
      : topology === 'ec2'
        ? (serverVolumesGb * (prices.ebsGp3GbMonth ?? 0) * (Math.max(cellS, a.ec2MinimumBillingS) / 3600)) / 730
        : (rdsStorageGb * (prices.rdsGp3GbMonth ?? 0) * (Math.max(cellS, a.rdsMinimumBillingS) / 3600)) / 730;
    const stepIoS = cell.steps.reduce(
      (acc, s) => acc + (s.warmupS + s.durationS) * (stepWrites(s.test) ? a.writeIoPerSecond : a.readIoPerSecond),
      0,
    );
    const ioRequests = Math.ceil(preparedBytes / 4096 + stepIoS);
    const ioCost = aurora ? (ioRequests / 1e6) * rates!.ioPerMillion : 0;
    const total = dbCost === null || clientCost === null ? null : dbCost + clientCost + storageCost + ioCost;
    return {
      cellId: cell.cellId,
      instanceClass: cell.variant.instanceClass,
      dbInstances,
      hours: cellS / 3600,
      dbCost,
      clients,
      clientType,
      clientCost,
      storageCost,
      ioRequests,
      ioCost,
      total,
    };
  });
  if (prices.ioPerMillion === undefined) notes.push(`no storage I/O price for ${lookup.region}: I/O not counted`);
  const scriptRows = [...declared.entries()].filter(([name]) =>
    plan.cells.some((c) => c.steps.some((s) => s.script?.name === name)),
  );
  notes.push(
    `assumes ${a.bytesPerRow} bytes per ` +
      `row` +
      (scriptRows.length > 0
        ? ` (${scriptRows.map(([name, bytes]) => `${name}: ${bytes}, as it declares`).join('; ')})`
        : '') +
      `, ${a.writeIoPerSecond} ` +
      `storage I/O/s while a writing step runs and ${a.readIoPerSecond} while a reading one does (data cached); ` +
      `Aurora I/O-Optimized clusters pay no I/O`,
  );
  const totals = cells.map((c) => c.total);
  return {
    currency: prices.currency,
    region: lookup.region,
    pricesAsOf: pricesAsOfText(table),
    cells,
    total: totals.some((t) => t === null) ? null : totals.reduce<number>((acc, t) => acc + t!, 0),
    missing: [...missing].sort(),
    unconfirmed: unconfirmedPricesUsed(prices, [...used]),
    notes,
  };
}

/** A note after a figure that uses an unconfirmed price, or "". */
export function unconfirmedText(keys: readonly string[]): string {
  return keys.length === 0
    ? ''
    : ` (unconfirmed price: ${keys.join(', ')}; prices/aws-prices.json lists it under unconfirmed)`;
}

export function formatMoney(value: number, currency: string): string {
  const symbol = currency === 'USD' ? '$' : '';
  const suffix = currency === 'USD' ? '' : ` ${currency}`;
  return `${symbol}${value.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}${suffix}`;
}

/** Refuse a run whose estimate exceeds the spec's budget, or that cannot be checked against it. */
export function checkBudget(plan: Plan, budget: Spec['budget'], table: PriceTable): PlanCost {
  const cost = estimatePlanCost(plan, table);
  if (budget === undefined) return cost;
  if (cost.currency !== 'USD') {
    throw new BudgetExceededError(
      `budget.maxUsd is in USD but the prices for ${cost.region} are in ${cost.currency}: give USD prices ` +
        `for ${plan.region} with --prices`,
    );
  }
  if (cost.total === null) {
    throw new BudgetExceededError(
      `cannot check budget.maxUsd ${formatMoney(budget.maxUsd, 'USD')}: no price ` +
        `for ${cost.missing.join(', ')} in ${cost.region} (add them with --prices)`,
    );
  }
  if (cost.total > budget.maxUsd) {
    throw new BudgetExceededError(
      `estimated cost ${formatMoney(cost.total, 'USD')} exceeds ` +
        `budget.maxUsd ${formatMoney(budget.maxUsd, 'USD')} (${plan.cells.length} cells; ` +
        `prices ${cost.pricesAsOf}): ` +
        'lower repeats, durations, thread points or instance sizes, or raise the budget',
    );
  }
  return cost;
}

/**
 * The lines `aurora-bench plan` adds under the plan, the estimated AWS cost and the budget verdict.
 * @internal Exported for its tests.
 */
export function costLines(cost: PlanCost, budget: Spec['budget'], backend: Plan['backend']): string[] {
  const lines: string[] = [];
  const what = backend === 'aws' ? 'Estimated AWS cost:' : 'On AWS the same experiment would cost about';
  if (cost.total === null) {
    lines.push(`${what} unknown: no price for ${cost.missing.join(', ')} in ${cost.region} (add them with --prices)`);
  } else {
    const db = cost.cells.reduce((acc, c) => acc + (c.dbCost ?? 0), 0);
    const clients = cost.cells.reduce((acc, c) => acc + (c.clientCost ?? 0), 0);
    const io = cost.cells.reduce((acc, c) => acc + c.ioCost + c.storageCost, 0);
    lines.push(
      `${what} ${formatMoney(cost.total, cost.currency)} (DB instances ${formatMoney(db, cost.currency)}, ` +
        `clients ${formatMoney(clients, cost.currency)}, storage and ` +
        `I/O ${formatMoney(io, cost.currency)}; ${cost.region} on-demand ` +
        `prices ${cost.pricesAsOf})${unconfirmedText(cost.unconfirmed)}`,
    );
  }
  for (const n of cost.notes) lines.push(`  ${n}`);
  if (budget !== undefined) {
    if (cost.total === null)
      lines.push(
        `  budget ${formatMoney(budget.maxUsd, 'USD')}: cannot be checked (missing prices); an AWS run will be refused`,
      );
    else if (cost.currency === 'USD')
      lines.push(
        `  budget ` +
          formatMoney(budget.maxUsd, 'USD') +
          `: ` +
          (cost.total <= budget.maxUsd ? 'within' : 'EXCEEDED, an AWS run will be refused'),
      );
  }
  return lines;
}

/**
 * What `aurora-bench plan` prints under the plan.
 * A local plan shows what the same experiment would cost on AWS.
 * It is planned again for AWS, since a local plan drops the steps only AWS can run.
 */
export async function planCostLines(spec: Spec, plan: Plan, repoRoot: string, pricesFile?: string): Promise<string[]> {
  const table = loadPrices(repoRoot, pricesFile);
  let awsPlan = plan;
  if (plan.backend !== 'aws') {
    const { planRun } = await import('./plan');
    awsPlan = planRun(spec, {
      backend: 'aws',
      scripts: plan.scripts,
      runId: plan.runId,
      now: new Date(plan.createdAt),
    });
  }
  return costLines(estimatePlanCost(awsPlan, table), spec.budget, plan.backend);
}
