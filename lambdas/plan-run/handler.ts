import { planRunTask, type PlanRunEvent, type TaskDeps } from '../../core/workflow/tasks';
import { awsHandler } from '../shared/aws-runtime';

/** The plan-run Task: the same function runs on Lambda (AWS deps) and in the local runner (local deps). */
export const makeHandler = (deps: TaskDeps) => (event: PlanRunEvent) => planRunTask(deps, event);

export const handler = awsHandler('plan-run', makeHandler);
