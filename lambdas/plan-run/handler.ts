/**
 * The plan-run Task on Lambda: core/workflow/task-registry.ts TASKS['plan-run'] with the AWS deps. It
 * imports that Task alone, not the registry, so that its bundle holds only its own Task's code.
 */
import { planRunTask } from '../../core/workflow/tasks';
import { awsTaskHandler } from '../runtime/aws-runtime';

export const handler = awsTaskHandler('plan-run', planRunTask);
