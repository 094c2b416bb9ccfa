/** The provision-cell Task on Lambda: core/workflow/task-registry.ts TASKS['provision-cell'] with the AWS deps, importing that Task alone (not the registry), so the bundle holds only its code. */
import { provisionCellOrDuet } from '../../core/workflow/duet';
import { awsTaskHandler } from '../runtime/aws-runtime';

export const handler = awsTaskHandler('provision-cell', provisionCellOrDuet);
