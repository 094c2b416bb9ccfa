/**
 * The provision-cell Task on Lambda, with AWS deps of its own.
 * It imports that Task alone, not the registry, and builds only the clients it calls.
 * So its bundle holds only that Task's code, and its role only that code's actions.
 * It provisions the cell's databases, on Aurora, RDS or self-managed EC2 servers.
 */
import { databasesBackend } from '../../core/backends/aws/parts/databases';
import { awsFunctionTaskDeps } from '../../core/task-deps/aws-function-deps';
import { provisionCellTask } from '../../core/workflow/tasks/provision-cell';
import { awsTaskHandler } from '../runtime/aws-runtime';

export const handler = awsTaskHandler('provision-cell', provisionCellTask, (context) =>
  awsFunctionTaskDeps(context.env, { backend: databasesBackend(context, 'provision-cell') }, 'provision-cell'),
);
