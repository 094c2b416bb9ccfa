/** The check-clients-ready Task on Lambda: core/workflow/task-registry.ts TASKS['check-clients-ready'] with the AWS deps, importing that Task alone (not the registry), so the bundle holds only its code. */
import { checkCellOrDuetClientsReady } from '../../core/workflow/duet';
import { awsTaskHandler } from '../runtime/aws-runtime';

export const handler = awsTaskHandler('check-clients-ready', checkCellOrDuetClientsReady);
