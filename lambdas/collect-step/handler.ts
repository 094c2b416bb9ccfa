import { collectStepTask, type CollectStepEvent, type TaskDeps } from '../../core/workflow/tasks';
import { awsHandler } from '../shared/aws-runtime';

/** The collect-step Task: the same function runs on Lambda (AWS deps) and in the local runner (local deps). */
export const makeHandler = (deps: TaskDeps) => (event: CollectStepEvent) => collectStepTask(deps, event);

export const handler = awsHandler('collect-step', makeHandler);
