/**
 * The AWS SDK v3 clients the backend uses, injected so tests can point them at a moto server
 * (endpoint + dummy credentials) or wrap them with aws-sdk-client-mock where moto has no service.
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

export interface AwsClients {
  readonly rds: RDSClient;
  readonly ec2: EC2Client;
  readonly ssm: SSMClient;
  readonly s3: S3Client;
  readonly cloudwatch: CloudWatchClient;
  readonly pi: PIClient;
  readonly athena: AthenaClient;
  /** The verdicts of a run: regression events (verdict-alerts.ts). */
  readonly events: EventBridgeClient;
  /** The verdicts of a run: regression notifications (verdict-alerts.ts). */
  readonly sns: SNSClient;
  /** The preflight only: GetRole of the RDS service-linked role. */
  readonly iam: IAMClient;
  /** The preflight only: the EC2 vCPU quota. */
  readonly serviceQuotas: ServiceQuotasClient;
  /** A self-managed cell's database credentials (self-managed-servers.ts, teardown, sweeper). */
  readonly secrets: SecretsManagerClient;
}

export interface AwsClientOptions {
  readonly region: string;
  /** A single endpoint for every service (moto server); undefined for real AWS. */
  readonly endpoint?: string;
  /** Static credentials (tests); undefined uses the default provider chain (the Lambda role). */
  readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string };
  /** SDK retry attempts for throttling and 5xx (the state machine retries on top). */
  readonly maxAttempts?: number;
}

export function makeAwsClients(options: AwsClientOptions): AwsClients {
  const common = {
    region: options.region,
    maxAttempts: options.maxAttempts ?? 5,
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    ...(options.credentials ? { credentials: { ...options.credentials } } : {}),
  };
  return {
    rds: new RDSClient(common),
    ec2: new EC2Client(common),
    ssm: new SSMClient(common),
    // moto (and any single-endpoint server) serves buckets by path, not by virtual host.
    s3: new S3Client({ ...common, ...(options.endpoint ? { forcePathStyle: true } : {}) }),
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
