/**
 * Provisioned against Aurora Serverless v2: throughput, p95/p99, scaling lag, average ACUs and cost
 * per million transactions per step and variant (mean and 95% interval over repeats), and each
 * Serverless v2 variant against each provisioned one on the same step.
 */
import { billCell } from '../plan/bill';
import { auroraPriceKeys, pricesAsOfText, regionPrices, unconfirmedPricesUsed, unconfirmedText } from '../plan/cost';
import { cellEngine } from '../plan/types';
import { fixed, num, pct } from '../format';
import type { StepResult } from '../lake/results';
import type { ReportSection, TableBlock } from './model';
import type { Context } from './context';
import { meanCi, summarize, welchRatioCi, type ConfidenceInterval } from './stats';
import {
  averageAcu,
  capacityOf,
  cellsOf,
  scalingLagS,
  variantLabel,
  variantRef,
  type AuroraUsage,
  type VariantRef,
} from './aurora-usage';

/** The step a row is about: its workload, threads, rate and target. */
type ServerlessStep = Pick<StepResult, 'workload' | 'threads' | 'rate' | 'offered_tps' | 'target'>;

/** One variant on one step: each figure's mean and 95% interval over its repeats (null: none measured). */
interface ServerlessRow {
  readonly step: ServerlessStep;
  readonly variant: VariantRef;
  readonly tps: ConfidenceInterval;
  readonly p95Ms: ConfidenceInterval | null;
  readonly p99Ms: ConfidenceInterval | null;
  readonly scalingLagS: ConfidenceInterval | null;
  readonly averageAcu: ConfidenceInterval | null;
  /** Compute cost per million transactions, in the findings' currency. */
  readonly perMillion: ConfidenceInterval | null;
}

/** A Serverless v2 variant against a provisioned one on the same step. */
interface ServerlessComparison {
  readonly step: ServerlessStep;
  readonly serverless: VariantRef;
  readonly provisioned: VariantRef;
  /** Serverless over provisioned. */
  readonly tpsRatio: ConfidenceInterval;
  readonly p99Ratio: ConfidenceInterval | null;
  readonly scalingLagS: ConfidenceInterval | null;
  /** Both costs per million transactions, or null when either variant has none. */
  readonly perMillion: { readonly serverless: ConfidenceInterval; readonly provisioned: ConfidenceInterval } | null;
}

export interface ServerlessFindings {
  readonly local: boolean;
  readonly currency: string;
  /** Provisioned variants first, then Serverless v2, per step in the order first run. */
  readonly rows: readonly ServerlessRow[];
  readonly comparisons: readonly ServerlessComparison[];
  readonly unconfirmedPrices: readonly string[];
}

/** Per repeat of one variant on one step. */
interface Samples {
  readonly tps: number[];
  readonly p95: number[];
  readonly p99: number[];
  readonly lags: number[];
  /** $ per million transactions, per repeat (compute and measured I/O). */
  readonly perMillion: number[];
  readonly acu: number[];
}

const noSamples = (): Samples => ({ tps: [], p95: [], p99: [], lags: [], perMillion: [], acu: [] });

const stepLabel = (s: ServerlessStep): string =>
  `${s.workload} ` +
  `t${s.threads}` +
  (s.rate > 0 ? ` @${num(s.offered_tps, 0)}/s` : '') +
  (s.target !== 'writer' ? ` → ${s.target}` : '');

const ciOf = (values: readonly number[]): ConfidenceInterval | null => (values.length > 0 ? meanCi(values) : null);

