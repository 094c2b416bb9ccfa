/**
 * The provision-cell Task on Lambda: core/workflow/task-registry.ts TASKS['provision-cell'] with AWS deps of its own.
 * It imports that Task alone, not the registry, and constructs only the SDK clients and AWS backend
 * parts that Task calls (databasesBackend, core/backends/aws/parts/databases.ts), so that its bundle holds only
 * its own Task's code and its role (lib/backend-permissions.ts) only the actions of that code. The
 * cell's databases: Aurora (RDS), RDS DB instances, or self-managed servers (EC2, SSM, Secrets Manager).
 */
import { databasesBackend } from '../../core/backends/aws/parts/databases';
import { awsFunctionTaskDeps } from '../../core/task-deps/aws-function-deps';
import { provisionCellTask } from '../../core/workflow/tasks/provision-cell';
import { awsTaskHandler } from '../runtime/aws-runtime';

export const handler = awsTaskHandler('provision-cell', provisionCellTask, (context) =>
  awsFunctionTaskDeps(context.env, { backend: databasesBackend(context, 'provision-cell') }, 'provision-cell'),
);
