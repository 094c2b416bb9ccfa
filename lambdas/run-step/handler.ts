/**
 * The run-step Task on Lambda, with AWS deps of its own.
 * It imports that Task alone, not the registry, and builds only the clients it calls.
 * So its bundle holds only that Task's code, and its role only that code's actions.
 * It runs runner jobs through SSM Run Command and collects the step window's server metrics.
 */
import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { PIClient } from '@aws-sdk/client-pi';
import { RDSClient } from '@aws-sdk/client-rds';
import { S3Client } from '@aws-sdk/client-s3';
import { SSMClient } from '@aws-sdk/client-ssm';
import { s3ClientConfig, sdkClientConfig } from '../../core/backends/aws/client-config';
import { composeAwsBackend } from '../../core/backends/aws/parts/compose';
import { runnerJobsPart } from '../../core/backends/aws/parts/runner-jobs';
import { serverMetricsPart } from '../../core/backends/aws/parts/server-metrics';
import { S3LakeStore } from '../../core/backends/aws/s3-lake';
import { awsFunctionTaskDeps } from '../../core/task-deps/aws-function-deps';
import { runStepTask } from '../../core/workflow/tasks/run-step';
import { awsTaskHandler } from '../runtime/aws-runtime';

export const handler = awsTaskHandler('run-step', runStepTask, ({ env, config, clientOptions, instrument }) => {
  const common = sdkClientConfig(clientOptions);
  const clients = {
    ssm: instrument(new SSMClient(common)),
    cloudwatch: instrument(new CloudWatchClient(common)),
    pi: instrument(new PIClient(common)),
    rds: instrument(new RDSClient(common)),
    s3: instrument(new S3Client(s3ClientConfig(clientOptions))),
  };
  const lake = new S3LakeStore(clients.s3, config.bucket, config.lakePrefix);
  const now = () => new Date();
  const backend = composeAwsBackend(
    config,
    lake,
    { ...runnerJobsPart({ clients, config, lake, now }), ...serverMetricsPart({ clients, config }) },
    'run-step',
  );
  return awsFunctionTaskDeps(env, { backend }, 'run-step');
});
