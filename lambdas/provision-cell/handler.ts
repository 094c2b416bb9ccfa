import { provisionCellTask, type CellEvent, type TaskDeps } from '../../core/workflow/tasks';
import { awsHandler } from '../shared/aws-runtime';

/** The provision-cell Task: the same function runs on Lambda (AWS deps) and in the local runner (local deps). */
export const makeHandler = (deps: TaskDeps) => (event: CellEvent) => provisionCellTask(deps, event);

export const handler = awsHandler('provision-cell', makeHandler);
