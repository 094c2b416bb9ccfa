import type { CellResources, RunContext } from '../../backend';
import { cellHeader } from '../../plan/segments';
import type { CellHeader } from '../../plan/types';
import { loadCellPlan } from './cell-plans';
import { need } from './need';
import type { CellEvent, TaskDeps } from './types';

/** ProvisionCell's result, which replaces the cell's state. */
export interface ProvisionedCell {
  readonly run: RunContext;
  readonly cell: CellHeader;
  readonly resources: CellResources;
}

export async function provisionCellTask(deps: TaskDeps, event: CellEvent): Promise<ProvisionedCell> {
  need(event, ['run', 'cell'], 'provision-cell');
  const cell = await loadCellPlan(deps, event.run, event.cell.cellId);
  const resources = await deps.backend.provisionCell(event.run, cell);
  return {
    run: event.run,
    cell: cellHeader(cell, deps.backend.writeForwarding),
    resources: {
      ...resources,
      backendState: {
        ...resources.backendState,
        provisionStartedAt: resources.backendState['provisionStartedAt'] ?? deps.now().toISOString(),
      },
    },
  };
}
