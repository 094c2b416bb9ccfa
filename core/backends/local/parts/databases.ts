import type { CellResources, ReadyState, ReplicaHealth, RunContext } from '../../../backend';
import { ENGINES } from '../../../aurora/engines';
import type { CellPlan } from '../../../plan/types';
import { replicaHealth } from '../cluster';
import { isServerRunning } from '../mariadb-server';
import { isPostgresRunning } from '../postgres-server';
import type { CellState } from './cell-states';
import { teardownLocalCell } from './cell-teardown';
import type { LocalPartContext } from './context';
import { checkMariadbReady, provisionMariadbCell } from './mariadb-cells';
import { checkPostgresReady, provisionPostgresCell } from './postgres-cells';

function cellServersRunning(state: CellState): boolean {
  if (state.pg) return [state.pg.writer, ...state.pg.readers].every(isPostgresRunning);
  return state.cluster !== undefined && [state.cluster.writer, ...state.cluster.readers].every(isServerRunning);
}

/** A cell's servers: MariaDB for the MySQL family, PostgreSQL for the rest. */
export async function provisionLocalCell(
  ctx: LocalPartContext,
  run: RunContext,
  cell: CellPlan,
): Promise<CellResources> {
  const existing = ctx.cells.get(run.runId, cell.cellId);
  if (existing && cellServersRunning(existing)) return existing.resources;
  if (existing) await teardownLocalCell(ctx, run, cell);
  return ENGINES[cell.variant.engine?.kind ?? 'aurora-mysql'].localServer === 'postgresql'
    ? provisionPostgresCell(ctx, run, cell)
    : provisionMariadbCell(ctx, run, cell);
}

export function checkLocalCellReady(
  ctx: LocalPartContext,
  run: RunContext,
  cell: CellPlan,
  resources: CellResources,
): Promise<ReadyState> {
  const state = ctx.cells.require(run, cell.cellId);
  return state.pg ? checkPostgresReady(state.pg, resources) : checkMariadbReady(state.cluster!, resources);
}

export function localReplicationHealth(
  ctx: LocalPartContext,
  run: RunContext,
  cell: CellPlan,
): Promise<readonly ReplicaHealth[]> {
  // A cell already torn down has nothing to ask, as when a stopped run records its interrupted step.
  // PostgreSQL cells are not checked here. Their replicas stream, and checkCellReady watches them.
  const state = ctx.cells.get(run.runId, cell.cellId);
  if (!state?.cluster) return Promise.resolve([]);
  return replicaHealth(state.cluster, isServerRunning(state.cluster.writer));
}
