/**
 * The compute-verdicts Task on Lambda, with AWS deps of its own.
 * It imports that Task alone, not the registry, and builds only the clients it calls.
 * So its bundle holds only that Task's code, and its role only that code's actions.
 * It judges the run against its history on Athena and publishes the verdicts.
 */
import { AthenaClient } from '@aws-sdk/client-athena';
import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { S3Client } from '@aws-sdk/client-s3';
import { SNSClient } from '@aws-sdk/client-sns';
import { s3ClientConfig, sdkClientConfig } from '../../core/backends/aws/client-config';
import { composeAwsBackend } from '../../core/backends/aws/parts/compose';
import { verdictAlertsPart } from '../../core/backends/aws/parts/verdict-alerts';
import { S3LakeStore } from '../../core/backends/aws/s3-lake';
import { athenaJudge } from '../../core/regression/judge';
import { awsFunctionTaskDeps } from '../../core/task-deps/aws-function-deps';
import { computeVerdictsTask } from '../../core/workflow/tasks/compute-verdicts';
import { awsTaskHandler } from '../runtime/aws-runtime';

export const handler = awsTaskHandler(
  'compute-verdicts',
  computeVerdictsTask,
  ({ env, config, clientOptions, instrument }) => {
    const common = sdkClientConfig(clientOptions);
    const clients = {
      athena: instrument(new AthenaClient(common)),
      cloudwatch: instrument(new CloudWatchClient(common)),
      events: instrument(new EventBridgeClient(common)),
      sns: instrument(new SNSClient(common)),
      s3: instrument(new S3Client(s3ClientConfig(clientOptions))),
    };
    const lake = new S3LakeStore(clients.s3, config.bucket, config.lakePrefix);
    const backend = composeAwsBackend(
      config,
      lake,
      verdictAlertsPart({ clients, config, now: () => new Date() }),
      'compute-verdicts',
    );
    return awsFunctionTaskDeps(env, { backend, judgeRun: athenaJudge(config, clients.athena) }, 'compute-verdicts');
  },
);
