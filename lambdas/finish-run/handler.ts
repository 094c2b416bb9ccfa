import { finishRunTask, type FinishRunEvent, type TaskDeps } from '../../core/workflow/tasks';
import { awsHandler } from '../shared/aws-runtime';

/** The finish-run Task: the same function runs on Lambda (AWS deps) and in the local runner (local deps). */
export const makeHandler = (deps: TaskDeps) => (event: FinishRunEvent) => finishRunTask(deps, event);

export const handler = awsHandler('finish-run', makeHandler);
