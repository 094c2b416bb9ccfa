/**
 * The judge-round Task on Lambda, with AWS deps of its own.
 * It imports that Task alone, not the registry, and builds only the clients it calls.
 * So its bundle holds only that Task's code, and its role only that code's actions.
 * It reads the round's step rows from S3. A question against history reads the history through Athena.
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
