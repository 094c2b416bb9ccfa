/** The start-clients Task on Lambda: core/workflow/task-registry.ts TASKS['start-clients'] with the AWS deps. */
import { awsTaskHandler } from '../runtime/aws-runtime';

export const handler = awsTaskHandler('start-clients');
