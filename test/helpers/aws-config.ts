/**
 * An AwsBackendConfig for tests that never reach an endpoint (client-mock tests): the names are
 * placeholders; moto-backed tests build theirs with createStandingInfrastructure instead.
 */
import type { AwsBackendConfig } from '../../core/backends/aws/config';

export function offlineAwsConfig(overrides: Partial<AwsBackendConfig> = {}): AwsBackendConfig {
  return {
    region: 'us-east-1',
    bucket: 'b',
    lakePrefix: '',
    ssmOutputPrefix: 'ssm-output/',
    subnetIdsByAz: { 'us-east-1a': 'subnet-a' },
    dbSecurityGroupId: 'sg-db',
    dbSubnetGroupName: 'dbs',
    clientSecurityGroupId: 'sg-c',
    clientInstanceProfileArn: 'arn:aws:iam::1:instance-profile/c',
    launchTemplateIds: { x86_64: 'lt-x', arm64: 'lt-a' },
    launchTemplateVersion: '$Default',
    runnerS3Uri: 's3://b/runner/',
    tagKeyPrefix: 'aurora-bench:',
    ssmDocumentName: 'AWS-RunShellScript',
    masterUsername: 'benchadmin',
    performanceInsightsRetentionDays: 7,
    piPeriodS: 60,
    metricsPublishDelayS: 180,
    ...overrides,
  };
}
