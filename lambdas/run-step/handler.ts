/** The run-step Task on Lambda: core/workflow/task-registry.ts TASKS['run-step'] with the AWS deps, importing that Task alone (not the registry), so the bundle holds only its code. */
import { runCellOrDuetStep } from '../../core/workflow/duet';
import { awsTaskHandler } from '../runtime/aws-runtime';

export const handler = awsTaskHandler('run-step', runCellOrDuetStep);
