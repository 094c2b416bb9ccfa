/** The compute-verdicts Task on Lambda: core/workflow/task-registry.ts TASKS['compute-verdicts'] with the AWS deps. */
import { awsTaskHandler } from '../runtime/aws-runtime';

export const handler = awsTaskHandler('compute-verdicts');
