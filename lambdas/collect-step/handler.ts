/** The collect-step Task on Lambda: core/workflow/task-registry.ts TASKS['collect-step'] with the AWS deps. */
import { awsTaskHandler } from '../shared/aws-runtime';

export const handler = awsTaskHandler('collect-step');
