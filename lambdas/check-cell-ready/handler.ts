/**
 * The check-cell-ready Task on Lambda: core/workflow/task-registry.ts TASKS['check-cell-ready'] with AWS deps of its
 * own. It imports that Task alone, not the registry, and constructs only the SDK clients and AWS backend
 * parts that Task calls (databasesBackend, core/backends/aws/parts/databases.ts), so that its bundle holds only
 * its own Task's code and its role (lib/backend-permissions.ts) only the actions of that code. The
 * cell's databases: Aurora (RDS), RDS DB instances, or self-managed servers (EC2, SSM, Secrets Manager).
 */
import { databasesBackend } from '../../core/backends/aws/parts/databases';
import { awsFunctionTaskDeps } from '../../core/task-deps/aws-function-deps';
import { checkCellReadyTask } from '../../core/workflow/tasks/check-cell-ready';
import { awsTaskHandler } from '../runtime/aws-runtime';

export const handler = awsTaskHandler('check-cell-ready', checkCellReadyTask, (context) =>
  awsFunctionTaskDeps(context.env, { backend: databasesBackend(context, 'check-cell-ready') }, 'check-cell-ready'),
);
