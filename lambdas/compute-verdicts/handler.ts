/** The compute-verdicts Task on Lambda: core/workflow/task-registry.ts TASKS['compute-verdicts'] with the AWS deps, importing that Task alone (not the registry), so the bundle holds only its code. */
import { computeVerdictsTask } from '../../core/workflow/tasks';
import { awsTaskHandler } from '../runtime/aws-runtime';

export const handler = awsTaskHandler('compute-verdicts', computeVerdictsTask);
