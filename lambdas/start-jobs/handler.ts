import { startJobsTask, type StartJobsEvent, type TaskDeps } from '../../core/workflow/tasks';
import { awsHandler } from '../shared/aws-runtime';

/** The start-jobs Task: the same function runs on Lambda (AWS deps) and in the local runner (local deps). */
export const makeHandler = (deps: TaskDeps) => (event: StartJobsEvent) => startJobsTask(deps, event);

export const handler = awsHandler('start-jobs', makeHandler);
