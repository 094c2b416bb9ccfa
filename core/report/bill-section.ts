/**
 * What the run cost: each cell's compute, storage, I/O and EC2 from what really ran (the lifetimes
 * its teardown recorded, or else the span its steps ran), beside the plan's estimate.
 */
import { BACKEND_TIMES } from '../plan/plan';
import { billCell, type CellBill, type CellUsage } from '../plan/bill';
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
import { num } from '../format';
import type { StepResult } from '../lake/results';
import type { ReportSection } from './model';
import type { Context } from './context';
import { averageAcu, capacityOf, cellIoRequests, cellsOf, seconds, type AuroraUsage } from './aurora-usage';

/** One cell's bill, in the findings' currency; null: not priced (or, for EC2, not recorded). */
interface BillRow {
  readonly cellId: string;
  /** What the compute is (class and instance-hours, or ACU-hours), as the bill describes it. */
  readonly computeWhat: string;
  readonly compute: number | null;
  readonly storage: number;
  /** The volume's I/O requests and their cost; ioRequests null: not measured. */
  readonly ioRequests: number | null;
  readonly io: number;
  /** Whether the cell's teardown recorded its resources' lifetimes (else EC2 is not counted). */
  readonly recorded: boolean;
  readonly ec2: number | null;
  readonly total: number | null;
  readonly estimate: number | null;
}

export interface BillFindings {
  readonly region: string;
  readonly currency: string;
  readonly rows: readonly BillRow[];
  /** Every cell priced (and, where recorded, its EC2 too): `total` is the run's. */
  readonly complete: boolean;
  readonly total: number;
  readonly estimated: number;
  /** Every cell billed from recorded lifetimes. */
  readonly allRecorded: boolean;
  /** The prices missing for the cells that have none. */
  readonly missing: readonly string[];
  readonly unconfirmedPrices: readonly string[];
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

export function analyzeBill(ctx: Context, usage: AuroraUsage): BillFindings | null {
  const plan = ctx.data.plan;
  if (!plan || plan.backend !== 'aws') return null;
  const cells = cellsOf(ctx);
  if (cells.length === 0) return null;
  const prices = regionPrices(ctx.prices, plan.region).prices;
  const estimate = estimatePlanCost(plan, ctx.prices);
  const recorded = recordedFacts(ctx);
  const rows: BillRow[] = [];
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
    rows.push({
      cellId: cell.cellId,
      computeWhat: bill.computeWhat,
      compute: bill.compute,
      storage: bill.storage,
      ioRequests: bill.ioRequests,
      io: bill.io,
      recorded: facts !== undefined,
      ec2,
      total: cellTotal,
      estimate: plannedCell,
    });
  }
  return {
    region: plan.region,
    currency: prices.currency,
    rows,
    complete,
    total,
    estimated,
    allRecorded: fromLifetimes === cells.length,
    missing: [...missing],
    unconfirmedPrices: [...unconfirmed],
  };
}

export function renderBill(f: BillFindings, ctx: Context): ReportSection {
  const money = (v: number | null): string => (v === null ? '-' : formatMoney(v, f.currency));
  const what = f.allRecorded ? 'DB clusters and EC2 instances' : 'Aurora clusters';
  const findings = [
    f.complete
      ? `The run's ${what} cost ${formatMoney(f.total, f.currency)} from what really ran (compute, storage ` +
        `and the I/O measured), against ${formatMoney(f.estimated, f.currency)} estimated for them by the ` +
        `plan (${f.region} on-demand ` +
        `prices ${pricesAsOfText(ctx.prices)})${unconfirmedText(f.unconfirmedPrices)}.`
      : `Some cells have no price (${f.missing.join(', ') || 'an EC2 type'}): add them with --prices.`,
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
        rows: f.rows.map((r) => [
          r.cellId,
          r.computeWhat,
          money(r.compute),
          money(r.storage),
          r.ioRequests === null ? 'not measured' : `${num(r.ioRequests, 0)} → ${money(r.io)}`,
          r.recorded ? money(r.ec2) : 'not recorded',
          money(r.total),
          money(r.estimate),
        ]),
        numeric: [2, 3, 5, 6, 7],
        notes: [
          f.allRecorded
            ? 'Lifetimes: each DB cluster, DB instance and EC2 instance from its creation (ClusterCreateTime, ' +
              'InstanceCreateTime, LaunchTime) to the teardown pass that found it gone, recorded in the run ' +
              'manifest (cells[].resources); RDS bills at least 10 minutes, EC2 at least 1.'
            : `Cells without recorded lifetimes (runs before they were recorded): instance hours are the span ` +
              `the cell's steps ran plus the planned set-up and teardown (${BACKEND_TIMES.aws.provisionS / 60} ` +
              `min), EC2 not counted; their estimate is the DB part only.`,
          'Serverless v2: ACU-seconds from ServerlessDatabaseCapacity while steps ran, minAcu outside them; ' +
            "Aurora Standard: the volume's VolumeReadIOPs + VolumeWriteIOPs at the per-million price; " +
            'I/O-Optimized: no I/O charge.',
          ...(f.unconfirmedPrices.length > 0
            ? [
                `Unconfirmed price used: ${f.unconfirmedPrices.join(', ')} (prices/aws-prices.json lists it under ` +
                  `unconfirmed).`,
              ]
            : []),
        ],
      },
    ],
    charts: [],
  };
}
