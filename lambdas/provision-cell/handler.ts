/** The provision-cell Task on Lambda: core/workflow/task-registry.ts TASKS['provision-cell'] with the AWS deps. */
import { awsTaskHandler } from '../runtime/aws-runtime';

export const handler = awsTaskHandler('provision-cell');
