/** The check-cell-ready Task on Lambda: core/workflow/task-registry.ts TASKS['check-cell-ready'] with the AWS deps. */
import { awsTaskHandler } from '../runtime/aws-runtime';

export const handler = awsTaskHandler('check-cell-ready');
