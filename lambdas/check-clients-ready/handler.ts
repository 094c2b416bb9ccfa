/**
 * The check-clients-ready Task on Lambda, with AWS deps of its own.
 * It imports that Task alone, not the registry, and builds only the clients it calls.
 * So its bundle holds only that Task's code, and its role only that code's actions.
 * It checks the cell's client instances for their SSM registration and ready marker.
 */
import { clientMachinesBackend } from '../../core/backends/aws/parts/client-machines';
import { awsFunctionTaskDeps } from '../../core/task-deps/aws-function-deps';
import { checkClientsReadyTask } from '../../core/workflow/tasks/check-clients-ready';
import { awsTaskHandler } from '../runtime/aws-runtime';

export const handler = awsTaskHandler('check-clients-ready', checkClientsReadyTask, (context) =>
  awsFunctionTaskDeps(
    context.env,
    { backend: clientMachinesBackend(context, 'check-clients-ready') },
    'check-clients-ready',
  ),
);
