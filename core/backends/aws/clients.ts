/**
 * The AWS SDK v3 clients the backend uses. They are injected so tests can point them at a moto server.
 * Where moto has no service, tests wrap them with aws-sdk-client-mock.
 */
import { AthenaClient } from '@aws-sdk/client-athena';
import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { EC2Client } from '@aws-sdk/client-ec2';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { IAMClient } from '@aws-sdk/client-iam';
import { PIClient } from '@aws-sdk/client-pi';
import { RDSClient } from '@aws-sdk/client-rds';
import { S3Client } from '@aws-sdk/client-s3';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { ServiceQuotasClient } from '@aws-sdk/client-service-quotas';
import { SNSClient } from '@aws-sdk/client-sns';
import { SSMClient } from '@aws-sdk/client-ssm';
import { s3ClientConfig, sdkClientConfig, type AwsClientOptions } from './client-config';

export interface AwsClients {
  readonly rds: RDSClient;
  readonly ec2: EC2Client;
  readonly ssm: SSMClient;
  readonly s3: S3Client;
  readonly cloudwatch: CloudWatchClient;
  readonly pi: PIClient;
  readonly athena: AthenaClient;
  /** Regression events of a run's verdicts. */
  readonly events: EventBridgeClient;
  /** Regression notifications of a run's verdicts. */
  readonly sns: SNSClient;
  /** The preflight alone uses it, to get the RDS service-linked role. */
  readonly iam: IAMClient;
  /** The preflight alone uses it, for the EC2 vCPU quota. */
  readonly serviceQuotas: ServiceQuotasClient;
  /** A self-managed cell's database credentials. */
  readonly secrets: SecretsManagerClient;
}

export function makeAwsClients(options: AwsClientOptions): AwsClients {
  const common = sdkClientConfig(options);
  return {
    rds: new RDSClient(common),
    ec2: new EC2Client(common),
    ssm: new SSMClient(common),
    s3: new S3Client(s3ClientConfig(options)),
    cloudwatch: new CloudWatchClient(common),
    pi: new PIClient(common),
    athena: new AthenaClient(common),
    events: new EventBridgeClient(common),
    sns: new SNSClient(common),
    iam: new IAMClient(common),
    serviceQuotas: new ServiceQuotasClient(common),
    secrets: new SecretsManagerClient(common),
  };
}

export function destroyAwsClients(clients: AwsClients): void {
  for (const c of Object.values(clients)) (c as { destroy(): void }).destroy();
}
