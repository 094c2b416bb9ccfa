/**
 * The teardown-cell Task on Lambda, with AWS deps of its own.
 * It imports that Task alone, not the registry, and builds only the clients it calls.
 * So its bundle holds only that Task's code, and its role only that code's actions.
 * It deletes the cell's EC2 instances, RDS resources and a self-managed cell's secret.
 */
import { EC2Client } from '@aws-sdk/client-ec2';
import { RDSClient } from '@aws-sdk/client-rds';
import { S3Client } from '@aws-sdk/client-s3';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { s3ClientConfig, sdkClientConfig } from '../../core/backends/aws/client-config';
import { cellTeardownPart } from '../../core/backends/aws/parts/cell-teardown';
import { composeAwsBackend } from '../../core/backends/aws/parts/compose';
import { S3LakeStore } from '../../core/backends/aws/s3-lake';
import { awsFunctionTaskDeps } from '../../core/task-deps/aws-function-deps';
import { teardownCellTask } from '../../core/workflow/tasks/teardown-cell';
import { awsTaskHandler } from '../runtime/aws-runtime';

export const handler = awsTaskHandler(
  'teardown-cell',
  teardownCellTask,
  ({ env, config, clientOptions, instrument }) => {
    const common = sdkClientConfig(clientOptions);
    const clients = {
      ec2: instrument(new EC2Client(common)),
      rds: instrument(new RDSClient(common)),
      secrets: instrument(new SecretsManagerClient(common)),
      s3: instrument(new S3Client(s3ClientConfig(clientOptions))),
    };
    const lake = new S3LakeStore(clients.s3, config.bucket, config.lakePrefix);
    const backend = composeAwsBackend(config, lake, cellTeardownPart({ clients, config }), 'teardown-cell');
    return awsFunctionTaskDeps(env, { backend }, 'teardown-cell');
  },
);
