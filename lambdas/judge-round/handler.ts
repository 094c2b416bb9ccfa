/**
 * The judge-round Task on Lambda: core/workflow/task-registry.ts TASKS['judge-round'] with AWS deps of its own. It
 * imports that Task alone, not the registry, and constructs only the S3 client the lake needs, so its role
 * (lib/backend-permissions.ts) has only the lake's actions. The round's step rows are read from S3.
 */
import { S3Client } from '@aws-sdk/client-s3';
import { s3ClientConfig } from '../../core/backends/aws/client-config';
import { composeAwsBackend } from '../../core/backends/aws/parts/compose';
import { S3LakeStore } from '../../core/backends/aws/s3-lake';
import { awsFunctionTaskDeps } from '../../core/task-deps/aws-function-deps';
import { judgeRounds } from '../../core/rounds/judge';
import { judgeRoundTask } from '../../core/workflow/tasks/judge-round';
import { awsTaskHandler } from '../runtime/aws-runtime';

export const handler = awsTaskHandler('judge-round', judgeRoundTask, ({ env, config, clientOptions, instrument }) => {
  const s3 = instrument(new S3Client(s3ClientConfig(clientOptions)));
  const lake = new S3LakeStore(s3, config.bucket, config.lakePrefix);
  const backend = composeAwsBackend(config, lake, {}, 'judge-round');
  return awsFunctionTaskDeps(env, { backend, judgeRounds }, 'judge-round');
});
