/** The finish-run Task on Lambda: core/workflow/task-registry.ts TASKS['finish-run'] with the AWS deps. */
import { awsTaskHandler } from '../runtime/aws-runtime';

export const handler = awsTaskHandler('finish-run');
