/**
 * The Aurora choices a run answers: provisioned against Aurora Serverless v2 (throughput, p95/p99,
 * scaling lag, cost per million transactions, with intervals), Aurora Standard against Aurora
 * I/O-Optimized (which is cheaper for the measured I/O per transaction, and where they break even),
 * and what the run cost from what really ran beside the plan's estimate.
 *
 * Its own module: `loadAuroraUsage` reads the raw capacity and volume I/O datapoints from the lake
 * (the report's RunData carries only per-step averages), `auroraChoicesSections` turns them and the
 * Context into sections.
 */
import { BACKEND_TIMES } from '../plan/plan';
import { billCell, storageBreakEven, type CellBill, type CellUsage } from '../plan/bill';
import { cellCost, type CellBillFacts } from '../workflow/cell-bill';
import {
  auroraPriceKeys,
  estimatePlanCost,
  formatMoney,
  pricesAsOfText,
  regionPrices,
  unconfirmedPricesUsed,
  unconfirmedText,
} from '../plan/cost';
import { cellEngine, type CellPlan } from '../plan/types';
import { ENGINES, type EngineRef } from '../aurora/engines';
import { fixed, num, pct } from '../format';
import type { LakeReader } from '../lake/duckdb';
import type { StepResult } from '../lake/results';
import type { ReportSection, TableBlock } from './model';
import type { Context } from './context';
import { meanCi, summarize, welchRatioCi, type ConfidenceInterval } from './stats';

/**
 * One CloudWatch datapoint of a Serverless v2 instance's capacity or of the cluster volume's I/O.
 * @internal exported for its tests (a test seam)
 */
export interface UsagePoint {
  readonly cell_id: string;
  readonly step_id: string;
  readonly instance_id: string;
  readonly metric: string;
  readonly ts: string;
  readonly value: number;
}

export interface AuroraUsage {
  /** ServerlessDatabaseCapacity datapoints (ACUs, one per instance and minute). */
  readonly capacity: readonly UsagePoint[];
  /** VolumeReadIOPs and VolumeWriteIOPs datapoints (requests per 5 minutes, per cluster). */
  readonly volumeIo: readonly UsagePoint[];
}

const quote = (s: string): string => `'${s.replace(/'/g, "''")}'`;

/** The run's capacity and volume I/O datapoints (none for a local run: its servers publish neither). */
export async function loadAuroraUsage(lake: LakeReader, runId: string): Promise<AuroraUsage> {
  const rows = await lake.query<UsagePoint>(
    `SELECT cell_id, step_id, instance_id, metric, CAST(ts AS VARCHAR) AS ts, value FROM server_metrics
     WHERE run_id = ${quote(runId)} AND metric IN ('ServerlessDatabaseCapacity', 'VolumeReadIOPs', 'VolumeWriteIOPs')
     ORDER BY ts`,
  );
  return {
    capacity: rows.filter((r) => r.metric === 'ServerlessDatabaseCapacity'),
    volumeIo: rows.filter((r) => r.metric !== 'ServerlessDatabaseCapacity'),
  };
}

const seconds = (from: string, to: string): number => Math.max(0, (Date.parse(to) - Date.parse(from)) / 1000);

/** A step's capacity datapoints per instance, in time order. */
function capacityOf(usage: AuroraUsage, cellId: string, stepId: string): Map<string, UsagePoint[]> {
  const out = new Map<string, UsagePoint[]>();
  for (const p of usage.capacity) {
    if (p.cell_id !== cellId || p.step_id !== stepId) continue;
    out.set(p.instance_id, [...(out.get(p.instance_id) ?? []), p]);
  }
  return out;
}

/**
 * The scaling lag of a step: seconds from its start to the first capacity datapoint of the writer
 * (the instance with the highest peak) that reaches 90% of the step's peak, at CloudWatch's
 * one-minute resolution. null without datapoints or when nothing scaled (peak equals the first value).
 * @internal exported for its tests (a test seam)
 */
