import type { RunContext } from '../../backend';
import { lakeKeys } from '../../lake/rows';
import type { CellItem, CellRef } from '../../plan/types';
import { InvalidTaskInputError } from '../errors';
import { readJson } from './lake-json';
import type { CellInState, TaskDeps } from './types';

/**
 * The cell (or duet) a cell Map item names. The child execution receives only the item's position
 * (RunCells' ItemSelector); the Tasks that see it before provisioning (ProvisionCell, a teardown
 * after provisioning failed) read which cell it is from the object PlanRun wrote for that position.
 * A state that already names its cell (the header after provisioning, or an execution planned when
 * the items were ids) is returned as it is.
 */
export async function namedCell(deps: TaskDeps, run: RunContext, cell: CellItem | CellInState): Promise<CellInState> {
  if (typeof (cell as Partial<CellRef>).cellId === 'string') return cell as CellInState;
  const index: unknown = (cell as Partial<CellItem> | null)?.index;
  if (typeof index !== 'number' || !Number.isInteger(index) || index < 0) {
    throw new InvalidTaskInputError(
      `event.cell names no cell: it needs cellId, or index (the cell Map item's position, a non-negative ` +
        `integer); got ${JSON.stringify(cell)}`,
    );
  }
  const key = lakeKeys.workflow.item(run.runId, index);
  const ref = await readJson<CellRef>(deps, key);
  if (ref === undefined || typeof ref.cellId !== 'string') {
    throw new InvalidTaskInputError(
      `item ${index} of run ${run.runId} has no cell at ${deps.backend.lake.describe()}/${key} (PlanRun writes ` +
        `one per item)`,
    );
  }
  return { cellId: ref.cellId, index };
}
