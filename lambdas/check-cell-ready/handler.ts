/**
 * The check-cell-ready Task on Lambda, with AWS deps of its own.
 * It imports that Task alone, not the registry, and builds only the clients it calls.
 * So its bundle holds only that Task's code, and its role only that code's actions.
 * It checks the cell's databases, on Aurora, RDS or self-managed EC2 servers.
 */
import { databasesBackend } from '../../core/backends/aws/parts/databases';
import { awsFunctionTaskDeps } from '../../core/task-deps/aws-function-deps';
import { checkCellReadyTask } from '../../core/workflow/tasks/check-cell-ready';
import { awsTaskHandler } from '../runtime/aws-runtime';

export const handler = awsTaskHandler('check-cell-ready', checkCellReadyTask, (context) =>
  awsFunctionTaskDeps(context.env, { backend: databasesBackend(context, 'check-cell-ready') }, 'check-cell-ready'),
);
