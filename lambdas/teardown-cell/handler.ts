/** The teardown-cell Task on Lambda: core/workflow/task-registry.ts TASKS['teardown-cell'] with the AWS deps, importing that Task alone (not the registry), so the bundle holds only its code. */
import { teardownCellOrDuet } from '../../core/workflow/duet';
import { awsTaskHandler } from '../runtime/aws-runtime';

export const handler = awsTaskHandler('teardown-cell', teardownCellOrDuet);
