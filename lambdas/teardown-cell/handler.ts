/**
 * The teardown-cell Task on Lambda: core/workflow/task-registry.ts TASKS['teardown-cell'] with the AWS
 * deps. It imports that Task alone, not the registry, so that its bundle holds only its own Task's
 * code.
 */
import { teardownCellOrDuet } from '../../core/workflow/duet';
import { awsTaskHandler } from '../runtime/aws-runtime';

export const handler = awsTaskHandler('teardown-cell', teardownCellOrDuet);
