/**
 * Aurora Standard against Aurora I/O-Optimized: each variant's measured I/O requests per transaction
 * priced both ways, which is cheaper, and the I/O rate (and TPS of the workload) where they break even.
 */
import { storageBreakEven } from '../plan/bill';
import {
  auroraPriceKeys,
  formatMoney,
  pricesAsOfText,
  regionPrices,
  unconfirmedPricesUsed,
  unconfirmedText,
} from '../plan/cost';
import { cellEngine, type CellPlan } from '../plan/types';
import { fixed, num } from '../format';
import type { ReportSection } from './model';
import type { Context } from './context';
import {
  averageAcu,
  capacityOf,
  cellIoRequests,
  cellsOf,
  seconds,
  variantLabel,
  variantRef,
  type AuroraUsage,
  type VariantRef,
} from './aurora-usage';

/** Both configurations priced per hour at the measured I/O rate, and where they cost the same. */
interface StoragePricing {
  readonly standardHourly: number;
  readonly ioOptimizedHourly: number;
  readonly ioOptimizedCheaper: boolean;
  readonly breakEvenIoPerS: number;
  /** The break-even as TPS of this workload; null when it has none (no I/O per transaction). */
  readonly breakEvenTps: number | null;
  readonly unconfirmedPrices: readonly string[];
}

/** One variant (its cells together): null figures were not measured or not priced. */
interface StorageRow {
  readonly variant: VariantRef;
  readonly configured: NonNullable<CellPlan['variant']['storage']>;
  readonly measured: { readonly ioPerTx: number; readonly tps: number } | null;
  readonly pricing: StoragePricing | null;
}

export interface StorageFindings {
  readonly local: boolean;
  readonly currency: string;
  readonly ioOptimizedInstanceMultiplier: number | null;
  readonly rows: readonly StorageRow[];
}

export function analyzeStorage(ctx: Context, usage: AuroraUsage): StorageFindings | null {
  const plan = ctx.data.plan;
  const cells = cellsOf(ctx);
  if (!plan || cells.length === 0 || !(ctx.data.spec?.variants ?? []).some((v) => v.storage !== undefined)) return null;
  const prices = regionPrices(ctx.prices, plan.region).prices;
  const bytesPerRow = ctx.prices.assumptions.bytesPerRow;
  const rows: StorageRow[] = [];
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
    const row = { variant: variantRef(cell.variant), configured: cell.variant.storage ?? 'standard' } as const;
    if (!measured || tx <= 0 || stepS <= 0) {
      rows.push({ ...row, measured: null, pricing: null });
      continue;
    }
    const ioPerTx = io / tx;
    const tps = tx / stepS;
    const be = storageBreakEven(prices, engine, cell.variant, {
      ioPerS: ioPerTx * tps,
      dataGb,
      ...(acus.length > 0 ? { averageAcu: acus.reduce((a, b) => a + b, 0) / acus.length } : {}),
    });
    const breakEvenTps = be && ioPerTx > 0 ? be.breakEvenIoPerS / ioPerTx : Number.POSITIVE_INFINITY;
    rows.push({
      ...row,
      measured: { ioPerTx, tps },
      pricing: !be
        ? null
        : {
            standardHourly: be.standardHourly,
            ioOptimizedHourly: be.ioOptimizedHourly,
            ioOptimizedCheaper: be.ioOptimizedHourly < be.standardHourly,
            breakEvenIoPerS: be.breakEvenIoPerS,
            breakEvenTps: Number.isFinite(breakEvenTps) ? breakEvenTps : null,
            unconfirmedPrices: unconfirmedPricesUsed(prices, [
              ...auroraPriceKeys(engine, { ...cell.variant, storage: 'standard' }),
              ...auroraPriceKeys(engine, { ...cell.variant, storage: 'io-optimized' }),
            ]),
          },
    });
  }
  return {
    local: plan.backend === 'local',
    currency: prices.currency,
    ioOptimizedInstanceMultiplier: prices.ioOptimizedInstanceMultiplier ?? null,
    rows,
  };
}

function pricedText(f: StorageFindings, r: StorageRow, m: NonNullable<StorageRow['measured']>, p: StoragePricing) {
  const money = (v: number): string => formatMoney(v, f.currency);
  return (
    `${r.variant.name} (${variantLabel(r.variant)}, measured ` +
    `on ${r.configured === 'io-optimized' ? 'I/O-Optimized' : 'Standard'}): ${fixed(m.ioPerTx, 2)} I/O requests ` +
    `per transaction at ${num(m.tps, 0)} TPS → Standard ${money(p.standardHourly)}/h, ` +
    `I/O-Optimized ${money(p.ioOptimizedHourly)}/h: ${p.ioOptimizedCheaper ? 'I/O-Optimized' : 'Standard'} is ` +
    `cheaper; they break even at ${num(p.breakEvenIoPerS, 0)} I/O ` +
    `requests/s` +
    (p.breakEvenTps !== null ? ` (${num(p.breakEvenTps, 0)} TPS of this workload)` : '') +
    unconfirmedText(p.unconfirmedPrices)
  );
}

function rowCells(f: StorageFindings, r: StorageRow): string[] {
  const [m, p] = [r.measured, r.pricing];
  if (m === null) return [r.variant.name, r.configured, '-', '-', '-', '-', '-'];
  if (p === null) return [r.variant.name, r.configured, fixed(m.ioPerTx, 2), num(m.tps, 0), '-', '-', '-'];
  return [
    r.variant.name,
    r.configured,
    fixed(m.ioPerTx, 2),
    num(m.tps, 0),
    `${formatMoney(p.standardHourly, f.currency)} / ${formatMoney(p.ioOptimizedHourly, f.currency)}`,
    num(p.breakEvenIoPerS, 0),
    p.breakEvenTps !== null ? num(p.breakEvenTps, 0) : '-',
  ];
}

export function renderStorage(f: StorageFindings, ctx: Context): ReportSection {
  const findings = f.rows.flatMap((r) =>
    r.measured !== null && r.pricing !== null ? [pricedText(f, r, r.measured, r.pricing)] : [],
  );
  if (findings.length === 0) {
    findings.push(
      f.local
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
        rows: f.rows.map((r) => rowCells(f, r)),
        numeric: [2, 3, 5, 6],
        notes: [
          "I/O per transaction: the volume's VolumeReadIOPs + VolumeWriteIOPs in the 5-minute windows " +
            "overlapping the steps over the steps' transactions (so prepare I/O inside those windows counts too).",
          `Standard: compute + storage + I/O at the per-million price; I/O-Optimized: its compute ` +
            `(x${String(f.ioOptimizedInstanceMultiplier ?? '-')}, or its ACU price) and storage, no I/O ` +
            `charge (prices ${pricesAsOfText(ctx.prices)}).`,
        ],
      },
    ],
    charts: [],
    answer: { lines: findings.slice(0, 3), tables: [], charts: [] },
  };
}
