/**
 * The check-clients-ready Task on Lambda: core/workflow/task-registry.ts TASKS['check-clients-ready'] with AWS deps of
 * its own. It imports that Task alone, not the registry, and constructs only the SDK clients and AWS backend
 * parts that Task calls (clientMachinesBackend, core/backends/aws/parts/client-machines.ts), so that its bundle holds
 * only its own Task's code and its role (lib/backend-permissions.ts) only the actions of that
 * code. The cell's client instances: EC2, their SSM registration, their ready marker in S3.
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
