/**
 * The check-clients-ready Task on Lambda: core/workflow/task-registry.ts TASKS['check-clients-ready']
 * with the AWS deps. It imports that Task alone, not the registry, so that its bundle holds only its
 * own Task's code.
 */
import { checkCellOrDuetClientsReady } from '../../core/workflow/duet';
import { awsTaskHandler } from '../runtime/aws-runtime';

export const handler = awsTaskHandler('check-clients-ready', checkCellOrDuetClientsReady);
