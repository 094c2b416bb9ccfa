/**
 * What the aurora-bench stack creates once per account, created in the rehearsal's moto.
 * The network matches the default stack, so the account preflight checks what the clients can reach.
 * It returns the AwsBackendConfig naming all of it, as the stack gives its handlers.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import {
  AllocateAddressCommand,
  AssociateRouteTableCommand,
  AttachInternetGatewayCommand,
  CreateInternetGatewayCommand,
  CreateLaunchTemplateCommand,
  CreateNatGatewayCommand,
  CreateRouteCommand,
  CreateRouteTableCommand,
  CreateSecurityGroupCommand,
  CreateSubnetCommand,
  CreateVpcCommand,
  CreateVpcEndpointCommand,
  DescribeSubnetsCommand,
  type EC2Client,
} from '@aws-sdk/client-ec2';
import { CreateInstanceProfileCommand, type IAMClient } from '@aws-sdk/client-iam';
import { CreateDBSubnetGroupCommand, type RDSClient } from '@aws-sdk/client-rds';
import { CreateBucketCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { AWS_CONFIG_DEFAULTS, type AwsBackendConfig } from '../backends/aws/config';
import { runnerBundleDigest } from '../backends/aws/runner-command';

/** Where the stack deploys client/ in the bucket. */
const RUNNER_PREFIX = 'runner/';

export interface StandingInfrastructureOptions {
  readonly region: string;
  /** The spec's AZ letters and "a", one subnet each. */
  readonly azLetters: readonly string[];
  /** The checkout whose client/ directory is deployed. */
  readonly repoRoot: string;
  readonly bucket?: string;
  /** What the stack's client user data downloads, if known. */
  readonly clientSourceUrls?: Readonly<Record<string, string>>;
  /** How late the rehearsal's CloudWatch datapoints may arrive. */
  readonly metricsPublishDelayS?: number;
  readonly lakePrefix?: string;
  /** How the client subnets reach out. The default is the stack's default VPC. */
  readonly network?: ClientNetworkOptions;
}

/** @internal test seam: the account preflight's tests build networks without some parts. */
export interface ClientNetworkOptions {
  /** A NAT gateway in a public subnet as the subnets' default route. */
  readonly nat: boolean;
  /** An S3 gateway endpoint on the subnets' route table. */
  readonly s3Endpoint: boolean;
  /** Interface endpoints for ssm, ssmmessages, ec2messages and secretsmanager in the subnets. */
  readonly ssmEndpoints: boolean;
}

const STACK_NETWORK: ClientNetworkOptions = { nat: true, s3Endpoint: true, ssmEndpoints: true };

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

export async function createStandingInfrastructure(
  raw: RawAwsClients,
  o: StandingInfrastructureOptions,
): Promise<AwsBackendConfig> {
  const bucket = o.bucket ?? 'aurora-bench-rehearsal-lake';
  const letters = [...new Set(['a', ...o.azLetters])].sort();
  const vpc = await raw.ec2.send(new CreateVpcCommand({ CidrBlock: '10.20.0.0/16' }));
  const vpcId = vpc.Vpc!.VpcId!;
  const subnetIdsByAz: Record<string, string> = {};
  for (const [i, letter] of letters.entries()) {
    const az = `${o.region}${letter}`;
    const subnet = await raw.ec2.send(
      new CreateSubnetCommand({ VpcId: vpcId, CidrBlock: `10.20.${i + 1}.0/24`, AvailabilityZone: az }),
    );
    subnetIdsByAz[az] = subnet.Subnet!.SubnetId!;
  }
  await addClientNetwork(raw.ec2, o.region, subnetIdsByAz, o.network ?? STACK_NETWORK);
  const dbSubnetGroupName = 'aurora-bench-db';
  await raw.rds.send(
    new CreateDBSubnetGroupCommand({
      DBSubnetGroupName: dbSubnetGroupName,
      DBSubnetGroupDescription: 'aurora-bench DB subnets',
      SubnetIds: Object.values(subnetIdsByAz),
    }),
  );
  const dbSg = await raw.ec2.send(
    new CreateSecurityGroupCommand({
      GroupName: 'aurora-bench-db',
      Description: 'aurora-bench DB instances',
      VpcId: vpcId,
    }),
  );
  const clientSg = await raw.ec2.send(
    new CreateSecurityGroupCommand({
      GroupName: 'aurora-bench-client',
      Description: 'aurora-bench clients',
      VpcId: vpcId,
    }),
  );
  const launchTemplateIds: AwsBackendConfig['launchTemplateIds'] = {};
  for (const arch of ['x86_64', 'arm64'] as const) {
    const lt = await raw.ec2.send(
      new CreateLaunchTemplateCommand({
        LaunchTemplateName: `aurora-bench-client-${arch}`,
        LaunchTemplateData: { ImageId: 'ami-12c6146b', InstanceInitiatedShutdownBehavior: 'terminate' },
      }),
    );
    (launchTemplateIds as Record<string, string>)[arch] = lt.LaunchTemplate!.LaunchTemplateId!;
  }
  const profile = await raw.iam.send(new CreateInstanceProfileCommand({ InstanceProfileName: 'aurora-bench-client' }));
  // Self-managed servers have their own launch templates, security group and profile.
  const serverSg = await raw.ec2.send(
    new CreateSecurityGroupCommand({
      GroupName: 'aurora-bench-server',
      Description: 'aurora-bench self-managed servers',
      VpcId: vpcId,
    }),
  );
  const serverLaunchTemplateIds: Partial<Record<'x86_64' | 'arm64', string>> = {};
  for (const arch of ['x86_64', 'arm64'] as const) {
    const lt = await raw.ec2.send(
      new CreateLaunchTemplateCommand({
        LaunchTemplateName: `aurora-bench-server-${arch}`,
        LaunchTemplateData: { ImageId: 'ami-12c6146b', InstanceInitiatedShutdownBehavior: 'terminate' },
      }),
    );
    serverLaunchTemplateIds[arch] = lt.LaunchTemplate!.LaunchTemplateId!;
  }
  const serverProfile = await raw.iam.send(
    new CreateInstanceProfileCommand({ InstanceProfileName: 'aurora-bench-server' }),
  );
  await raw.s3.send(new CreateBucketCommand({ Bucket: bucket }));
  const clientDir = join(o.repoRoot, 'client');
  for (const file of filesUnder(clientDir)) {
    await raw.s3.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: RUNNER_PREFIX + relative(clientDir, file),
        Body: readFileSync(file),
      }),
    );
  }
  return {
    region: o.region,
    bucket,
    lakePrefix: o.lakePrefix ?? AWS_CONFIG_DEFAULTS.lakePrefix,
    ssmOutputPrefix: AWS_CONFIG_DEFAULTS.ssmOutputPrefix,
    subnetIdsByAz,
    dbSecurityGroupId: dbSg.GroupId!,
    dbSubnetGroupName,
    clientSecurityGroupId: clientSg.GroupId!,
    clientInstanceProfileArn: profile.InstanceProfile!.Arn!,
    launchTemplateIds,
    launchTemplateVersion: AWS_CONFIG_DEFAULTS.launchTemplateVersion,
    serverLaunchTemplateIds,
    serverSecurityGroupId: serverSg.GroupId!,
    serverInstanceProfileArn: serverProfile.InstanceProfile!.Arn!,
    runnerS3Uri: `s3://${bucket}/${RUNNER_PREFIX}`,
    runnerDigest: runnerBundleDigest(clientDir),
    tagKeyPrefix: AWS_CONFIG_DEFAULTS.tagKeyPrefix,
    ssmDocumentName: AWS_CONFIG_DEFAULTS.ssmDocumentName,
    masterUsername: AWS_CONFIG_DEFAULTS.masterUsername,
    performanceInsightsRetentionDays: AWS_CONFIG_DEFAULTS.performanceInsightsRetentionDays,
    piPeriodS: AWS_CONFIG_DEFAULTS.piPeriodS,
    ...(o.clientSourceUrls !== undefined ? { clientSourceUrls: o.clientSourceUrls } : {}),
    metricsPublishDelayS: o.metricsPublishDelayS ?? AWS_CONFIG_DEFAULTS.metricsPublishDelayS,
  };
}

