/**
 * The start-clients Task on Lambda: core/workflow/task-registry.ts TASKS['start-clients'] with the AWS
 * deps. It imports that Task alone, not the registry, so that its bundle holds only its own Task's
 * code.
 */
import { startCellOrDuetClients } from '../../core/workflow/duet';
import { awsTaskHandler } from '../runtime/aws-runtime';

export const handler = awsTaskHandler('start-clients', startCellOrDuetClients);
