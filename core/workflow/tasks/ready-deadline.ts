import type { CellResources } from '../../backend';
import { NotReadyInTimeError } from '../errors';
import type { TaskDeps } from './types';

/** A cell not ready readyTimeoutS after provisioning started fails, naming what is pending. */
export function checkDeadline(deps: TaskDeps, resources: CellResources, what: string, detail: string): void {
  const started = Date.parse(resources.backendState['provisionStartedAt'] ?? '');
  if (Number.isFinite(started) && deps.now().getTime() - started > deps.readyTimeoutS * 1000) {
    throw new NotReadyInTimeError(
      `${what} of cell ${resources.cellId} not ready after ${deps.readyTimeoutS} s: ${detail}`,
    );
  }
}
