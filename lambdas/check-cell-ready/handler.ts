import { checkCellReadyTask, type CellResourcesEvent, type TaskDeps } from '../../core/workflow/tasks';
import { awsHandler } from '../shared/aws-runtime';

/** The check-cell-ready Task: the same function runs on Lambda (AWS deps) and in the local runner (local deps). */
export const makeHandler = (deps: TaskDeps) => (event: CellResourcesEvent) => checkCellReadyTask(deps, event);

export const handler = awsHandler('check-cell-ready', makeHandler);
