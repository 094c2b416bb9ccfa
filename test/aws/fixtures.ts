/**
 * What the AWS tests set up in their moto server: the standing infrastructure the CDK stack would
 * create (VPC, a subnet per AZ, the DB subnet group, security groups, launch templates, the lake
 * bucket, the clients' instance profile) and the AwsBackendConfig naming it; raw SDK clients for
 * arranging and inspecting moto's state; and moto-api helpers (queued Athena results).
 */
import { AthenaClient, CreateWorkGroupCommand } from '@aws-sdk/client-athena';
import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { EventBridgeClient, PutRuleCommand, PutTargetsCommand } from '@aws-sdk/client-eventbridge';
import { CreateTopicCommand, SNSClient, SubscribeCommand } from '@aws-sdk/client-sns';
import { CreateQueueCommand, DeleteMessageCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
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
  EC2Client,
} from '@aws-sdk/client-ec2';
import { CreateDBSubnetGroupCommand, RDSClient } from '@aws-sdk/client-rds';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { SSMClient } from '@aws-sdk/client-ssm';
import type { AwsBackendConfig } from '../../core/backends/aws/config';
import { VERDICT_EVENT_DETAIL_TYPE } from '../../core/backends/aws/verdict-alerts';

export const REGION = 'us-east-1';
export const CREDENTIALS = { accessKeyId: 'testing', secretAccessKey: 'testing' };

/** Clients straight to moto, never mocked: what a test arranges and inspects with. */
export interface RawClients {
  readonly rds: RDSClient;
  readonly ec2: EC2Client;
  readonly s3: S3Client;
  readonly cw: CloudWatchClient;
  readonly ssm: SSMClient;
}

export function rawClients(endpoint: string): RawClients {
  const common = { region: REGION, endpoint, credentials: CREDENTIALS };
  return {
    rds: new RDSClient(common),
    ec2: new EC2Client(common),
    s3: new S3Client({ ...common, forcePathStyle: true }),
    cw: new CloudWatchClient(common),
    ssm: new SSMClient(common),
  };
}

export function destroyRawClients(raw: RawClients | undefined): void {
  for (const c of Object.values(raw ?? {}) as { destroy(): void }[]) c.destroy();
}

/**
 * Calls moto's IAM query API directly (no IAM SDK client is installed; moto does not check
 * signatures) and returns the response XML.
 */
async function motoIamQuery(endpoint: string, params: Record<string, string>): Promise<string> {
  const res = await fetch(endpoint, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: 'AWS4-HMAC-SHA256 Credential=testing/20261121/us-east-1/iam/aws4_request, SignedHeaders=host, Signature=0',
    },
    body: new URLSearchParams({ ...params, Version: '2010-05-08' }).toString(),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`moto IAM ${params['Action']} failed: ${res.status} ${text}`);
  return text;
}

export interface StandingInfrastructureOptions {
  /** The lake bucket (created). */
  readonly bucket?: string;
  readonly lakePrefix?: string;
  /** How the client subnets reach out (default: as the stack's default VPC, NAT gateway and endpoints). */
  readonly network?: ClientNetworkOptions;
  /** AwsBackendConfig.metricsPublishDelayS (default 180, as on AWS). */
  readonly metricsPublishDelayS?: number;
}

/** The sysbench source of the stack's default configuration (lib/config.ts clients.sysbenchSourceUrl). */
const DEFAULT_SYSBENCH_SOURCE = 'https://github.com/akopytov/sysbench/archive/refs/tags/1.0.20.tar.gz';

/**
 * The resources the stack creates once per account (lib/network.ts, lib/clients.ts,
 * lib/results-lake.ts), made in moto, and the backend config that names them. Subnets in
 * us-east-1a and us-east-1b with a route table of their own (a NAT gateway, the S3 gateway endpoint
 * and the SSM interface endpoints unless told otherwise), as the account preflight checks.
 */
