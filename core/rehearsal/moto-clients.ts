/** The rehearsal's own SDK clients of moto, for the emulations and the standing infrastructure. */
import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { EC2Client } from '@aws-sdk/client-ec2';
import { IAMClient } from '@aws-sdk/client-iam';
import { RDSClient } from '@aws-sdk/client-rds';
import { S3Client } from '@aws-sdk/client-s3';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { s3ClientConfig, sdkClientConfig, type AwsClientOptions } from '../backends/aws/client-config';
import { MOTO_CREDENTIALS } from './moto-server';

/**
 * moto answers in milliseconds, or seconds on a loaded machine.
 * A stuck request fails and is retried instead of holding the rehearsal forever.
 */
const MOTO_REQUEST_TIMEOUT_MS = 60_000;

/** The options of every SDK client the rehearsal points at moto. */
export function motoClientOptions(region: string, endpoint: string): AwsClientOptions {
  return { region, endpoint, credentials: { ...MOTO_CREDENTIALS }, requestTimeoutMs: MOTO_REQUEST_TIMEOUT_MS };
}

/** Not the handlers' clients, so no emulation is put on these. */
export interface MotoClients {
  readonly ec2: EC2Client;
  readonly rds: RDSClient;
  readonly s3: S3Client;
  readonly iam: IAMClient;
  readonly secrets: SecretsManagerClient;
  readonly cloudwatch: CloudWatchClient;
}

export function motoClients(common: AwsClientOptions): MotoClients {
  const rawConfig = sdkClientConfig(common);
  return {
    ec2: new EC2Client(rawConfig),
    rds: new RDSClient(rawConfig),
    s3: new S3Client(s3ClientConfig(common)),
    iam: new IAMClient(rawConfig),
    secrets: new SecretsManagerClient(rawConfig),
    cloudwatch: new CloudWatchClient(rawConfig),
  };
}
