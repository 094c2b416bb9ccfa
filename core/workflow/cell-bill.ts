/**
 * What a cell really cost, recorded as the run goes.
 * TeardownCell keeps the lifetimes of the cell's resources in the lake, and reads what CloudWatch measured.
 * FinishRun prices it beside the plan's estimate in the run manifest.
 */
import type { CellResources, RunContext } from '../backend';
import {
  actualCellCost,
  measureUsage,
  mergeLifetimes,
  type ActualCellCost,
  type MeasuredUsage,
  type MetricPoint,
  type ResourceLifetime,
} from '../plan/bill';
import { estimatePlanCost, regionPrices, type PlanCost, type PriceTable } from '../plan/cost';
import { cellEngine, type CellPlan, type Plan } from '../plan/types';
import { ENGINES } from '../aurora/engines';
import { lakeKeys } from '../lake/rows';
import type { TaskDeps } from './tasks/types';

/** What a cell's teardown recorded for its bill. */
export interface CellBillFacts {
  readonly resources: readonly ResourceLifetime[];
  readonly measured: MeasuredUsage;
}

/**
 * One more look at the cell's resources, merged into what the lake kept from earlier passes.
 * With `done` the teardown completed, so whatever is still open closes now.
 */
export async function recordLifetimes(
  deps: TaskDeps,
  run: RunContext,
  cell: CellPlan,
  resources: CellResources | undefined,
  done: boolean,
): Promise<ResourceLifetime[] | undefined> {
  const observe = deps.backend.observeCellResources?.bind(deps.backend);
  if (observe === undefined) return undefined;
  const key = lakeKeys.workflow.cellLifetimes(run.runId, cell.cellId);
  const text = await deps.backend.lake.get(key);
  const stored = text === undefined || text.trim() === '' ? [] : (JSON.parse(text) as ResourceLifetime[]);
  // Once the teardown completed, the resources close at that moment.
  const observed = done ? [] : await observe(run, cell, resources);
  const merged = mergeLifetimes(stored, observed, deps.now().toISOString(), done);
  await deps.backend.lake.put(key, JSON.stringify(merged));
  return merged;
}

/** The ACU-seconds and volume I/O requests CloudWatch measured over the cell's steps. */
export async function measuredCellUsage(
  deps: TaskDeps,
  run: RunContext,
  cellId: string,
  steps: readonly {
    readonly stepId: string;
    readonly metrics: { readonly start: string; readonly end: string } | null;
  }[],
): Promise<MeasuredUsage> {
  const windows: { stepId: string; start: string; end: string }[] = [];
  const points: MetricPoint[] = [];
  for (const s of steps) {
    if (s.metrics === null) continue;
    windows.push({ stepId: s.stepId, start: s.metrics.start, end: s.metrics.end });
    const text = await deps.backend.lake.get(lakeKeys.stepTable('server_metrics', run.dt, run.runId, cellId, s.stepId));
    for (const line of (text ?? '').split('\n')) {
      if (line.trim() === '') continue;
      const row = JSON.parse(line) as MetricPoint & { source?: string };
      if (
        row.metric === 'ServerlessDatabaseCapacity' ||
        row.metric === 'VolumeReadIOPs' ||
        row.metric === 'VolumeWriteIOPs'
      )
        points.push(row);
    }
  }
  return measureUsage(windows, points);
}

/** The cost of one cell from its teardown's facts and the plan's estimate, priced with `table`. */
export function cellCost(
  plan: Plan,
  table: PriceTable,
  estimate: PlanCost,
  cell: CellPlan,
  facts: CellBillFacts,
): ActualCellCost {
  const prices = regionPrices(table, plan.region).prices;
  const engine = cellEngine(plan, cell);
  const bytes =
    ENGINES[engine.kind].topology === 'cluster'
      ? cell.data.tables * cell.data.tableSize * table.assumptions.bytesPerRow
      : 0;
  return actualCellCost(
    prices,
    table.assumptions,
    cell,
    engine,
    facts.resources,
    facts.measured,
    bytes / 1e9,
    estimate.cells.find((c) => c.cellId === cell.cellId)?.total ?? null,
  );
}

/** Every cell's cost of a run whose teardowns recorded their facts, by cell id. */
export function runCellCosts(
  plan: Plan,
  table: PriceTable,
  facts: ReadonlyMap<string, CellBillFacts>,
): Map<string, ActualCellCost> {
  const out = new Map<string, ActualCellCost>();
  if (facts.size === 0) return out;
  const estimate = estimatePlanCost(plan, table);
  for (const cell of plan.cells) {
    const f = facts.get(cell.cellId);
    if (f !== undefined) out.set(cell.cellId, cellCost(plan, table, estimate, cell, f));
  }
  return out;
}