export async function createStandingInfrastructure(endpoint: string, raw: RawClients, options: StandingInfrastructureOptions = {}): Promise<AwsBackendConfig> {
  const bucket = options.bucket ?? 'ab-lake';
  const vpc = await raw.ec2.send(new CreateVpcCommand({ CidrBlock: '10.20.0.0/16' }));
  const vpcId = vpc.Vpc!.VpcId!;
  const subnetA = await raw.ec2.send(new CreateSubnetCommand({ VpcId: vpcId, CidrBlock: '10.20.1.0/24', AvailabilityZone: 'us-east-1a' }));
  const subnetB = await raw.ec2.send(new CreateSubnetCommand({ VpcId: vpcId, CidrBlock: '10.20.2.0/24', AvailabilityZone: 'us-east-1b' }));
  await raw.rds.send(
    new CreateDBSubnetGroupCommand({ DBSubnetGroupName: 'aurora-bench-db', DBSubnetGroupDescription: 'test', SubnetIds: [subnetA.Subnet!.SubnetId!, subnetB.Subnet!.SubnetId!] }),
  );
  const dbSg = await raw.ec2.send(new CreateSecurityGroupCommand({ GroupName: 'ab-db', Description: 'db', VpcId: vpcId }));
  const clientSg = await raw.ec2.send(new CreateSecurityGroupCommand({ GroupName: 'ab-client', Description: 'client', VpcId: vpcId }));
  const ltX86 = await raw.ec2.send(new CreateLaunchTemplateCommand({ LaunchTemplateName: 'ab-client-x86', LaunchTemplateData: { ImageId: 'ami-12c6146b' } }));
  const ltArm = await raw.ec2.send(new CreateLaunchTemplateCommand({ LaunchTemplateName: 'ab-client-arm', LaunchTemplateData: { ImageId: 'ami-12c6146b' } }));
  await raw.s3.send(new CreateBucketCommand({ Bucket: bucket }));
  // moto checks RunInstances' IamInstanceProfile against IAM.
  const profileXml = await motoIamQuery(endpoint, { Action: 'CreateInstanceProfile', InstanceProfileName: 'ab-client' });
  const profileArn = /<Arn>([^<]+)<\/Arn>/.exec(profileXml)?.[1];
  if (!profileArn) throw new Error(`moto IAM CreateInstanceProfile returned no Arn:\n${profileXml}`);
  const config: AwsBackendConfig = {
    region: REGION,
    bucket,
    lakePrefix: options.lakePrefix ?? 'lake/',
    ssmOutputPrefix: 'ssm-output/',
    subnetIdsByAz: { 'us-east-1a': subnetA.Subnet!.SubnetId!, 'us-east-1b': subnetB.Subnet!.SubnetId! },
    dbSecurityGroupId: dbSg.GroupId!,
    dbSubnetGroupName: 'aurora-bench-db',
    clientSecurityGroupId: clientSg.GroupId!,
    clientInstanceProfileArn: profileArn,
    launchTemplateIds: { x86_64: ltX86.LaunchTemplate!.LaunchTemplateId!, arm64: ltArm.LaunchTemplate!.LaunchTemplateId! },
    launchTemplateVersion: '$Latest',
    runnerS3Uri: `s3://${bucket}/runner/client/`,
    tagKeyPrefix: 'aurora-bench:',
    ssmDocumentName: 'AWS-RunShellScript',
    masterUsername: 'benchadmin',
    performanceInsightsRetentionDays: 7,
    piPeriodS: 60,
    clientSourceUrls: { sysbench: DEFAULT_SYSBENCH_SOURCE },
    metricsPublishDelayS: options.metricsPublishDelayS ?? 180,
  };
  await addClientNetwork(raw, config, options.network ?? { nat: true, s3Endpoint: true, ssmEndpoints: true });
  return config;
}

