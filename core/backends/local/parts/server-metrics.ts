import type { MetricsWindow, MetricWindowCount, RunContext, ServerMetricsCollection } from '../../../backend';
import type { CellPlan } from '../../../plan/types';
import { toServerMetricRows } from '../metrics';
import type { LocalPartContext } from './context';

/**
 * A step's server metrics: the cell's sampler is stopped and its samples become rows.
 * Asked again for the same step, the same collection is returned.
 */
export async function collectLocalServerMetrics(
  ctx: LocalPartContext,
  run: RunContext,
  cell: CellPlan,
  window: MetricsWindow,
): Promise<ServerMetricsCollection> {
  const state = ctx.cells.get(run.runId, cell.cellId);
  const previous = state?.collected.get(window.stepId);
  if (previous) return previous;
  const sampler = state?.sampler;
  if (!state || !sampler) return { rows: [], windows: [] };
  state.sampler = undefined;
  const samples = await sampler.stop();
  const rows = toServerMetricRows(
    samples,
    { run_id: run.runId, cell_id: cell.cellId, variant: cell.variant.name, step_id: window.stepId, dt: run.dt },
    window,
  );
  // The sampler saw the whole window live, so what it has is all there will ever be.
  const counts = new Map<string, MetricWindowCount>();
  for (const r of rows) {
    const key = `${r.instance_id}\u0000${r.metric}`;
    const received = (counts.get(key)?.received ?? 0) + 1;
    counts.set(key, {
      instanceId: r.instance_id,
      role: r.role as 'writer' | 'reader',
      metric: r.metric,
      source: 'local',
      start: window.start,
      end: window.end,
      periodS: Math.max(1, Math.round(ctx.sampleIntervalMs / 1000)),
      expected: received,
      received,
    });
  }
  const collection: ServerMetricsCollection = { rows, windows: [...counts.values()] };
  state.collected.set(window.stepId, collection);
  return collection;
}
