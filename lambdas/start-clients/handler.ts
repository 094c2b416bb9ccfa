/** The start-clients Task on Lambda: core/workflow/task-registry.ts TASKS['start-clients'] with the AWS deps, importing that Task alone (not the registry), so the bundle holds only its code. */
import { startCellOrDuetClients } from '../../core/workflow/duet';
import { awsTaskHandler } from '../runtime/aws-runtime';

export const handler = awsTaskHandler('start-clients', startCellOrDuetClients);
