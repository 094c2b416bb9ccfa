/**
 * What the AWS tests set up in their moto server: the standing infrastructure the CDK stack would
 * create (the AWS rehearsal's own code: VPC, a subnet per AZ, routes and endpoints, the DB subnet
 * group, security groups, launch templates, the lake bucket with client/, the clients' instance
 * profile) and the AwsBackendConfig naming it; raw SDK clients for
 * arranging and inspecting moto's state; and moto-api helpers (queued Athena results).
 */
import { CLIENT_BOOT_DOWNLOADS } from '../../lib/client-user-data';
import { join } from 'node:path';
import { AthenaClient, CreateWorkGroupCommand } from '@aws-sdk/client-athena';
import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { EventBridgeClient, PutRuleCommand, PutTargetsCommand } from '@aws-sdk/client-eventbridge';
import { CreateTopicCommand, SNSClient, SubscribeCommand } from '@aws-sdk/client-sns';
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { EC2Client } from '@aws-sdk/client-ec2';
import { IAMClient } from '@aws-sdk/client-iam';
import { RDSClient } from '@aws-sdk/client-rds';
import { S3Client } from '@aws-sdk/client-s3';
import { SSMClient } from '@aws-sdk/client-ssm';
import type { AwsBackendConfig } from '../../core/backends/aws/config';
import { VERDICT_EVENT_DETAIL_TYPE } from '../../core/backends/aws/verdict-alerts';
import {
  addClientNetwork as addStackClientNetwork,
  createStandingInfrastructure as createStackInfrastructure,
  type ClientNetworkOptions,
} from '../../core/rehearsal/standing-infrastructure';

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

export interface StandingInfrastructureOptions {
  /** The lake bucket (created). */
  readonly bucket?: string;
  readonly lakePrefix?: string;
  /** How the client subnets reach out (default: as the stack's default VPC, NAT gateway and endpoints). */
  readonly network?: ClientNetworkOptions;
  /** AwsBackendConfig.metricsPublishDelayS (default 180, as on AWS). */
  readonly metricsPublishDelayS?: number;
  /** AwsBackendConfig.parameterGroupSettleS (default 0 here: see createStandingInfrastructure). */
  readonly parameterGroupSettleS?: number;
}

/**
 * The resources the stack creates once per account, made in moto by the AWS rehearsal's own code
 * (core/rehearsal/standing-infrastructure.ts), with subnets in us-east-1a and us-east-1b and the
 * backend config that names them.
 */
export async function createStandingInfrastructure(
  endpoint: string,
  raw: RawClients,
  options: StandingInfrastructureOptions = {},
): Promise<AwsBackendConfig> {
  const iam = new IAMClient({ region: REGION, endpoint, credentials: CREDENTIALS });
  try {
    const config = await createStackInfrastructure(
      { ...raw, iam },
      {
        region: REGION,
        azLetters: ['a', 'b'],
        repoRoot: join(__dirname, '..', '..'),
        bucket: options.bucket ?? 'ab-lake',
        clientSourceUrls: CLIENT_BOOT_DOWNLOADS,
        metricsPublishDelayS: options.metricsPublishDelayS ?? 180,
        // Not the stack's empty default: a prefix the tests can see applied to every lake key.
        lakePrefix: options.lakePrefix ?? 'lake/',
        ...(options.network !== undefined ? { network: options.network } : {}),
      },
    );
    // These tests drive provisioning call by call with a fixed clock: the cluster is created in
    // ProvisionCell itself (RDS's wait after a parameter group change, and the apply statuses moto
    // does not report, are tested against the rehearsal's RDS emulation, test/rehearsal/parameter-groups.test.ts).
    return { ...config, parameterGroupSettleS: options.parameterGroupSettleS ?? 0 };
  } finally {
    iam.destroy();
  }
}

/** lib/network.ts's client routes for a config's subnets (one VPC), each part as told. */
export async function addClientNetwork(
  raw: RawClients,
  config: AwsBackendConfig,
  options: ClientNetworkOptions,
): Promise<void> {
  await addStackClientNetwork(raw.ec2, REGION, config.subnetIdsByAz, options);
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
export function athenaTable(
  columns: readonly { name: string; type: string }[],
  rows: readonly (readonly (string | null)[])[],
): MotoAthenaResult {
  return {
    column_info: columns.map((c) => ({ Name: c.name, Type: c.type, Label: c.name })),
    rows: [
      { Data: columns.map((c) => ({ VarCharValue: c.name })) },
      ...rows.map((r) => ({ Data: r.map((v) => (v === null ? {} : { VarCharValue: v })) })),
    ],
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
    await athena.send(
      new CreateWorkGroupCommand({
        Name: workGroup,
        Configuration: { ResultConfiguration: { OutputLocation: `s3://${config.bucket}/athena-results/` } },
      }),
    );
    const topic = await sns.send(new CreateTopicCommand({ Name: `ab-regressions-${config.bucket}` }));
    const queueArn = async (url: string) =>
      (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }))).Attributes![
        'QueueArn'
      ]!;
    const eventsQueueUrl = (await sqs.send(new CreateQueueCommand({ QueueName: `ab-events-${config.bucket}` })))
      .QueueUrl!;
    const notificationsQueueUrl = (
      await sqs.send(new CreateQueueCommand({ QueueName: `ab-notifications-${config.bucket}` }))
    ).QueueUrl!;
    const rule = `ab-regressions-${config.bucket}`;
    await events.send(
      new PutRuleCommand({
        Name: rule,
        EventBusName: 'default',
        EventPattern: JSON.stringify({ 'detail-type': [VERDICT_EVENT_DETAIL_TYPE] }),
      }),
    );
    await events.send(
      new PutTargetsCommand({
        Rule: rule,
        EventBusName: 'default',
        Targets: [{ Id: 'queue', Arn: await queueArn(eventsQueueUrl) }],
      }),
    );
    await sns.send(
      new SubscribeCommand({
        TopicArn: topic.TopicArn,
        Protocol: 'sqs',
        Endpoint: await queueArn(notificationsQueueUrl),
      }),
    );
    return {
      config: {
        ...config,
        athenaWorkGroup: workGroup,
        glueDatabase: 'aurora_bench',
        alertTopicArn: topic.TopicArn!,
        eventBusName: 'default',
      },
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
    const out = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
    );
    const messages = out.Messages ?? [];
    if (messages.length === 0) return bodies;
    for (const m of messages) {
      bodies.push(m.Body ?? '');
      await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: m.ReceiptHandle }));
    }
  }
}