export function scalingLagS(step: Pick<StepResult, 'started_at'>, points: readonly UsagePoint[]): number | null {
  if (points.length === 0) return null;
  const peak = Math.max(...points.map((p) => p.value));
  if (!(peak > points[0]!.value)) return null;
  const reached = points.find((p) => p.value >= 0.9 * peak)!;
  return Math.max(0, seconds(step.started_at, reached.ts));
}

/** The average total capacity (ACUs summed over instances) of a step, or undefined without datapoints. */
function averageAcu(byInstance: ReadonlyMap<string, readonly UsagePoint[]>): number | undefined {
  if (byInstance.size === 0) return undefined;
  let total = 0;
  for (const points of byInstance.values()) total += points.reduce((a, p) => a + p.value, 0) / points.length;
  return total;
}

interface CellFacts {
  readonly cell: CellPlan;
  readonly steps: readonly StepResult[];
}

function isClusterEngine(engine: EngineRef | null): boolean {
  return engine !== null && ENGINES[engine.kind].topology === 'cluster';
}

function cellsOf(ctx: Context): CellFacts[] {
  const plan = ctx.data.plan;
  if (!plan) return [];
  return (
    plan.cells
      .map((cell) => ({
        cell,
        steps: ctx.data.steps.filter((s) => s.cell_id === cell.cellId && s.status !== 'skipped'),
      }))
      // An imported run's plan names no engine (core/cli/import-logs.ts): nothing here applies to it.
      .filter((c) => c.steps.length > 0 && isClusterEngine(cellEngine(plan, c.cell) as EngineRef | null))
  );
}

/** The volume's I/O requests in the 5-minute windows collected for a cell's steps (each window once). */
function cellIoRequests(usage: AuroraUsage, cellId: string): number | undefined {
  const windows = new Map<string, number>();
  for (const p of usage.volumeIo) if (p.cell_id === cellId) windows.set(`${p.metric}\u0000${p.ts}`, p.value);
  return windows.size === 0 ? undefined : [...windows.values()].reduce((a, b) => a + b, 0);
}

const variantLabel = (v: CellPlan['variant']): string =>
  v.serverless !== undefined ? `Serverless v2 ${v.serverless.minAcu}-${v.serverless.maxAcu} ACU` : v.instanceClass;

const ciText = (ci: ConfidenceInterval, digits: number): string =>
  Number.isFinite(ci.halfWidth)
    ? `${fixed(ci.estimate, digits)} ±${fixed(ci.halfWidth, digits)}`
    : `${fixed(ci.estimate, digits)} (1 repeat)`;

const ratioText = (ci: ConfidenceInterval): string =>
  `${pct(ci.estimate, 0)}${Number.isFinite(ci.low) ? ` (95% CI ${pct(ci.low, 0)}–${pct(ci.high, 0)})` : ''}`;

interface VariantStep {
  readonly tps: number[];
  readonly p95: number[];
  readonly p99: number[];
  readonly lags: number[];
  /** $ per million transactions, per repeat (compute and measured I/O). */
  readonly perMillion: number[];
  readonly acu: number[];
}

