/**
 * The judge-round Task on Lambda: core/workflow/task-registry.ts TASKS['judge-round'] with AWS deps of its own. It
 * imports that Task alone, not the registry, and constructs only the clients it calls, so its role
 * (lib/backend-permissions.ts) has only the lake's actions and the Athena reads of a history. The round's step rows
 * are read from S3; a question against history reads the experiment's history through Athena.
 */
import { AthenaClient } from '@aws-sdk/client-athena';
import { S3Client } from '@aws-sdk/client-s3';
import { s3ClientConfig, sdkClientConfig } from '../../core/backends/aws/client-config';
import { composeAwsBackend } from '../../core/backends/aws/parts/compose';
import { S3LakeStore } from '../../core/backends/aws/s3-lake';
import { athenaHistoryLevels } from '../../core/regression/history-levels';
import { awsFunctionTaskDeps } from '../../core/task-deps/aws-function-deps';
import { judgeRounds } from '../../core/rounds/judge';
import { judgeRoundTask } from '../../core/workflow/tasks/judge-round';
import { awsTaskHandler } from '../runtime/aws-runtime';

export const handler = awsTaskHandler('judge-round', judgeRoundTask, ({ env, config, clientOptions, instrument }) => {
  const s3 = instrument(new S3Client(s3ClientConfig(clientOptions)));
  const athena = instrument(new AthenaClient(sdkClientConfig(clientOptions)));
  const lake = new S3LakeStore(s3, config.bucket, config.lakePrefix);
  const backend = composeAwsBackend(config, lake, {}, 'judge-round');
  const historyLevels = athenaHistoryLevels(config, athena);
  return awsFunctionTaskDeps(env, { backend, judgeRounds, historyLevels }, 'judge-round');
});
