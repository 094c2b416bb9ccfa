/**
 * The finish-run Task on Lambda: core/workflow/task-registry.ts TASKS['finish-run'] with AWS deps of its own. It
 * imports that Task alone, not the registry, and constructs only the SDK clients and AWS backend
 * parts that Task calls, so that its bundle holds only its own Task's code and its role
 * (lib/backend-permissions.ts) only the actions of that code. The run's
 * manifest in the lake, and its step rows compacted to Parquet by Athena.
 */
import { AthenaClient } from '@aws-sdk/client-athena';
import { S3Client } from '@aws-sdk/client-s3';
import { s3ClientConfig, sdkClientConfig } from '../../core/backends/aws/client-config';
import { composeAwsBackend } from '../../core/backends/aws/parts/compose';
import { S3LakeStore } from '../../core/backends/aws/s3-lake';
import { athenaCompaction } from '../../core/task-deps/athena-compaction-deps';
import { awsFunctionTaskDeps } from '../../core/task-deps/aws-function-deps';
import { finishRunTask } from '../../core/workflow/tasks/finish-run';
import { awsTaskHandler } from '../runtime/aws-runtime';

export const handler = awsTaskHandler('finish-run', finishRunTask, ({ env, config, clientOptions, instrument }) => {
  const clients = {
    athena: instrument(new AthenaClient(sdkClientConfig(clientOptions))),
    s3: instrument(new S3Client(s3ClientConfig(clientOptions))),
  };
  const lake = new S3LakeStore(clients.s3, config.bucket, config.lakePrefix);
  return awsFunctionTaskDeps(
    env,
    { backend: composeAwsBackend(config, lake, {}, 'finish-run'), compactRun: athenaCompaction(config, clients) },
    'finish-run',
  );
});
