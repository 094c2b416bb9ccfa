/**
 * The finish-run Task on Lambda, with AWS deps of its own.
 * It imports that Task alone, not the registry, and builds only the clients it calls.
 * So its bundle holds only that Task's code, and its role only that code's actions.
 * It writes the run's manifest to the lake and compacts its step rows to Parquet with Athena.
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
