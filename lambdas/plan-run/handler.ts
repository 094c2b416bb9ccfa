/**
 * The plan-run Task on Lambda, with AWS deps of its own.
 * It imports that Task alone, not the registry, and builds only the clients it calls.
 * So its bundle holds only that Task's code, and its role only that code's actions.
 * PlanRun writes the run's plan to the lake and runs the account preflight.
 */
import { makeAwsClients, type AwsClients } from '../../core/backends/aws/clients';
import { composeAwsBackend } from '../../core/backends/aws/parts/compose';
import { S3LakeStore } from '../../core/backends/aws/s3-lake';
import { awsFunctionTaskDeps } from '../../core/task-deps/aws-function-deps';
import { awsPreflight } from '../../core/task-deps/aws-preflight-deps';
import { planRunTask } from '../../core/workflow/tasks/plan-run';
import { awsTaskHandler } from '../runtime/aws-runtime';

export const handler = awsTaskHandler('plan-run', planRunTask, ({ env, config, clientOptions, instrument }) => {
  // The preflight takes every client it may read with. The bundle has only the Commands it sends.
  const clients: AwsClients = makeAwsClients(clientOptions);
  for (const client of Object.values(clients)) instrument(client);
  const lake = new S3LakeStore(clients.s3, config.bucket, config.lakePrefix);
  return awsFunctionTaskDeps(
    env,
    { backend: composeAwsBackend(config, lake, {}, 'plan-run'), preflight: awsPreflight(config, clients) },
    'plan-run',
  );
});