export function serverlessSection(ctx: Context, usage: AuroraUsage): ReportSection | null {
  const plan = ctx.data.plan;
  const cells = cellsOf(ctx);
  if (!plan || !cells.some((c) => c.cell.variant.serverless !== undefined)) return null;
  const prices = regionPrices(ctx.prices, plan.region).prices;
  const local = plan.backend === 'local';
  // Per variant and step (workload, threads, rate, target): one value per repeat.
  const byKey = new Map<string, Map<string, VariantStep>>();
  const variantOf = new Map<string, CellPlan['variant']>();
  for (const { cell, steps } of cells) {
    variantOf.set(cell.variant.name, cell.variant);
    const engine = cellEngine(plan, cell);
    for (const s of steps) {
      if (s.tps === null || s.tps <= 0 || (s.status !== 'ok' && s.status !== 'overloaded')) continue;
      const key =
        `${s.workload} ` +
        `t${s.threads}` +
        (s.rate > 0 ? ` @${num(s.offered_tps, 0)}/s` : '') +
        (s.target !== 'writer' ? ` → ${s.target}` : '');
      const perVariant = byKey.get(key) ?? new Map<string, VariantStep>();
      byKey.set(key, perVariant);
      const vs = perVariant.get(cell.variant.name) ?? { tps: [], p95: [], p99: [], lags: [], perMillion: [], acu: [] };
      perVariant.set(cell.variant.name, vs);
      vs.tps.push(s.tps);
      if (s.lat_p95_ms != null) vs.p95.push(s.lat_p95_ms);
      if (s.lat_p99_ms != null) vs.p99.push(s.lat_p99_ms);
      const capacity = capacityOf(usage, cell.cellId, s.step_id);
      const acu = averageAcu(capacity);
      if (acu !== undefined) vs.acu.push(acu);
      const lag = scalingLagS(
        s,
        [...capacity.values()].sort(
          (a, b) => Math.max(...b.map((p) => p.value)) - Math.max(...a.map((p) => p.value)),
        )[0] ?? [],
      );
      if (lag !== null) vs.lags.push(lag);
      const bill = billCell(prices, {
        cellId: cell.cellId,
        engine,
        variant: cell.variant,
        instanceS: 3600,
        ...(cell.variant.serverless !== undefined && acu !== undefined ? { acuSeconds: acu * 3600 } : {}),
        dataGb: 0,
      });
      if (bill.compute !== null && (cell.variant.serverless === undefined || acu !== undefined))
        vs.perMillion.push((bill.compute / (s.tps * 3600)) * 1e6);
    }
  }
  const rows: string[][] = [];
  const findings: string[] = [];
  for (const [key, perVariant] of byKey) {
    const provisioned = [...perVariant.keys()].filter((n) => variantOf.get(n)?.serverless === undefined);
    const serverless = [...perVariant.keys()].filter((n) => variantOf.get(n)?.serverless !== undefined);
    for (const name of [...provisioned, ...serverless]) {
      const vs = perVariant.get(name)!;
      rows.push([
        key,
        `${name} (${variantLabel(variantOf.get(name)!)})`,
        ciText(meanCi(vs.tps), 0),
        vs.p95.length > 0 ? ciText(meanCi(vs.p95), 2) : '-',
        vs.p99.length > 0 ? ciText(meanCi(vs.p99), 2) : '-',
        vs.lags.length > 0
          ? ciText(meanCi(vs.lags), 0)
          : variantOf.get(name)?.serverless !== undefined
            ? local
              ? 'local: none'
              : 'none'
            : 'n/a',
        vs.acu.length > 0 ? ciText(meanCi(vs.acu), 1) : '-',
        vs.perMillion.length > 0 ? ciText(meanCi(vs.perMillion), 2) : '-',
      ]);
    }
    for (const x of provisioned) {
      for (const y of serverless) {
        const a = perVariant.get(y)!;
        const b = perVariant.get(x)!;
        const tpsRatio = welchRatioCi(summarize(a.tps), summarize(b.tps));
        const p99 = a.p99.length > 0 && b.p99.length > 0 ? welchRatioCi(summarize(a.p99), summarize(b.p99)) : null;
        const cost =
          a.perMillion.length > 0 && b.perMillion.length > 0
            ? `cost per million transactions ${ciText(meanCi(a.perMillion), 2)} ` +
              `vs ${ciText(meanCi(b.perMillion), 2)} ${prices.currency}`
            : `cost per million transactions: ${local ? 'no ACUs are measured locally' : 'no ACUs measured'}`;
        findings.push(
          `${key}: ${y} (${variantLabel(variantOf.get(y)!)}) vs ${x} (${variantOf.get(x)!.instanceClass}): ` +
            `throughput ${ratioText(tpsRatio)}` +
            (p99 ? `, p99 ${ratioText(p99)}` : '') +
            `, scaling lag ` +
            (a.lags.length > 0
              ? `${ciText(meanCi(a.lags), 0)} s`
              : local
                ? 'not measured locally (no Aurora capacity scaling)'
                : 'none seen (capacity did not rise during the step)') +
            `; ${cost}`,
        );
      }
    }
  }
  if (rows.length === 0) return null;
  if (findings.length === 0)
    findings.push('No step ran on both a provisioned and a Serverless v2 variant: the table lists each on its own.');
  if (local)
    findings.push(
      'Locally there is no Aurora capacity scaling: each Serverless v2 server stood in at its maxAcu size, so ' +
        "these figures are not Aurora's.",
    );
  const table: TableBlock = {
    title: 'Provisioned vs Aurora Serverless v2 (mean ± 95% CI over repeats)',
    head: ['Step', 'Variant', 'TPS', 'p95 ms', 'p99 ms', 'Scaling lag s', 'Avg ACUs', `${prices.currency} per M tx`],
    rows,
    numeric: [2, 3, 4, 5, 6, 7],
    notes: [
      "Scaling lag: from the step's start to the first minute the writer's ServerlessDatabaseCapacity reached " +
        '90% of its peak in the step (CloudWatch one-minute datapoints).',
      'Cost per million transactions: the compute while the step ran (instances x class price, or ' +
        'measured ACUs x ACU ' +
        `price; prices ${pricesAsOfText(ctx.prices)}) over its transactions; storage and I/O are in the storage and ` +
        'bill sections.' +
        unconfirmedText(
          unconfirmedPricesUsed(
            prices,
            cells.flatMap((c) => auroraPriceKeys(cellEngine(plan, c.cell), c.cell.variant)),
          ),
        ),
    ],
  };
  return {
    id: 'serverless',
    title: 'Provisioned vs Aurora Serverless v2',
    question:
      'Provisioned class X or Serverless v2 min/max Y: throughput, p95/p99, scaling lag and cost per million ' +
      'transactions',
    findings,
    tables: [table],
    charts: [],
    answer: { lines: findings.slice(0, 3), tables: [], charts: [] },
  };
}

