/** The finish-run Task on Lambda: core/workflow/task-registry.ts TASKS['finish-run'] with the AWS deps, importing that Task alone (not the registry), so the bundle holds only its code. */
import { finishRunTask } from '../../core/workflow/tasks';
import { awsTaskHandler } from '../runtime/aws-runtime';

export const handler = awsTaskHandler('finish-run', finishRunTask);
