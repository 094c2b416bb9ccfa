/**
 * What the aurora-bench stack creates once per account (lib/network.ts, lib/clients.ts,
 * lib/results-lake.ts, lib/aurora-bench-stack.ts), created in the rehearsal's moto: a VPC with a
 * private subnet per AZ, the DB subnet group, the DB and client security groups, one client launch
 * template per CPU architecture, the clients' instance profile (moto checks RunInstances'
 * IamInstanceProfile against IAM), the lake bucket with client/ copied under runner/ (the stack's
 * BucketDeployment), and the AwsBackendConfig naming all of it, with the values the stack gives
 * its handlers (lib/handler-environment.ts handlerBackendConfig).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { CreateLaunchTemplateCommand, CreateSecurityGroupCommand, CreateSubnetCommand, CreateVpcCommand, type EC2Client } from '@aws-sdk/client-ec2';
import { CreateInstanceProfileCommand, type IAMClient } from '@aws-sdk/client-iam';
import { CreateDBSubnetGroupCommand, type RDSClient } from '@aws-sdk/client-rds';
import { CreateBucketCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { AWS_CONFIG_DEFAULTS, type AwsBackendConfig } from '../backends/aws/config';

/** Where the stack deploys client/ in the bucket (lib/handler-environment.ts RUNNER_PREFIX). */
export const RUNNER_PREFIX = 'runner/';

export interface StandingInfrastructureOptions {
  readonly region: string;
  /** The spec's AZ letters (and "a"): one subnet each. */
  readonly azLetters: readonly string[];
  /** The checkout whose client/ directory is deployed. */
  readonly repoRoot: string;
  readonly bucket?: string;
}

export interface RawAwsClients {
  readonly ec2: EC2Client;
  readonly rds: RDSClient;
  readonly s3: S3Client;
  readonly iam: IAMClient;
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

export async function createStandingInfrastructure(raw: RawAwsClients, o: StandingInfrastructureOptions): Promise<AwsBackendConfig> {
  const bucket = o.bucket ?? 'aurora-bench-rehearsal-lake';
  const letters = [...new Set(['a', ...o.azLetters])].sort();
  const vpc = await raw.ec2.send(new CreateVpcCommand({ CidrBlock: '10.20.0.0/16' }));
  const vpcId = vpc.Vpc!.VpcId!;
  const subnetIdsByAz: Record<string, string> = {};
  for (const [i, letter] of letters.entries()) {
    const az = `${o.region}${letter}`;
    const subnet = await raw.ec2.send(new CreateSubnetCommand({ VpcId: vpcId, CidrBlock: `10.20.${i + 1}.0/24`, AvailabilityZone: az }));
    subnetIdsByAz[az] = subnet.Subnet!.SubnetId!;
  }
  const dbSubnetGroupName = 'aurora-bench-db';
  await raw.rds.send(new CreateDBSubnetGroupCommand({ DBSubnetGroupName: dbSubnetGroupName, DBSubnetGroupDescription: 'aurora-bench DB subnets', SubnetIds: Object.values(subnetIdsByAz) }));
  const dbSg = await raw.ec2.send(new CreateSecurityGroupCommand({ GroupName: 'aurora-bench-db', Description: 'aurora-bench DB instances', VpcId: vpcId }));
  const clientSg = await raw.ec2.send(new CreateSecurityGroupCommand({ GroupName: 'aurora-bench-client', Description: 'aurora-bench clients', VpcId: vpcId }));
  const launchTemplateIds: AwsBackendConfig['launchTemplateIds'] = {};
  for (const arch of ['x86_64', 'arm64'] as const) {
    const lt = await raw.ec2.send(new CreateLaunchTemplateCommand({ LaunchTemplateName: `aurora-bench-client-${arch}`, LaunchTemplateData: { ImageId: 'ami-12c6146b', InstanceInitiatedShutdownBehavior: 'terminate' } }));
    (launchTemplateIds as Record<string, string>)[arch] = lt.LaunchTemplate!.LaunchTemplateId!;
  }
  const profile = await raw.iam.send(new CreateInstanceProfileCommand({ InstanceProfileName: 'aurora-bench-client' }));
  await raw.s3.send(new CreateBucketCommand({ Bucket: bucket }));
  const clientDir = join(o.repoRoot, 'client');
  for (const file of filesUnder(clientDir)) {
    await raw.s3.send(new PutObjectCommand({ Bucket: bucket, Key: RUNNER_PREFIX + relative(clientDir, file), Body: readFileSync(file) }));
  }
  return {
    region: o.region,
    bucket,
    lakePrefix: AWS_CONFIG_DEFAULTS.lakePrefix,
    ssmOutputPrefix: AWS_CONFIG_DEFAULTS.ssmOutputPrefix,
    subnetIdsByAz,
    dbSecurityGroupId: dbSg.GroupId!,
    dbSubnetGroupName,
    clientSecurityGroupId: clientSg.GroupId!,
    clientInstanceProfileArn: profile.InstanceProfile!.Arn!,
    launchTemplateIds,
    launchTemplateVersion: AWS_CONFIG_DEFAULTS.launchTemplateVersion,
    runnerS3Uri: `s3://${bucket}/${RUNNER_PREFIX}`,
    tagKeyPrefix: AWS_CONFIG_DEFAULTS.tagKeyPrefix,
    ssmDocumentName: AWS_CONFIG_DEFAULTS.ssmDocumentName,
    masterUsername: AWS_CONFIG_DEFAULTS.masterUsername,
    performanceInsightsRetentionDays: AWS_CONFIG_DEFAULTS.performanceInsightsRetentionDays,
    piPeriodS: AWS_CONFIG_DEFAULTS.piPeriodS,
  };
}
