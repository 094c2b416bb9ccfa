import type { RunContext, TeardownReport } from '../../../backend';
import type { CellPlan } from '../../../plan/types';
import { destroyCell, type CellRecord } from '../registry';
import type { CellState } from './cell-states';
import type { LocalPartContext } from './context';
import { postgresServerRecord } from './postgres-cells';
import { untrack } from './started-here';

/** A registry record for a cell this process knows but the registry lost. */
function recordOf(state: CellState): CellRecord {
  const servers = state.pg
    ? [state.pg.writer, ...state.pg.readers].map(postgresServerRecord)
    : state.cluster
      ? [state.cluster.writer, ...state.cluster.readers]
      : [];
  return {
    cellId: state.cellId,
    clusterId: state.cluster?.clusterId ?? state.pg?.clusterId ?? state.cellId,
    dir: state.dir,
    servers,
    jobs: [],
    createdAt: '',
  };
}

/** Stops a cell's sampler, jobs and servers and removes its directory, in the registry and in memory. */
export async function teardownLocalCell(
  ctx: LocalPartContext,
  run: RunContext,
  cell: CellPlan,
): Promise<TeardownReport> {
  const state = ctx.cells.get(run.runId, cell.cellId);
  if (state?.sampler) {
    await state.sampler.stop();
    state.sampler = undefined;
  }
  const registry = ctx.registry(run.runId);
  const record = (await registry.read())?.cells[cell.cellId] ?? (state ? recordOf(state) : undefined);
  // Jobs this process started are stopped even if the registry missed them.
  const jobs = [...(record?.jobs ?? [])];
  for (const proc of state?.jobs.values() ?? []) {
    if (jobs.some((j) => j.jobId === proc.handle.jobId)) continue;
    jobs.push({
      jobId: proc.handle.jobId,
      pid: Number(proc.handle.ref),
      marker: ctx.lake.pathOf(proc.handle.outputPrefix.replace(/\/+$/, '')),
      startedAt: proc.handle.startedAt,
    });
  }
  ctx.cells.delete(run.runId, cell.cellId);
  if (!record) return { deleted: [], alreadyGone: [`cell ${cell.cellId}`] };
  const report = await destroyCell({ ...record, jobs });
  for (const s of record.servers) untrack(s.pid);
  await registry.removeCell(cell.cellId);
  return report;
}