export function storageSection(ctx: Context, usage: AuroraUsage): ReportSection | null {
  const plan = ctx.data.plan;
  const cells = cellsOf(ctx);
  if (!plan || cells.length === 0 || !(ctx.data.spec?.variants ?? []).some((v) => v.storage !== undefined)) return null;
  const prices = regionPrices(ctx.prices, plan.region).prices;
  const bytesPerRow = ctx.prices.assumptions.bytesPerRow;
  const findings: string[] = [];
  const rows: string[][] = [];
  const seen = new Set<string>();
  for (const { cell } of cells) {
    if (seen.has(cell.variant.name)) continue;
    const sameVariant = cells.filter((c) => c.cell.variant.name === cell.variant.name);
    seen.add(cell.variant.name);
    let io = 0;
    let tx = 0;
    let stepS = 0;
    let measured = false;
    const acus: number[] = [];
    for (const c of sameVariant) {
      const requests = cellIoRequests(usage, c.cell.cellId);
      if (requests === undefined) continue;
      measured = true;
      io += requests;
      for (const s of c.steps) {
        const d = seconds(s.started_at, s.ended_at);
        stepS += d;
        tx += (s.tps ?? 0) * d;
        const acu = averageAcu(capacityOf(usage, c.cell.cellId, s.step_id));
        if (acu !== undefined) acus.push(acu);
      }
    }
    const engine = cellEngine(plan, cell);
    const dataGb = (cell.data.tables * cell.data.tableSize * bytesPerRow) / 1e9;
    const configured = cell.variant.storage ?? 'standard';
    if (!measured || tx <= 0 || stepS <= 0) {
      rows.push([cell.variant.name, configured, '-', '-', '-', '-', '-']);
      continue;
    }
    const ioPerTx = io / tx;
    const tps = tx / stepS;
    const be = storageBreakEven(prices, engine, cell.variant, {
      ioPerS: ioPerTx * tps,
      dataGb,
      ...(acus.length > 0 ? { averageAcu: acus.reduce((a, b) => a + b, 0) / acus.length } : {}),
    });
    if (!be) {
      rows.push([cell.variant.name, configured, fixed(ioPerTx, 2), num(tps, 0), '-', '-', '-']);
      continue;
    }
    const cheaper = be.ioOptimizedHourly < be.standardHourly ? 'I/O-Optimized' : 'Standard';
    const breakEvenTps = ioPerTx > 0 ? be.breakEvenIoPerS / ioPerTx : Number.POSITIVE_INFINITY;
    rows.push([
      cell.variant.name,
      configured,
      fixed(ioPerTx, 2),
      num(tps, 0),
      `${formatMoney(be.standardHourly, prices.currency)} / ${formatMoney(be.ioOptimizedHourly, prices.currency)}`,
      num(be.breakEvenIoPerS, 0),
      Number.isFinite(breakEvenTps) ? num(breakEvenTps, 0) : '-',
    ]);
    const unconfirmed = unconfirmedPricesUsed(prices, [
      ...auroraPriceKeys(engine, { ...cell.variant, storage: 'standard' }),
      ...auroraPriceKeys(engine, { ...cell.variant, storage: 'io-optimized' }),
    ]);
    findings.push(
      `${cell.variant.name} (${variantLabel(cell.variant)}, measured ` +
        `on ${configured === 'io-optimized' ? 'I/O-Optimized' : 'Standard'}): ${fixed(ioPerTx, 2)} I/O requests ` +
        `per transaction at ${num(tps, 0)} TPS → Standard ${formatMoney(be.standardHourly, prices.currency)}/h, ` +
        `I/O-Optimized ${formatMoney(be.ioOptimizedHourly, prices.currency)}/h: ${cheaper} is cheaper; they ` +
        `break even at ${num(be.breakEvenIoPerS, 0)} I/O ` +
        `requests/s` +
        (Number.isFinite(breakEvenTps) ? ` (${num(breakEvenTps, 0)} TPS of this workload)` : '') +
        unconfirmedText(unconfirmed),
    );
  }
  if (findings.length === 0) {
    findings.push(
      plan.backend === 'local'
        ? 'Which storage is cheaper cannot be told locally: there is no Aurora cluster volume, so its I/O ' +
            'requests (VolumeReadIOPs, VolumeWriteIOPs) are measured only on AWS.'
        : 'No cluster volume I/O was collected for this run (VolumeReadIOPs, VolumeWriteIOPs come as 5-minute ' +
            'datapoints, published late): the break-even needs them.',
    );
  }
  return {
    id: 'storage',
    title: 'Aurora Standard vs I/O-Optimized',
    question: 'Which storage configuration is cheaper for this workload, and at what I/O rate do they break even',
    findings,
    tables: [
      {
        title: 'Storage configurations priced on the measured I/O',
        head: [
          'Variant',
          'Ran on',
          'I/O per tx',
          'TPS',
          'Standard / I/O-Opt per hour',
          'Break-even I/O/s',
          'Break-even TPS',
        ],
        rows,
        numeric: [2, 3, 5, 6],
        notes: [
          "I/O per transaction: the volume's VolumeReadIOPs + VolumeWriteIOPs in the 5-minute windows " +
            "overlapping the steps over the steps' transactions (so prepare I/O inside those windows counts too).",
          `Standard: compute + storage + I/O at the per-million price; I/O-Optimized: its compute ` +
            `(x${String(prices.ioOptimizedInstanceMultiplier ?? '-')}, or its ACU price) and storage, no I/O ` +
            `charge (prices ${pricesAsOfText(ctx.prices)}).`,
        ],
      },
    ],
    charts: [],
    answer: { lines: findings.slice(0, 3), tables: [], charts: [] },
  };
}

