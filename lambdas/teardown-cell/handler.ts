/** The teardown-cell Task on Lambda: core/workflow/task-registry.ts TASKS['teardown-cell'] with the AWS deps. */
import { awsTaskHandler } from '../runtime/aws-runtime';

export const handler = awsTaskHandler('teardown-cell');