export function analyzeServerless(ctx: Context, usage: AuroraUsage): ServerlessFindings | null {
  const plan = ctx.data.plan;
  const cells = cellsOf(ctx);
  if (!plan || !cells.some((c) => c.cell.variant.serverless !== undefined)) return null;
  const prices = regionPrices(ctx.prices, plan.region).prices;
  // Per step (workload, threads, rate, target) and variant: one value per repeat.
  const byKey = new Map<string, { step: ServerlessStep; perVariant: Map<string, Samples> }>();
  const variantOf = new Map<string, VariantRef>();
  for (const { cell, steps } of cells) {
    variantOf.set(cell.variant.name, variantRef(cell.variant));
    const engine = cellEngine(plan, cell);
    for (const s of steps) {
      if (s.tps === null || s.tps <= 0 || (s.status !== 'ok' && s.status !== 'overloaded')) continue;
      const { workload, threads, rate, offered_tps, target } = s;
      const step: ServerlessStep = { workload, threads, rate, offered_tps, target };
      const key = stepLabel(step);
      const entry = byKey.get(key) ?? { step, perVariant: new Map<string, Samples>() };
      byKey.set(key, entry);
      const vs = entry.perVariant.get(cell.variant.name) ?? noSamples();
      entry.perVariant.set(cell.variant.name, vs);
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
  const rows: ServerlessRow[] = [];
  const comparisons: ServerlessComparison[] = [];
  for (const { step, perVariant } of byKey.values()) {
    const provisioned = [...perVariant.keys()].filter((n) => variantOf.get(n)?.serverless === undefined);
    const serverless = [...perVariant.keys()].filter((n) => variantOf.get(n)?.serverless !== undefined);
    for (const name of [...provisioned, ...serverless]) {
      const vs = perVariant.get(name)!;
      rows.push({
        step,
        variant: variantOf.get(name)!,
        tps: meanCi(vs.tps),
        p95Ms: ciOf(vs.p95),
        p99Ms: ciOf(vs.p99),
        scalingLagS: ciOf(vs.lags),
        averageAcu: ciOf(vs.acu),
        perMillion: ciOf(vs.perMillion),
      });
    }
    for (const x of provisioned) {
      for (const y of serverless) {
        const a = perVariant.get(y)!;
        const b = perVariant.get(x)!;
        comparisons.push({
          step,
          serverless: variantOf.get(y)!,
          provisioned: variantOf.get(x)!,
          tpsRatio: welchRatioCi(summarize(a.tps), summarize(b.tps)),
          p99Ratio: a.p99.length > 0 && b.p99.length > 0 ? welchRatioCi(summarize(a.p99), summarize(b.p99)) : null,
          scalingLagS: ciOf(a.lags),
          perMillion:
            a.perMillion.length > 0 && b.perMillion.length > 0
              ? { serverless: meanCi(a.perMillion), provisioned: meanCi(b.perMillion) }
              : null,
        });
      }
    }
  }
  if (rows.length === 0) return null;
  return {
    local: plan.backend === 'local',
    currency: prices.currency,
    rows,
    comparisons,
    unconfirmedPrices: unconfirmedPricesUsed(
      prices,
      cells.flatMap((c) => auroraPriceKeys(cellEngine(plan, c.cell), c.cell.variant)),
    ),
  };
}

const ciText = (ci: ConfidenceInterval, digits: number): string =>
  Number.isFinite(ci.halfWidth)
    ? `${fixed(ci.estimate, digits)} ±${fixed(ci.halfWidth, digits)}`
    : `${fixed(ci.estimate, digits)} (1 repeat)`;

const ratioText = (ci: ConfidenceInterval): string =>
  `${pct(ci.estimate, 0)}${Number.isFinite(ci.low) ? ` (95% CI ${pct(ci.low, 0)}–${pct(ci.high, 0)})` : ''}`;

const ciCell = (ci: ConfidenceInterval | null, digits: number): string => (ci === null ? '-' : ciText(ci, digits));

function lagCell(f: ServerlessFindings, r: ServerlessRow): string {
  if (r.scalingLagS !== null) return ciText(r.scalingLagS, 0);
  if (r.variant.serverless === undefined) return 'n/a';
  return f.local ? 'local: none' : 'none';
}

function comparisonText(f: ServerlessFindings, c: ServerlessComparison): string {
  const cost =
    c.perMillion !== null
      ? `cost per million transactions ${ciText(c.perMillion.serverless, 2)} ` +
        `vs ${ciText(c.perMillion.provisioned, 2)} ${f.currency}`
      : `cost per million transactions: ${f.local ? 'no ACUs are measured locally' : 'no ACUs measured'}`;
  return (
    `${stepLabel(c.step)}: ${c.serverless.name} (${variantLabel(c.serverless)}) vs ${c.provisioned.name} ` +
    `(${c.provisioned.instanceClass}): ` +
    `throughput ${ratioText(c.tpsRatio)}` +
    (c.p99Ratio ? `, p99 ${ratioText(c.p99Ratio)}` : '') +
    `, scaling lag ` +
    (c.scalingLagS !== null
      ? `${ciText(c.scalingLagS, 0)} s`
      : f.local
        ? 'not measured locally (no Aurora capacity scaling)'
        : 'none seen (capacity did not rise during the step)') +
    `; ${cost}`
  );
}

export function renderServerless(f: ServerlessFindings, ctx: Context): ReportSection {
  const findings = f.comparisons.map((c) => comparisonText(f, c));
  if (findings.length === 0)
    findings.push('No step ran on both a provisioned and a Serverless v2 variant: the table lists each on its own.');
  if (f.local)
    findings.push(
      'Locally there is no Aurora capacity scaling: each Serverless v2 server stood in at its maxAcu size, so ' +
        "these figures are not Aurora's.",
    );
  const table: TableBlock = {
    title: 'Provisioned vs Aurora Serverless v2 (mean ± 95% CI over repeats)',
    head: ['Step', 'Variant', 'TPS', 'p95 ms', 'p99 ms', 'Scaling lag s', 'Avg ACUs', `${f.currency} per M tx`],
    rows: f.rows.map((r) => [
      stepLabel(r.step),
      `${r.variant.name} (${variantLabel(r.variant)})`,
      ciText(r.tps, 0),
      ciCell(r.p95Ms, 2),
      ciCell(r.p99Ms, 2),
      lagCell(f, r),
      ciCell(r.averageAcu, 1),
      ciCell(r.perMillion, 2),
    ]),
    numeric: [2, 3, 4, 5, 6, 7],
    notes: [
      "Scaling lag: from the step's start to the first minute the writer's ServerlessDatabaseCapacity reached " +
        '90% of its peak in the step (CloudWatch one-minute datapoints).',
      'Cost per million transactions: the compute while the step ran (instances x class price, or ' +
        'measured ACUs x ACU ' +
        `price; prices ${pricesAsOfText(ctx.prices)}) over its transactions; storage and I/O are in the storage and ` +
        'bill sections.' +
        unconfirmedText(f.unconfirmedPrices),
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