/** A cell's usage from the run's rows: the instance hours, ACU-seconds and I/O requests it really had. */
function cellUsage(ctx: Context, usage: AuroraUsage, cell: CellPlan, steps: readonly StepResult[]): CellUsage {
  const plan = ctx.data.plan!;
  const start = Math.min(...steps.map((s) => Date.parse(s.started_at)));
  const end = Math.max(...steps.map((s) => Date.parse(s.ended_at)));
  const stepSpanS = Math.max(0, (end - start) / 1000);
  // The lake records when steps ran, not when RDS created and deleted the instances: the planned
  // set-up and teardown time (plan.ts BACKEND_TIMES) is added to the span the steps took.
  const instanceS = stepSpanS + BACKEND_TIMES.aws.provisionS;
  const instances = 1 + cell.variant.readers;
  let acuSeconds: number | undefined;
  if (cell.variant.serverless !== undefined) {
    let measuredS = 0;
    let acuS = 0;
    for (const s of steps) {
      const acu = averageAcu(capacityOf(usage, cell.cellId, s.step_id));
      if (acu === undefined) continue;
      const d = seconds(s.started_at, s.ended_at);
      measuredS += d;
      acuS += acu * d;
    }
    // Outside the measured steps the instances are taken at their minimum.
    if (measuredS > 0)
      acuSeconds = acuS + instances * cell.variant.serverless.minAcu * Math.max(0, instanceS - measuredS);
  }
  const ioRequests = cellIoRequests(usage, cell.cellId);
  return {
    cellId: cell.cellId,
    engine: cellEngine(plan, cell),
    variant: cell.variant,
    instanceS,
    ...(acuSeconds !== undefined ? { acuSeconds } : {}),
    ...(ioRequests !== undefined ? { ioRequests } : {}),
    dataGb: (cell.data.tables * cell.data.tableSize * ctx.prices.assumptions.bytesPerRow) / 1e9,
  };
}