export interface ClientNetworkOptions {
  /** A NAT gateway (in a public subnet with an internet gateway) as the subnets' default route. */
  readonly nat: boolean;
  /** An S3 gateway endpoint on the subnets' route table. */
  readonly s3Endpoint: boolean;
  /** Interface endpoints for ssm, ssmmessages, ec2messages and secretsmanager in the subnets. */
  readonly ssmEndpoints: boolean;
}

/**
 * What lib/network.ts gives the client subnets of a config made by createStandingInfrastructure
 * (all in one VPC): one route table associated with all of them, optionally a NAT gateway as its
 * default route, the S3 gateway endpoint and the SSM interface endpoints.
 */
export async function addClientNetwork(raw: RawClients, config: AwsBackendConfig, options: ClientNetworkOptions): Promise<void> {
  const subnetIds = Object.values(config.subnetIdsByAz);
  const subnets = (await raw.ec2.send(new DescribeSubnetsCommand({ SubnetIds: subnetIds }))).Subnets ?? [];
  const vpcId = subnets[0]!.VpcId!;
  const table = await raw.ec2.send(new CreateRouteTableCommand({ VpcId: vpcId }));
  const routeTableId = table.RouteTable!.RouteTableId!;
  for (const id of subnetIds) await raw.ec2.send(new AssociateRouteTableCommand({ RouteTableId: routeTableId, SubnetId: id }));
  if (options.nat) {
    const igw = await raw.ec2.send(new CreateInternetGatewayCommand({}));
    await raw.ec2.send(new AttachInternetGatewayCommand({ InternetGatewayId: igw.InternetGateway!.InternetGatewayId!, VpcId: vpcId }));
    const third = Number(/^10\.(\d+)\./.exec(subnets[0]!.CidrBlock ?? '')?.[1] ?? 20);
    const publicSubnet = await raw.ec2.send(new CreateSubnetCommand({ VpcId: vpcId, CidrBlock: `10.${third}.200.0/24`, AvailabilityZone: subnets[0]!.AvailabilityZone! }));
    const eip = await raw.ec2.send(new AllocateAddressCommand({ Domain: 'vpc' }));
    const nat = await raw.ec2.send(new CreateNatGatewayCommand({ SubnetId: publicSubnet.Subnet!.SubnetId!, AllocationId: eip.AllocationId! }));
    await raw.ec2.send(new CreateRouteCommand({ RouteTableId: routeTableId, DestinationCidrBlock: '0.0.0.0/0', NatGatewayId: nat.NatGateway!.NatGatewayId! }));
  }
  if (options.s3Endpoint) {
    await raw.ec2.send(new CreateVpcEndpointCommand({ VpcId: vpcId, ServiceName: `com.amazonaws.${REGION}.s3`, VpcEndpointType: 'Gateway', RouteTableIds: [routeTableId] }));
  }
  if (options.ssmEndpoints) {
    for (const service of ['ssm', 'ssmmessages', 'ec2messages', 'secretsmanager']) {
      await raw.ec2.send(new CreateVpcEndpointCommand({ VpcId: vpcId, ServiceName: `com.amazonaws.${REGION}.${service}`, VpcEndpointType: 'Interface', SubnetIds: subnetIds }));
    }
  }
}

/** One canned Athena result set (moto-api shape: rows as GetQueryResults returns them). */
export interface MotoAthenaResult {
  readonly column_info: readonly { Name: string; Type: string; Label?: string }[];
  readonly rows: readonly { Data: readonly { VarCharValue?: string }[] }[];
}

/**
 * Queues result sets in moto's Athena (POST /moto-api/static/athena/query-results): moto runs no
 * SQL; each StartQueryExecution takes the next queued result, or an empty one when none is left.
 */
export async function queueAthenaResults(endpoint: string, results: readonly MotoAthenaResult[]): Promise<void> {
  const res = await fetch(`${endpoint}/moto-api/static/athena/query-results`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ region: REGION, results }),
  });
  if (res.status !== 201) throw new Error(`moto-api athena query-results: ${res.status} ${await res.text()}`);
}

