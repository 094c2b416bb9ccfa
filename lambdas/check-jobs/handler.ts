import { checkJobsTask, type CheckJobsEvent, type TaskDeps } from '../../core/workflow/tasks';
import { awsHandler } from '../shared/aws-runtime';

/** The check-jobs Task: the same function runs on Lambda (AWS deps) and in the local runner (local deps). */
export const makeHandler = (deps: TaskDeps) => (event: CheckJobsEvent) => checkJobsTask(deps, event);

export const handler = awsHandler('check-jobs', makeHandler);