/**
 * lib/network.ts for subnets of one VPC.
 * Each part is optional, so the account preflight's tests can build a network without it.
 * @internal test seam
 */
export async function addClientNetwork(
  ec2: EC2Client,
  region: string,
  subnetIdsByAz: Readonly<Record<string, string>>,
  options: ClientNetworkOptions,
): Promise<void> {
  const subnetIds = Object.values(subnetIdsByAz);
  const subnets = (await ec2.send(new DescribeSubnetsCommand({ SubnetIds: subnetIds }))).Subnets ?? [];
  const vpcId = subnets[0]!.VpcId!;
  const routeTable = await ec2.send(new CreateRouteTableCommand({ VpcId: vpcId }));
  const routeTableId = routeTable.RouteTable!.RouteTableId!;
  for (const subnetId of subnetIds)
    await ec2.send(new AssociateRouteTableCommand({ RouteTableId: routeTableId, SubnetId: subnetId }));
  if (options.nat) {
    const igw = await ec2.send(new CreateInternetGatewayCommand({}));
    await ec2.send(
      new AttachInternetGatewayCommand({ InternetGatewayId: igw.InternetGateway!.InternetGatewayId!, VpcId: vpcId }),
    );
    const second = Number(/^10\.(\d+)\./.exec(subnets[0]!.CidrBlock ?? '')?.[1] ?? 20);
    const publicSubnet = await ec2.send(
      new CreateSubnetCommand({
        VpcId: vpcId,
        CidrBlock: `10.${second}.200.0/24`,
        AvailabilityZone: subnets[0]!.AvailabilityZone!,
      }),
    );
    const eip = await ec2.send(new AllocateAddressCommand({ Domain: 'vpc' }));
    const nat = await ec2.send(
      new CreateNatGatewayCommand({ SubnetId: publicSubnet.Subnet!.SubnetId!, AllocationId: eip.AllocationId! }),
    );
    await ec2.send(
      new CreateRouteCommand({
        RouteTableId: routeTableId,
        DestinationCidrBlock: '0.0.0.0/0',
        NatGatewayId: nat.NatGateway!.NatGatewayId!,
      }),
    );
  }
  if (options.s3Endpoint) {
    await ec2.send(
      new CreateVpcEndpointCommand({
        VpcId: vpcId,
        ServiceName: `com.amazonaws.${region}.s3`,
        VpcEndpointType: 'Gateway',
        RouteTableIds: [routeTableId],
      }),
    );
  }
  if (options.ssmEndpoints) {
    for (const service of ['ssm', 'ssmmessages', 'ec2messages', 'secretsmanager']) {
      await ec2.send(
        new CreateVpcEndpointCommand({
          VpcId: vpcId,
          ServiceName: `com.amazonaws.${region}.${service}`,
          VpcEndpointType: 'Interface',
          SubnetIds: subnetIds,
        }),
      );
    }
  }
}
