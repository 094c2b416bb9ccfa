/**
 * The provision-cell Task on Lambda: core/workflow/task-registry.ts TASKS['provision-cell'] with the
 * AWS deps. It imports that Task alone, not the registry, so that its bundle holds only its own Task's
 * code.
 */
import { provisionCellOrDuet } from '../../core/workflow/duet';
import { awsTaskHandler } from '../runtime/aws-runtime';

export const handler = awsTaskHandler('provision-cell', provisionCellOrDuet);