/**
 * Each cell's facts as its teardown recorded them in the manifest
 * (`cells[].resources`, `cells[].measured`); empty for runs before.
 */
function recordedFacts(ctx: Context): Map<string, CellBillFacts> {
  const out = new Map<string, CellBillFacts>();
  try {
    const cells = JSON.parse(ctx.data.run.cells || '[]') as {
      cell_id: string;
      resources?: CellBillFacts['resources'];
      measured?: CellBillFacts['measured'];
    }[];
    for (const c of cells)
      if (c.resources !== undefined && c.measured !== undefined)
        out.set(c.cell_id, { resources: c.resources, measured: c.measured });
  } catch {
    // an unreadable cells column: the bill falls back to the steps' span
  }
  return out;
}

export function billSection(ctx: Context, usage: AuroraUsage): ReportSection | null {
  const plan = ctx.data.plan;
  if (!plan || plan.backend !== 'aws') return null;
  const cells = cellsOf(ctx);
  if (cells.length === 0) return null;
  const prices = regionPrices(ctx.prices, plan.region).prices;
  const estimate = estimatePlanCost(plan, ctx.prices);
  const recorded = recordedFacts(ctx);
  const money = (v: number | null): string => (v === null ? '-' : formatMoney(v, prices.currency));
  const rows: string[][] = [];
  let total = 0;
  let complete = true;
  let estimated = 0;
  let fromLifetimes = 0;
  const missing = new Set<string>();
  const unconfirmed = new Set<string>();
  for (const { cell, steps } of cells) {
    const facts = recorded.get(cell.cellId);
    const planned = estimate.cells.find((c) => c.cellId === cell.cellId);
    let bill: CellBill;
    let ec2: number | null = null;
    let plannedCell: number | null;
    if (facts !== undefined) {
      // What really ran: the resources' creation and deletion times, priced with this report's prices.
      const actual = cellCost(plan, ctx.prices, estimate, cell, facts);
      bill = actual.db;
      ec2 = actual.ec2;
      plannedCell = actual.estimate;
      for (const u of actual.unconfirmed) unconfirmed.add(u);
      fromLifetimes++;
    } else {
      bill = billCell(prices, cellUsage(ctx, usage, cell, steps));
      plannedCell = planned ? (planned.dbCost ?? 0) + planned.storageCost + planned.ioCost : null;
      for (const u of unconfirmedPricesUsed(prices, auroraPriceKeys(cellEngine(plan, cell), cell.variant)))
        unconfirmed.add(u);
    }
    for (const m of bill.missing) missing.add(m);
    const cellTotal = bill.total === null ? null : bill.total + (ec2 ?? 0);
    if (cellTotal === null || (facts !== undefined && ec2 === null)) complete = false;
    else total += cellTotal;
    if (plannedCell !== null) estimated += plannedCell;
    rows.push([
      cell.cellId,
      bill.computeWhat,
      money(bill.compute),
      money(bill.storage),
      bill.ioRequests === null ? 'not measured' : `${num(bill.ioRequests, 0)} → ${money(bill.io)}`,
      facts !== undefined ? money(ec2) : 'not recorded',
      money(cellTotal),
      money(plannedCell),
    ]);
  }
  const what = fromLifetimes === cells.length ? 'DB clusters and EC2 instances' : 'Aurora clusters';
  const findings = [
    complete
      ? `The run's ${what} cost ${formatMoney(total, prices.currency)} from what really ran (compute, storage ` +
        `and the I/O measured), against ${formatMoney(estimated, prices.currency)} estimated for them by the ` +
        `plan (${plan.region} on-demand ` +
        `prices ${pricesAsOfText(ctx.prices)})${unconfirmedText([...unconfirmed])}.`
      : `Some cells have no price (${[...missing].join(', ') || 'an EC2 type'}): add them with --prices.`,
  ];
  return {
    id: 'bill',
    title: 'What the run cost',
    question: "What the run's resources cost from what really ran, beside the plan's estimate",
    findings,
    tables: [
      {
        title: 'The bill per cell',
        head: ['Cell', 'Compute', 'Compute cost', 'Storage', 'I/O requests → cost', 'EC2', 'Total', 'Plan estimate'],
        rows,
        numeric: [2, 3, 5, 6, 7],
        notes: [
          fromLifetimes === cells.length
            ? 'Lifetimes: each DB cluster, DB instance and EC2 instance from its creation (ClusterCreateTime, ' +
              'InstanceCreateTime, LaunchTime) to the teardown pass that found it gone, recorded in the run ' +
              'manifest (cells[].resources); RDS bills at least 10 minutes, EC2 at least 1.'
            : `Cells without recorded lifetimes (runs before they were recorded): instance hours are the span ` +
              `the cell's steps ran plus the planned set-up and teardown (${BACKEND_TIMES.aws.provisionS / 60} ` +
              `min), EC2 not counted; their estimate is the DB part only.`,
          'Serverless v2: ACU-seconds from ServerlessDatabaseCapacity while steps ran, minAcu outside them; ' +
            "Aurora Standard: the volume's VolumeReadIOPs + VolumeWriteIOPs at the per-million price; " +
            'I/O-Optimized: no I/O charge.',
          ...(unconfirmed.size > 0
            ? [
                `Unconfirmed price used: ${[...unconfirmed].join(', ')} (prices/aws-prices.json lists it under ` +
                  `unconfirmed).`,
              ]
            : []),
        ],
      },
    ],
    charts: [],
  };
}

/** The sections of this module that apply to the run, in order. */
/** A run without Serverless v2 capacity or cluster volume I/O datapoints (a local run). */
export const NO_AURORA_USAGE: AuroraUsage = { capacity: [], volumeIo: [] };

/** Every Aurora-choices section that applies, in reading order. @internal exported for its tests (a test seam) */
export function auroraChoicesSections(ctx: Context, usage: AuroraUsage = NO_AURORA_USAGE): ReportSection[] {
  return [serverlessSection(ctx, usage), storageSection(ctx, usage), billSection(ctx, usage)].filter(
    (s): s is ReportSection => s !== null,
  );
}
