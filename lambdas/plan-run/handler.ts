/** The plan-run Task on Lambda: core/workflow/task-registry.ts TASKS['plan-run'] with the AWS deps. */
import { awsTaskHandler } from '../runtime/aws-runtime';

export const handler = awsTaskHandler('plan-run');
