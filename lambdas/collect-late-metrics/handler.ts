/**
 * The collect-late-metrics Task on Lambda, with AWS deps of its own.
 * It imports that Task alone, not the registry, and builds only the clients it calls.
 * So its bundle holds only that Task's code, and its role only that code's actions.
 * It collects the step windows' server metrics that were published late.
 */
import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { PIClient } from '@aws-sdk/client-pi';
import { RDSClient } from '@aws-sdk/client-rds';
import { S3Client } from '@aws-sdk/client-s3';
import { s3ClientConfig, sdkClientConfig } from '../../core/backends/aws/client-config';
import { composeAwsBackend } from '../../core/backends/aws/parts/compose';
import { serverMetricsPart } from '../../core/backends/aws/parts/server-metrics';
import { S3LakeStore } from '../../core/backends/aws/s3-lake';
import { awsFunctionTaskDeps } from '../../core/task-deps/aws-function-deps';
import { collectLateMetricsTask } from '../../core/workflow/tasks/collect-late-metrics';
import { awsTaskHandler } from '../runtime/aws-runtime';

export const handler = awsTaskHandler(
  'collect-late-metrics',
  collectLateMetricsTask,
  ({ env, config, clientOptions, instrument }) => {
    const common = sdkClientConfig(clientOptions);
    const clients = {
      cloudwatch: instrument(new CloudWatchClient(common)),
      pi: instrument(new PIClient(common)),
      rds: instrument(new RDSClient(common)),
      s3: instrument(new S3Client(s3ClientConfig(clientOptions))),
    };
    const lake = new S3LakeStore(clients.s3, config.bucket, config.lakePrefix);
    const backend = composeAwsBackend(config, lake, serverMetricsPart({ clients, config }), 'collect-late-metrics');
    return awsFunctionTaskDeps(env, { backend }, 'collect-late-metrics');
  },
);
