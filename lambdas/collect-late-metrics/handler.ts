import { collectLateMetricsTask, type CollectLateMetricsEvent, type TaskDeps } from '../../core/workflow/tasks';
import { awsHandler } from '../shared/aws-runtime';

/** The collect-late-metrics Task: the same function runs on Lambda (AWS deps) and in the local runner (local deps). */
export const makeHandler = (deps: TaskDeps) => (event: CollectLateMetricsEvent) => collectLateMetricsTask(deps, event);

export const handler = awsHandler('collect-late-metrics', makeHandler);
