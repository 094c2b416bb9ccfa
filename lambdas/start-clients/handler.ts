/**
 * The start-clients Task on Lambda, with AWS deps of its own.
 * It imports that Task alone, not the registry, and builds only the clients it calls.
 * So its bundle holds only that Task's code, and its role only that code's actions.
 * It starts the cell's client instances, which register with SSM and leave a ready marker in S3.
 */
import { clientMachinesBackend } from '../../core/backends/aws/parts/client-machines';
import { awsFunctionTaskDeps } from '../../core/task-deps/aws-function-deps';
import { startClientsTask } from '../../core/workflow/tasks/start-clients';
import { awsTaskHandler } from '../runtime/aws-runtime';

export const handler = awsTaskHandler('start-clients', startClientsTask, (context) =>
  awsFunctionTaskDeps(context.env, { backend: clientMachinesBackend(context, 'start-clients') }, 'start-clients'),
);
