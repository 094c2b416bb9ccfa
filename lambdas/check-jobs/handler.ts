/** The check-jobs Task on Lambda: core/workflow/task-registry.ts TASKS['check-jobs'] with the AWS deps. */
import { awsTaskHandler } from '../shared/aws-runtime';

export const handler = awsTaskHandler('check-jobs');
