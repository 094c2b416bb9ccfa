/** The start-jobs Task on Lambda: core/workflow/task-registry.ts TASKS['start-jobs'] with the AWS deps. */
import { awsTaskHandler } from '../shared/aws-runtime';

export const handler = awsTaskHandler('start-jobs');
