/** The check-clients-ready Task on Lambda: core/workflow/task-registry.ts TASKS['check-clients-ready'] with the AWS deps. */
import { awsTaskHandler } from '../runtime/aws-runtime';

export const handler = awsTaskHandler('check-clients-ready');
