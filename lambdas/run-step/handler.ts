/** The run-step Task on Lambda: core/workflow/task-registry.ts TASKS['run-step'] with the AWS deps. */
import { awsTaskHandler } from '../runtime/aws-runtime';

export const handler = awsTaskHandler('run-step');
