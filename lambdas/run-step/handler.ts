/**
 * The run-step Task on Lambda: core/workflow/task-registry.ts TASKS['run-step'] with the AWS deps. It
 * imports that Task alone, not the registry, so that its bundle holds only its own Task's code.
 */
import { runStepTask } from '../../core/workflow/run-step';
import { awsTaskHandler } from '../runtime/aws-runtime';

export const handler = awsTaskHandler('run-step', runStepTask);
