/** The collect-late-metrics Task on Lambda: core/workflow/task-registry.ts TASKS['collect-late-metrics'] with the AWS deps. */
import { awsTaskHandler } from '../runtime/aws-runtime';

export const handler = awsTaskHandler('collect-late-metrics');