/** A canned result with the header row Athena puts first for a SELECT, values as strings (null: no value). */
export function athenaTable(columns: readonly { name: string; type: string }[], rows: readonly (readonly (string | null)[])[]): MotoAthenaResult {
  return {
    column_info: columns.map((c) => ({ Name: c.name, Type: c.type, Label: c.name })),
    rows: [{ Data: columns.map((c) => ({ VarCharValue: c.name })) }, ...rows.map((r) => ({ Data: r.map((v) => (v === null ? {} : { VarCharValue: v })) }))],
  };
}

/** Where a run's verdicts go on moto, and the queues that receive what EventBridge and SNS deliver. */
export interface VerdictTargets {
  /** The config with the Athena work group, Glue database, regression topic and bus. */
  readonly config: AwsBackendConfig;
  readonly sqs: SQSClient;
  /** Receives the events a rule on the default bus matches (detail-type VERDICT_EVENT_DETAIL_TYPE). */
  readonly eventsQueueUrl: string;
  /** Subscribed to the regression topic. */
  readonly notificationsQueueUrl: string;
}

/**
 * What the stack gives the ComputeVerdicts Task (lib/alerts.ts, lib/results-lake.ts), made in moto:
 * an Athena work group, the regression topic, and, to see what is delivered, an SQS queue behind an
 * EventBridge rule on the default bus and one subscribed to the topic (moto delivers to both).
 */
export async function createVerdictTargets(endpoint: string, config: AwsBackendConfig): Promise<VerdictTargets> {
  const common = { region: REGION, endpoint, credentials: CREDENTIALS };
  const athena = new AthenaClient(common);
  const sns = new SNSClient(common);
  const events = new EventBridgeClient(common);
  const sqs = new SQSClient(common);
  try {
    const workGroup = `ab-wg-${config.bucket}`;
    await athena.send(new CreateWorkGroupCommand({ Name: workGroup, Configuration: { ResultConfiguration: { OutputLocation: `s3://${config.bucket}/athena-results/` } } }));
    const topic = await sns.send(new CreateTopicCommand({ Name: `ab-regressions-${config.bucket}` }));
    const queueArn = async (url: string) => (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }))).Attributes!['QueueArn']!;
    const eventsQueueUrl = (await sqs.send(new CreateQueueCommand({ QueueName: `ab-events-${config.bucket}` }))).QueueUrl!;
    const notificationsQueueUrl = (await sqs.send(new CreateQueueCommand({ QueueName: `ab-notifications-${config.bucket}` }))).QueueUrl!;
    const rule = `ab-regressions-${config.bucket}`;
    await events.send(new PutRuleCommand({ Name: rule, EventBusName: 'default', EventPattern: JSON.stringify({ 'detail-type': [VERDICT_EVENT_DETAIL_TYPE] }) }));
    await events.send(new PutTargetsCommand({ Rule: rule, EventBusName: 'default', Targets: [{ Id: 'queue', Arn: await queueArn(eventsQueueUrl) }] }));
    await sns.send(new SubscribeCommand({ TopicArn: topic.TopicArn, Protocol: 'sqs', Endpoint: await queueArn(notificationsQueueUrl) }));
    return {
      config: { ...config, athenaWorkGroup: workGroup, glueDatabase: 'aurora_bench', alertTopicArn: topic.TopicArn!, eventBusName: 'default' },
      sqs,
      eventsQueueUrl,
      notificationsQueueUrl,
    };
  } finally {
    athena.destroy();
    sns.destroy();
    events.destroy();
  }
}

/** The messages waiting in a queue (all of them, removed). */
export async function drainQueue(sqs: SQSClient, queueUrl: string): Promise<string[]> {
  const bodies: string[] = [];
  for (;;) {
    const out = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
    const messages = out.Messages ?? [];
    if (messages.length === 0) return bodies;
    for (const m of messages) {
      bodies.push(m.Body ?? '');
      await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: m.ReceiptHandle }));
    }
  }
}
