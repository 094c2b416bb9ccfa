/**
 * The compute-verdicts Task on Lambda: core/workflow/task-registry.ts TASKS['compute-verdicts'] with
 * the AWS deps. It imports that Task alone, not the registry, so that its bundle holds only its own
 * Task's code.
 */
import { computeVerdictsTask } from '../../core/workflow/tasks';
import { awsTaskHandler } from '../runtime/aws-runtime';

export const handler = awsTaskHandler('compute-verdicts', computeVerdictsTask);
