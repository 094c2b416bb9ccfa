/**
 * The IAM action of an AWS SDK v3 operation: the service prefix of its client package and, for S3,
 * the action each API needs, which is often not the API's name (Service Authorization Reference).
 * The rehearsal authorizes each bridged call by it; test/helpers/iam-check.ts maps the operations a
 * bundle can send by it.
 */

/** IAM service prefix and client class of each AWS SDK v3 client package the code may import. */
export const SDK_PACKAGES: Readonly<Record<string, { readonly prefix: string; readonly client: string }>> = {
  '@aws-sdk/client-athena': { prefix: 'athena', client: 'AthenaClient' },
  '@aws-sdk/client-cloudformation': { prefix: 'cloudformation', client: 'CloudFormationClient' },
  // The CloudWatch API is served at monitoring.<region>.amazonaws.com; its IAM prefix is cloudwatch.
  '@aws-sdk/client-cloudwatch': { prefix: 'cloudwatch', client: 'CloudWatchClient' },
  '@aws-sdk/client-ec2': { prefix: 'ec2', client: 'EC2Client' },
  // EventBridge: prefix events.
  '@aws-sdk/client-eventbridge': { prefix: 'events', client: 'EventBridgeClient' },
  '@aws-sdk/client-glue': { prefix: 'glue', client: 'GlueClient' },
  '@aws-sdk/client-iam': { prefix: 'iam', client: 'IAMClient' },
  // Performance Insights: prefix pi.
  '@aws-sdk/client-pi': { prefix: 'pi', client: 'PIClient' },
  '@aws-sdk/client-rds': { prefix: 'rds', client: 'RDSClient' },
  '@aws-sdk/client-s3': { prefix: 's3', client: 'S3Client' },
  '@aws-sdk/client-secrets-manager': { prefix: 'secretsmanager', client: 'SecretsManagerClient' },
  '@aws-sdk/client-service-quotas': { prefix: 'servicequotas', client: 'ServiceQuotasClient' },
  '@aws-sdk/client-sns': { prefix: 'sns', client: 'SNSClient' },
  // Step Functions: prefix states.
  '@aws-sdk/client-sfn': { prefix: 'states', client: 'SFNClient' },
  '@aws-sdk/client-ssm': { prefix: 'ssm', client: 'SSMClient' },
  '@aws-sdk/client-sts': { prefix: 'sts', client: 'STSClient' },
};

/**
 * S3 API operations -> the IAM actions they need (Service Authorization Reference, Amazon S3:
 * ListObjectsV2 is authorized by s3:ListBucket, HeadObject by s3:GetObject, GetBucketEncryption by
 * s3:GetEncryptionConfiguration). An S3 operation not listed is refused: add it from there.
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

/** The IAM actions of one operation of a service prefix; undefined for an S3 operation not mapped. */
export function actionsOfOperation(prefix: string, operation: string): readonly string[] | undefined {
  if (prefix === 's3') return S3_OPERATION_ACTIONS[operation];
  return [`${prefix}:${operation}`];
}
