/**
 * The check-cell-ready Task on Lambda: core/workflow/task-registry.ts TASKS['check-cell-ready'] with
 * the AWS deps. It imports that Task alone, not the registry, so that its bundle holds only its own
 * Task's code.
 */
import { checkCellOrDuetReady } from '../../core/workflow/duet';
import { awsTaskHandler } from '../runtime/aws-runtime';

export const handler = awsTaskHandler('check-cell-ready', checkCellOrDuetReady);
