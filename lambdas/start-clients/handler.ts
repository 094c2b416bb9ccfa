import { startClientsTask, type CellResourcesEvent, type TaskDeps } from '../../core/workflow/tasks';
import { awsHandler } from '../shared/aws-runtime';

/** The start-clients Task: the same function runs on Lambda (AWS deps) and in the local runner (local deps). */
export const makeHandler = (deps: TaskDeps) => (event: CellResourcesEvent) => startClientsTask(deps, event);

export const handler = awsHandler('start-clients', makeHandler);
