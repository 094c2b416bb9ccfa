/**
 * The check-clients-ready Task on Lambda: core/workflow/task-registry.ts TASKS['check-clients-ready'] with AWS deps of
 * its own. It imports that Task alone, not the registry, and constructs only the SDK clients and AWS backend
 * parts that Task calls, so that its bundle holds only its own Task's code and its role
 * (lib/backend-permissions.ts) only the actions of that code. The cell's
 * client instances: EC2, their SSM registration, their ready marker in S3.
 */
import { EC2Client } from '@aws-sdk/client-ec2';
import { S3Client } from '@aws-sdk/client-s3';
import { SSMClient } from '@aws-sdk/client-ssm';
import { s3ClientConfig, sdkClientConfig } from '../../core/backends/aws/client-config';
import { clientMachinesPart } from '../../core/backends/aws/parts/client-machines';
import { composeAwsBackend } from '../../core/backends/aws/parts/compose';
import { S3LakeStore } from '../../core/backends/aws/s3-lake';
import { awsFunctionTaskDeps } from '../../core/task-deps/aws-function-deps';
import { checkCellOrDuetClientsReady } from '../../core/workflow/duet';
import { awsTaskHandler } from '../runtime/aws-runtime';

export const handler = awsTaskHandler(
  'check-clients-ready',
  checkCellOrDuetClientsReady,
  ({ env, config, clientOptions, instrument }) => {
    const common = sdkClientConfig(clientOptions);
    const clients = {
      ec2: instrument(new EC2Client(common)),
      ssm: instrument(new SSMClient(common)),
      s3: instrument(new S3Client(s3ClientConfig(clientOptions))),
    };
    const lake = new S3LakeStore(clients.s3, config.bucket, config.lakePrefix);
    const backend = composeAwsBackend(
      config,
      lake,
      clientMachinesPart({ clients, config, now: () => new Date() }),
      'check-clients-ready',
    );
    return awsFunctionTaskDeps(env, { backend }, 'check-clients-ready');
  },
);
