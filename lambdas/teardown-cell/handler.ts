import { teardownCellTask, type TeardownEvent, type TaskDeps } from '../../core/workflow/tasks';
import { awsHandler } from '../shared/aws-runtime';

/** The teardown-cell Task: the same function runs on Lambda (AWS deps) and in the local runner (local deps). */
export const makeHandler = (deps: TaskDeps) => (event: TeardownEvent) => teardownCellTask(deps, event);

export const handler = awsHandler('teardown-cell', makeHandler);
