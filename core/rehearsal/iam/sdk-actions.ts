/**
 * The IAM action of an AWS SDK v3 operation. S3 actions are often not the API's name.
 * See the Service Authorization Reference.
 * The rehearsal authorizes each bridged call by it, and test/helpers/iam-check.ts maps bundles by it.
 */

/** IAM service prefix and client class of each AWS SDK v3 client package the code may import. */
export const SDK_PACKAGES: Readonly<Record<string, { readonly prefix: string; readonly client: string }>> = {
  '@aws-sdk/client-athena': { prefix: 'athena', client: 'AthenaClient' },
  '@aws-sdk/client-cloudformation': { prefix: 'cloudformation', client: 'CloudFormationClient' },
  // The CloudWatch API is served at monitoring.<region>.amazonaws.com, but its IAM prefix is cloudwatch.
  '@aws-sdk/client-cloudwatch': { prefix: 'cloudwatch', client: 'CloudWatchClient' },
  '@aws-sdk/client-ec2': { prefix: 'ec2', client: 'EC2Client' },
  '@aws-sdk/client-eventbridge': { prefix: 'events', client: 'EventBridgeClient' },
  '@aws-sdk/client-glue': { prefix: 'glue', client: 'GlueClient' },
  '@aws-sdk/client-iam': { prefix: 'iam', client: 'IAMClient' },
  '@aws-sdk/client-pi': { prefix: 'pi', client: 'PIClient' },
  '@aws-sdk/client-rds': { prefix: 'rds', client: 'RDSClient' },
  '@aws-sdk/client-s3': { prefix: 's3', client: 'S3Client' },
  '@aws-sdk/client-secrets-manager': { prefix: 'secretsmanager', client: 'SecretsManagerClient' },
  '@aws-sdk/client-service-quotas': { prefix: 'servicequotas', client: 'ServiceQuotasClient' },
  '@aws-sdk/client-sns': { prefix: 'sns', client: 'SNSClient' },
  '@aws-sdk/client-sfn': { prefix: 'states', client: 'SFNClient' },
  '@aws-sdk/client-ssm': { prefix: 'ssm', client: 'SSMClient' },
  '@aws-sdk/client-sts': { prefix: 'sts', client: 'STSClient' },
};

/**
 * S3 API operations and the IAM actions they need. See Service Authorization Reference, Amazon S3.
 * For example ListObjectsV2 needs s3:ListBucket, and HeadObject needs s3:GetObject.
 * An S3 operation not listed is refused, so add it from there.
 */
const S3_OPERATION_ACTIONS: Readonly<Record<string, readonly string[]>> = {
  GetObject: ['s3:GetObject'],
  HeadObject: ['s3:GetObject'],
  PutObject: ['s3:PutObject'],
  ListObjectsV2: ['s3:ListBucket'],
  HeadBucket: ['s3:ListBucket'],
  DeleteObject: ['s3:DeleteObject'],
  // DeleteObjects is authorized per key by s3:DeleteObject.
  DeleteObjects: ['s3:DeleteObject'],
  GetBucketEncryption: ['s3:GetEncryptionConfiguration'],
  GetBucketLocation: ['s3:GetBucketLocation'],
};

/** The IAM actions of one operation of a service prefix, or undefined for an unmapped S3 operation. */
export function actionsOfOperation(prefix: string, operation: string): readonly string[] | undefined {
  if (prefix === 's3') return S3_OPERATION_ACTIONS[operation];
  return [`${prefix}:${operation}`];
}
