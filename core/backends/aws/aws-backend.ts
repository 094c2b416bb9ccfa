/**
 * The AWS backend: one cell = one Aurora MySQL cluster (writer + readers in the variant's AZ, its
 * own cluster and instance parameter groups) plus EC2 clients driven by SSM Run Command. Every
 * resource has a deterministic name (names.ts) and the run/cell/expiry tags, so each call is safe to
 * retry: what exists is found, not created twice.
 *
 * API fields used, as named in the botocore models (rds/2014-10-31, ec2/2016-11-15, ssm/2014-11-06,
 * monitoring/2010-08-01, pi/2018-02-27 service-2.json) and the AWS docs cited inline.
 */
import { createHash } from 'node:crypto';
import { GetMetricDataCommand, type MetricDataQuery, type MetricDataResult } from '@aws-sdk/client-cloudwatch';
import { DescribeInstancesCommand, DescribeInstanceTypesCommand, RunInstancesCommand, type Instance } from '@aws-sdk/client-ec2';
import { GetResourceMetricsCommand } from '@aws-sdk/client-pi';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import {
  CreateDBClusterCommand,
  CreateDBClusterParameterGroupCommand,
  CreateDBInstanceCommand,
  CreateDBParameterGroupCommand,
  ModifyDBClusterParameterGroupCommand,
  ModifyDBParameterGroupCommand,
  type DBCluster,
  type DBInstance,
  type Parameter,
} from '@aws-sdk/client-rds';
import {
  CancelCommandCommand,
  DescribeInstanceInformationCommand,
  GetCommandInvocationCommand,
  ListCommandsCommand,
  SendCommandCommand,
  type GetCommandInvocationCommandOutput,
} from '@aws-sdk/client-ssm';
import {
  ResourceStillInUseError,
  UnsupportedOnBackendError,
  type Backend,
  type CellResources,
  type ClientRef,
  type Endpoint,
  type JobHandle,
  type JobsState,
  type MetricsWindow,
  type MetricWindowCount,
  type ReadyState,
  type RunContext,
  type RunnerJob,
  type ServerMetricsCollection,
  type TeardownReport,
} from '../../backend';
import { writeForwardingParameters } from '../../aurora/write-forwarding';
import { lakeKeys, SERVER_METRICS, type ServerMetricName, type ServerMetricRow } from '../../lake/rows';
import type { CellPlan, PlanNote, ResolvedVariant, StepPlan } from '../../plan/types';
import type { AwsClients } from './clients';
import type { AwsBackendConfig, ClientArchitecture } from './config';
import { call, errorCode, isAlreadyExists, isNotFound, rethrow } from './aws-errors';
import { parseAuroraVersion, type AuroraVersion } from './engine';
import { cellNames, cellTags, expiresAt, tagKeys, type CellNames, type Tag } from './names';
import { clientReadyKey, ssmRunnerCommands, type ClientReadyMarker } from './runner-command';
import { BENCHMARK_DATABASE, runnerArgs } from '../../sysbench/command';
import { S3LakeStore } from './s3-lake';
import { deleteCellResources, describeCluster, describeClusterInstances, findLiveInstances } from './teardown';

/** ModifyDB(Cluster)ParameterGroup: "A maximum of 20 parameters can be modified in a single request." (RDS API reference) */
export const MAX_PARAMETERS_PER_MODIFY = 20;

/** AWS-RunShellScript executionTimeout: 1..172800 s (48 h); SendCommand TimeoutSeconds (delivery): 30..2592000. */
const MAX_EXECUTION_TIMEOUT_S = 172_800;
const DELIVERY_TIMEOUT_S = 600;

/** Cluster/instance statuses from which a cell will never become ready (RDS User Guide, "Viewing DB cluster/instance status"). */
const FAILED_CLUSTER_STATUSES = new Set(['failed', 'inaccessible-encryption-credentials', 'inaccessible-encryption-credentials-recoverable', 'incompatible-parameters', 'incompatible-network', 'incompatible-restore', 'stopped', 'deleting']);
const FAILED_INSTANCE_STATUSES = new Set(['failed', 'incompatible-parameters', 'incompatible-network', 'incompatible-option-group', 'incompatible-restore', 'inaccessible-encryption-credentials', 'inaccessible-encryption-credentials-recoverable', 'restore-error', 'storage-full', 'stopped', 'deleting', 'insufficient-capacity']);

/** CloudWatch AWS/RDS metrics per instance role; AuroraReplicaLag is reported by readers only. */
const BASE_METRICS: readonly ServerMetricName[] = [
  'CPUUtilization',
  'SelectThroughput',
  'DMLThroughput',
  'CommitThroughput',
  'NetworkTransmitThroughput',
  'NetworkReceiveThroughput',
  'DatabaseConnections',
  'BufferCacheHitRatio',
  'Deadlocks',
];
/**
 * Write-forwarding metrics (Aurora User Guide, "Amazon CloudWatch metrics and Aurora MySQL status
 * variables for write forwarding"): Forwarding Writer* are measured on the writer, ForwardingReplica*
 * on each reader.
 */
const WRITER_FORWARDING_METRICS: readonly ServerMetricName[] = ['ForwardingWriterOpenSessions', 'ForwardingWriterDMLThroughput'];
const READER_FORWARDING_METRICS: readonly ServerMetricName[] = ['ForwardingReplicaSelectThroughput', 'ForwardingReplicaDMLThroughput', 'ForwardingReplicaOpenSessions'];

/** GetMetricData takes at most 500 MetricDataQuery per request (CloudWatch API reference). */
const MAX_METRIC_QUERIES = 500;
/** AWS/RDS metrics are standard resolution: 60 s is the finest period (MetricStat.Period docs). */
const CLOUDWATCH_PERIOD_S = 60;
/** Top wait events per instance in the PI breakdown (DimensionGroup.Limit, 1..25). */
const PI_WAIT_EVENT_LIMIT = 10;
/** The PI series every period of a window has a datapoint of (the per-wait-event ones need not). */
const PI_TOTAL_METRICS = ['db.load.avg', 'os.cpuUtilization.total.avg'] as const;

/** Datapoints of `periodS` seconds a window [start, end) holds: what a fully published window has. */
export function windowDatapoints(start: Date, end: Date, periodS: number): number {
  return Math.max(0, Math.floor((end.getTime() - start.getTime()) / (periodS * 1000)));
}

export interface AwsBackendOptions {
  readonly config: AwsBackendConfig;
  readonly clients: AwsClients;
  readonly now?: () => Date;
}

function paramValue(v: string | number | boolean): string {
  // MySQL boolean parameters take 1/0 in RDS parameter groups.
  return typeof v === 'boolean' ? (v ? '1' : '0') : String(v);
}

export function chunk<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** The cluster parameters a variant asks for, write-forwarding settings included. */
export function clusterParametersFor(cell: CellPlan): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [k, v] of Object.entries(cell.variant.clusterParameters)) params[k] = paramValue(v);
  // Aurora User Guide, "Configuration parameters for write forwarding": cluster-level parameters.
  return { ...params, ...writeForwardingParameters(cell.variant.writeForwarding) };
}

/** The instance-level parameters a variant asks for, as RDS takes them. */
export function instanceParametersFor(cell: CellPlan): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [k, v] of Object.entries(cell.variant.instanceParameters)) params[k] = paramValue(v);
  return params;
}

/**
 * The AZ a variant's writer, readers and clients go to: its own letter in the region, else the
 * first configured AZ (sorted); undefined when none is configured. Whether a subnet exists there is
 * the caller's question (provisioning refuses, the preflight reports it).
 */
export function variantAz(region: string, variant: Pick<ResolvedVariant, 'az'>, subnetIdsByAz: Readonly<Record<string, string>>): string | undefined {
  if (variant.az !== undefined) return `${region}${variant.az}`;
  return Object.keys(subnetIdsByAz).sort()[0];
}

function toParameters(params: Readonly<Record<string, string>>): Parameter[] {
  // pending-reboot is valid for static and dynamic parameters; the values apply when the instances
  // are created with the group, so no reboot is needed.
  return Object.entries(params).map(([ParameterName, ParameterValue]) => ({ ParameterName, ParameterValue, ApplyMethod: 'pending-reboot' }));
}

function stepOfJob(cell: CellPlan, jobId: string): StepPlan | undefined {
  const prefix = `${cell.cellId}/`;
  if (!jobId.startsWith(prefix)) return undefined;
  const stepId = jobId.slice(prefix.length).split('/')[0];
  return cell.steps.find((s) => s.stepId === stepId);
}

/** How long SSM lets the runner run: past the workflow's own deadline (it stops jobs first). */
export function executionTimeoutS(cell: CellPlan, step: StepPlan | undefined, phase: 'prepare' | 'run'): number {
  let deadline: number;
  if (phase === 'prepare' || step === undefined) deadline = Math.max(600, Math.ceil((cell.data.tables * cell.data.tableSize) / 2000));
  else deadline = step.warmupS + step.durationS + Math.max(60, Math.ceil(step.durationS * 0.5));
  return Math.min(MAX_EXECUTION_TIMEOUT_S, deadline + 600);
}

/** SSM Comment (at most 100 characters) that finds a job's command again on retry. */
export function jobComment(runId: string, jobId: string): string {
  const key = createHash('sha256').update(`${runId}\n${jobId}`).digest('hex').slice(0, 16);
  return `ab ${key} ${jobId}`.slice(0, 100);
}

/** Never let a secret into the lake or a log line through an error detail. */
function redact(text: string): string {
  return text.replace(/(password[^=\s:]*[=:]\s*)\S+/gi, '$1***').replace(/("password"\s*:\s*)"[^"]*"/gi, '$1"***"');
}

export class AwsBackend implements Backend {
  readonly kind = 'aws' as const;
  readonly lake: S3LakeStore;
  readonly metricsPublishDelayS: number;
  private readonly config: AwsBackendConfig;
  private readonly clients: AwsClients;
  private readonly now: () => Date;
  private readonly tags: ReturnType<typeof tagKeys>;

  constructor(options: AwsBackendOptions) {
    this.config = options.config;
    this.metricsPublishDelayS = options.config.metricsPublishDelayS;
    this.clients = options.clients;
    this.now = options.now ?? (() => new Date());
    this.lake = new S3LakeStore(options.clients.s3, options.config.bucket, options.config.lakePrefix);
    this.tags = tagKeys(options.config.tagKeyPrefix);
  }

  // ------------------------------------------------------------------ provisioning

  /** The AZ name a cell's cluster and clients go to: the variant's letter, or the first configured AZ. */
  azFor(run: RunContext, cell: CellPlan): string {
    const configured = Object.keys(this.config.subnetIdsByAz).sort();
    const az = variantAz(run.region, cell.variant, this.config.subnetIdsByAz);
    if (az === undefined) throw new UnsupportedOnBackendError('no subnets are configured (subnetIdsByAz is empty)');
    if (!(az in this.config.subnetIdsByAz)) {
      throw new UnsupportedOnBackendError(`variant "${cell.variant.name}": AZ ${az} has no configured subnet (configured: ${configured.join(', ') || 'none'})`);
    }
    return az;
  }

  private cellTagList(run: RunContext, cell: CellPlan, extra: Record<string, string> = {}): Tag[] {
    return cellTags(this.config.tagKeyPrefix, run.runId, cell.cellId, expiresAt(this.now(), run.ttlHours), extra);
  }

  private async ensureParameterGroup(kind: 'cluster' | 'instance', name: string, family: string, description: string, tags: Tag[], params: Record<string, string>): Promise<void> {
    try {
      if (kind === 'cluster') {
        await this.clients.rds.send(new CreateDBClusterParameterGroupCommand({ DBClusterParameterGroupName: name, DBParameterGroupFamily: family, Description: description, Tags: tags }));
      } else {
        await this.clients.rds.send(new CreateDBParameterGroupCommand({ DBParameterGroupName: name, DBParameterGroupFamily: family, Description: description, Tags: tags }));
      }
    } catch (e) {
      // A retried ProvisionCell: the group was made by an earlier attempt; set its values again.
      if (!isAlreadyExists(e)) rethrow(e, `RDS Create ${kind} parameter group ${name}`);
    }
    for (const batch of chunk(toParameters(params), MAX_PARAMETERS_PER_MODIFY)) {
      await call(`RDS Modify ${kind} parameter group ${name}`, () =>
        kind === 'cluster'
          ? this.clients.rds.send(new ModifyDBClusterParameterGroupCommand({ DBClusterParameterGroupName: name, Parameters: batch }))
          : this.clients.rds.send(new ModifyDBParameterGroupCommand({ DBParameterGroupName: name, Parameters: batch })),
      );
    }
  }

  private async ensureCluster(run: RunContext, cell: CellPlan, names: CellNames, version: AuroraVersion): Promise<DBCluster | undefined> {
    const existing = await describeCluster(this.clients, names.clusterId);
    if (existing) return existing;
    const wf = cell.variant.writeForwarding?.enabled === true;
    try {
      const out = await this.clients.rds.send(
        new CreateDBClusterCommand({
          DBClusterIdentifier: names.clusterId,
          Engine: 'aurora-mysql',
          EngineVersion: version.engineVersion,
          MasterUsername: this.config.masterUsername,
          // Without DatabaseName an Aurora MySQL cluster starts with no database at all ("If you don't
          // provide a name for an Aurora MySQL DB cluster, Amazon RDS doesn't create a database",
          // Aurora User Guide, "Settings for Aurora DB clusters": 1-64 alphanumeric characters, not a
          // reserved word; rds service-2.json CreateDBClusterMessage.DatabaseName), and sysbench never
          // creates the one it connects to (--mysql-db, core/sysbench/command.ts).
          DatabaseName: BENCHMARK_DATABASE,
          // RDS generates the password and keeps it in Secrets Manager (MasterUserSecret.SecretArn):
          // it never passes through this code, the state data or the lake.
          ManageMasterUserPassword: true,
          DBClusterParameterGroupName: names.clusterParameterGroup,
          DBSubnetGroupName: this.config.dbSubnetGroupName,
          VpcSecurityGroupIds: [this.config.dbSecurityGroupId],
          ...(wf ? { EnableLocalWriteForwarding: true } : {}),
          StorageEncrypted: true,
          BackupRetentionPeriod: 1,
          DeletionProtection: false,
          CopyTagsToSnapshot: false,
          Tags: this.cellTagList(run, cell),
        }),
      );
      return out.DBCluster;
    } catch (e) {
      if (isAlreadyExists(e)) return describeCluster(this.clients, names.clusterId);
      return rethrow(e, `RDS CreateDBCluster ${names.clusterId}`);
    }
  }

  private async ensureInstance(run: RunContext, cell: CellPlan, id: string, role: 'writer' | 'reader', az: string, names: CellNames, hasInstanceGroup: boolean, promotionTier: number): Promise<void> {
    const pi = cell.variant.performanceInsights;
    try {
      await this.clients.rds.send(
        new CreateDBInstanceCommand({
          DBInstanceIdentifier: id,
          DBClusterIdentifier: names.clusterId,
          Engine: 'aurora-mysql',
          DBInstanceClass: cell.variant.instanceClass,
          AvailabilityZone: az,
          ...(hasInstanceGroup ? { DBParameterGroupName: names.instanceParameterGroup } : {}),
          EnablePerformanceInsights: pi,
          ...(pi ? { PerformanceInsightsRetentionPeriod: this.config.performanceInsightsRetentionDays } : {}),
          PromotionTier: promotionTier,
          PubliclyAccessible: false,
          AutoMinorVersionUpgrade: false,
          Tags: this.cellTagList(run, cell, { [this.tags.role]: role }),
        }),
      );
    } catch (e) {
      if (!isAlreadyExists(e)) rethrow(e, `RDS CreateDBInstance ${id}`);
    }
  }

  async provisionCell(run: RunContext, cell: CellPlan): Promise<CellResources> {
    const version = parseAuroraVersion(run.engineVersion);
    const names = cellNames(run.runId, cell.cellId);
    const az = this.azFor(run, cell);
    const notes: PlanNote[] = [];
    const description = `aurora-bench ${run.runId} ${cell.cellId}`.slice(0, 255);

    await this.ensureParameterGroup('cluster', names.clusterParameterGroup, version.family, description, this.cellTagList(run, cell), clusterParametersFor(cell));
    const instanceParams = instanceParametersFor(cell);
    const hasInstanceGroup = Object.keys(instanceParams).length > 0;
    if (hasInstanceGroup) {
      await this.ensureParameterGroup('instance', names.instanceParameterGroup, version.family, description, this.cellTagList(run, cell), instanceParams);
    }

    const cluster = await this.ensureCluster(run, cell, names, version);
    if (cluster?.Status !== undefined && FAILED_CLUSTER_STATUSES.has(cluster.Status)) {
      throw new UnsupportedOnBackendError(`cluster ${names.clusterId} is ${cluster.Status}`);
    }

    // The first instance created in an Aurora cluster is its writer: create it before the readers.
    const existing = new Set((await describeClusterInstances(this.clients, names.clusterId)).map((i) => i.DBInstanceIdentifier));
    const wanted: { id: string; role: 'writer' | 'reader'; tier: number }[] = [
      { id: names.writerId, role: 'writer', tier: 0 },
      ...Array.from({ length: cell.variant.readers }, (_, i) => ({ id: names.readerId(i + 1), role: 'reader' as const, tier: 1 })),
    ];
    for (const w of wanted) {
      if (!existing.has(w.id)) await this.ensureInstance(run, cell, w.id, w.role, az, names, hasInstanceGroup, w.tier);
    }

    return {
      cellId: cell.cellId,
      clusterId: names.clusterId,
      readers: [],
      clients: [],
      credentials: { user: this.config.masterUsername, secretRef: cluster?.MasterUserSecret?.SecretArn ?? '' },
      notes,
      backendState: {
        az,
        engineVersion: version.engineVersion,
        clusterParameterGroup: names.clusterParameterGroup,
        ...(hasInstanceGroup ? { instanceParameterGroup: names.instanceParameterGroup } : {}),
        writerId: names.writerId,
        readerIds: wanted.filter((w) => w.role === 'reader').map((w) => w.id).join(','),
      },
    };
  }

  async checkCellReady(_run: RunContext, cell: CellPlan, resources: CellResources): Promise<ReadyState> {
    const cluster = await describeCluster(this.clients, resources.clusterId);
    if (!cluster) throw new UnsupportedOnBackendError(`cluster ${resources.clusterId} does not exist (deleted outside the workflow?)`);
    if (cluster.Status && FAILED_CLUSTER_STATUSES.has(cluster.Status)) throw new UnsupportedOnBackendError(`cluster ${resources.clusterId} is ${cluster.Status}`);
    const instances = await describeClusterInstances(this.clients, resources.clusterId);
    const pending: string[] = [];
    if (cluster.Status !== 'available') pending.push(`cluster ${cluster.Status ?? 'unknown'}`);
    // MasterUserSecret.SecretStatus: creating | active | rotating | impaired (rds service-2.json).
    const secret = cluster.MasterUserSecret;
    if (!secret?.SecretArn) pending.push('master user secret not created yet');
    else if (secret.SecretStatus === 'impaired') throw new UnsupportedOnBackendError(`master user secret of ${resources.clusterId} is impaired`);
    else if (secret.SecretStatus !== undefined && secret.SecretStatus !== 'active') pending.push(`master user secret ${secret.SecretStatus}`);
    // LocalWriteForwardingStatus: enabled | disabled | enabling | disabling | requested (rds service-2.json).
    if (cell.variant.writeForwarding?.enabled) {
      const wf = cluster.LocalWriteForwardingStatus;
      if (wf === 'disabled' || wf === 'disabling') throw new UnsupportedOnBackendError(`local write forwarding of ${resources.clusterId} is ${wf}`);
      if (wf !== undefined && wf !== 'enabled') pending.push(`local write forwarding ${wf}`);
    }

    const expectedIds = [resources.backendState['writerId'], ...(resources.backendState['readerIds'] ?? '').split(',')].filter((x): x is string => !!x);
    const byId = new Map(instances.map((i) => [i.DBInstanceIdentifier!, i]));
    for (const id of expectedIds) {
      const inst = byId.get(id);
      if (!inst) {
        pending.push(`instance ${id} missing`);
        continue;
      }
      const status = inst.DBInstanceStatus ?? 'unknown';
      if (FAILED_INSTANCE_STATUSES.has(status)) throw new UnsupportedOnBackendError(`instance ${id} is ${status}`);
      if (status !== 'available' || !inst.Endpoint?.Address) pending.push(`instance ${id} ${status}`);
    }
    if (pending.length > 0) return { ready: false, resources, detail: pending.join('; ') };

    // Roles as the cluster reports them (a reader may have been promoted by a failover).
    const writerIds = new Set((cluster.DBClusterMembers ?? []).filter((m) => m.IsClusterWriter).map((m) => m.DBInstanceIdentifier));
    const endpoint = (inst: DBInstance, role: 'writer' | 'reader'): Endpoint => ({
      instanceId: inst.DBInstanceIdentifier!,
      role,
      host: inst.Endpoint!.Address!,
      port: inst.Endpoint!.Port ?? cluster.Port ?? 3306,
      ...(inst.AvailabilityZone ? { az: inst.AvailabilityZone } : {}),
    });
    const ours = expectedIds.map((id) => byId.get(id)!);
    const writerInst = ours.find((i) => writerIds.has(i.DBInstanceIdentifier)) ?? byId.get(resources.backendState['writerId'] ?? '');
    if (!writerInst) return { ready: false, resources, detail: 'no writer instance yet' };
    const readers = ours.filter((i) => i !== writerInst).sort((a, b) => a.DBInstanceIdentifier!.localeCompare(b.DBInstanceIdentifier!, 'en', { numeric: true }));
    const dbi: Record<string, string> = {};
    for (const i of ours) if (i.DbiResourceId) dbi[`dbi:${i.DBInstanceIdentifier}`] = i.DbiResourceId;
    const ready: CellResources = {
      ...resources,
      writer: endpoint(writerInst, 'writer'),
      readers: readers.map((i) => endpoint(i, 'reader')),
      credentials: { user: cluster.MasterUsername ?? resources.credentials.user, secretRef: secret!.SecretArn! },
      backendState: { ...resources.backendState, ...dbi, ...(cluster.EngineVersion ? { engineVersion: cluster.EngineVersion } : {}) },
    };
    return { ready: true, resources: ready, detail: `cluster ${resources.clusterId} available with ${ours.length} instance(s)` };
  }

  // ------------------------------------------------------------------ clients

  /** x86_64 or arm64 for an EC2 instance type (DescribeInstanceTypes ProcessorInfo.SupportedArchitectures). */
  async architectureOf(instanceType: string): Promise<ClientArchitecture> {
    let archs: string[] = [];
    try {
      const out = await this.clients.ec2.send(new DescribeInstanceTypesCommand({ InstanceTypes: [instanceType as never] }));
      archs = out.InstanceTypes?.[0]?.ProcessorInfo?.SupportedArchitectures ?? [];
    } catch (e) {
      if (/InvalidInstanceType/.test(errorCode(e))) throw new UnsupportedOnBackendError(`EC2 instance type ${instanceType} does not exist in this region`);
      rethrow(e, `EC2 DescribeInstanceTypes ${instanceType}`);
    }
    if (archs.includes('arm64')) return 'arm64';
    if (archs.includes('x86_64')) return 'x86_64';
    throw new UnsupportedOnBackendError(`EC2 instance type ${instanceType} is not x86_64 or arm64 (reported: ${archs.join(', ') || 'nothing'})`);
  }

  private cellClientFilters(run: RunContext, cell: CellPlan) {
    return [
      { Name: `tag:${this.tags.runId}`, Values: [run.runId] },
      { Name: `tag:${this.tags.cellId}`, Values: [cell.cellId] },
      { Name: 'instance-state-name', Values: ['pending', 'running'] },
    ];
  }

  async startClients(run: RunContext, cell: CellPlan, resources: CellResources): Promise<CellResources> {
    const names = cellNames(run.runId, cell.cellId);
    const wanted = cell.variant.clients.count;
    const az = resources.writer?.az ?? resources.backendState['az'] ?? this.azFor(run, cell);
    const subnetId = this.config.subnetIdsByAz[az];
    if (!subnetId) throw new UnsupportedOnBackendError(`no configured subnet in ${az} for the clients of ${cell.cellId}`);
    const instanceType = cell.variant.clients.instanceType;
    const arch = await this.architectureOf(instanceType);
    const launchTemplateId = this.config.launchTemplateIds[arch];
    if (!launchTemplateId) throw new UnsupportedOnBackendError(`no launch template for ${arch} clients (${instanceType}) is configured`);

    // Found by tags first: a retried call (or EC2's ClientToken on AWS) must not double the fleet.
    const live = await findLiveInstances(this.clients, this.cellClientFilters(run, cell));
    const missing = wanted - live.length;
    if (missing > 0) {
      const tags = this.cellTagList(run, cell, { Name: names.base + '-client', [this.tags.role]: 'client' });
      const out = await call(`EC2 RunInstances ${missing} x ${instanceType}`, () =>
        this.clients.ec2.send(
          new RunInstancesCommand({
            MinCount: missing,
            MaxCount: missing,
            // Deterministic per (run, cell, how many already exist): the same retry gets the same answer.
            ClientToken: names.clientToken(live.length),
            LaunchTemplate: { LaunchTemplateId: launchTemplateId, Version: this.config.launchTemplateVersion },
            InstanceType: instanceType as never,
            SubnetId: subnetId,
            SecurityGroupIds: [this.config.clientSecurityGroupId],
            IamInstanceProfile: { Arn: this.config.clientInstanceProfileArn },
            // The client's user data shuts it down at the run's expires-at (lib/client-user-data.ts);
            // terminate (also the launch template's setting) makes that the end of a client left behind.
            InstanceInitiatedShutdownBehavior: 'terminate',
            TagSpecifications: [
              { ResourceType: 'instance', Tags: tags },
              { ResourceType: 'volume', Tags: tags },
            ],
          }),
        ),
      );
      for (const i of out.Instances ?? []) {
        if (i.InstanceId) live.push({ id: i.InstanceId, state: i.State?.Name ?? 'pending', ...(i.Placement?.AvailabilityZone ? { az: i.Placement.AvailabilityZone } : {}), ...(i.LaunchTime ? { launchTime: i.LaunchTime } : {}) });
      }
    }
    // Stable client order: launch time, then id.
    const ordered = [...live].sort((a, b) => (a.launchTime?.getTime() ?? 0) - (b.launchTime?.getTime() ?? 0) || a.id.localeCompare(b.id)).slice(0, Math.max(wanted, 0));
    const clients: ClientRef[] = ordered.map((i) => ({ clientId: i.id, az: i.az ?? az }));
    return { ...resources, clients, backendState: { ...resources.backendState, clientArch: arch, clientInstanceType: instanceType } };
  }

  async checkClientsReady(_run: RunContext, _cell: CellPlan, resources: CellResources): Promise<ReadyState> {
    const ids = resources.clients.map((c) => c.clientId);
    if (ids.length === 0) return { ready: false, resources, detail: 'no clients started' };
    const instances: Instance[] = [];
    try {
      let token: string | undefined;
      do {
        const out = await this.clients.ec2.send(new DescribeInstancesCommand({ InstanceIds: ids, ...(token ? { NextToken: token } : {}) }));
        for (const r of out.Reservations ?? []) instances.push(...(r.Instances ?? []));
        token = out.NextToken;
      } while (token);
    } catch (e) {
      // Just launched instances can be briefly unknown to DescribeInstances (eventual consistency).
      if (isNotFound(e) || /InvalidInstanceID/.test(errorCode(e))) return { ready: false, resources, detail: 'clients not visible yet' };
      rethrow(e, 'EC2 DescribeInstances (clients)');
    }
    const pending: string[] = [];
    for (const id of ids) {
      const inst = instances.find((i) => i.InstanceId === id);
      const state = inst?.State?.Name ?? 'unknown';
      if (state === 'terminated' || state === 'shutting-down' || state === 'stopped' || state === 'stopping') {
        throw new UnsupportedOnBackendError(`client ${id} is ${state}${inst?.StateReason?.Message ? `: ${inst.StateReason.Message}` : ''}`);
      }
      if (state !== 'running') pending.push(`${id} ${state}`);
    }
    // SSM registration: the agent has to be Online before Run Command can reach the client.
    const online = new Set<string>();
    let token: string | undefined;
    do {
      const out = await call('SSM DescribeInstanceInformation', () =>
        this.clients.ssm.send(new DescribeInstanceInformationCommand({ Filters: [{ Key: 'InstanceIds', Values: ids }], ...(token ? { NextToken: token } : {}) })),
      );
      for (const info of out.InstanceInformationList ?? []) if (info.InstanceId && info.PingStatus === 'Online') online.add(info.InstanceId);
      token = out.NextToken;
    } while (token);
    for (const id of ids) if (!online.has(id) && !pending.some((p) => p.startsWith(id))) pending.push(`${id} not registered with SSM yet`);
    // "sysbench works": the marker client/client-ready.sh uploads at the end of the user data
    // (runner-command.ts says why an S3 object). Read for every client, also those still booting:
    // a failed install stops the cell now, with its reason, not at the readiness deadline.
    const versions = new Set<string>();
    for (const id of ids) {
      const marker = await this.readyMarker(id);
      if (marker === undefined) {
        if (!pending.some((p) => p.startsWith(id))) pending.push(`${id} installing sysbench (no ready marker yet)`);
      } else if (!marker.ready) {
        throw new UnsupportedOnBackendError(`client ${id} could not prove that sysbench works: ${redact(marker.reason ?? 'no reason given').slice(0, 1500)}`);
      } else if (marker.sysbench) {
        versions.add(marker.sysbench);
      }
    }
    if (pending.length > 0) return { ready: false, resources, detail: pending.join('; ') };
    return { ready: true, resources, detail: `${ids.length} client(s) running, online in SSM, sysbench proven (${[...versions].join('; ') || 'version not reported'})` };
  }

  /** The ready marker of a client (clients/<instance-id>/ready.json in the stack's bucket), or undefined while there is none. */
  private async readyMarker(instanceId: string): Promise<ClientReadyMarker | undefined> {
    const key = clientReadyKey(instanceId);
    let text: string;
    try {
      const out = await this.clients.s3.send(new GetObjectCommand({ Bucket: this.config.bucket, Key: key }));
      text = (await out.Body?.transformToString('utf8')) ?? '';
    } catch (e) {
      // GetObject: NoSuchKey; a 404 without a body (HEAD-like answers) surfaces as NotFound. NoSuchBucket stays an error.
      if (/^(NoSuchKey|NotFound)$/.test(errorCode(e))) return undefined;
      return rethrow(e, `S3 GetObject s3://${this.config.bucket}/${key}`);
    }
    try {
      const parsed = JSON.parse(text) as Partial<ClientReadyMarker>;
      if (typeof parsed.ready !== 'boolean') throw new Error('no boolean "ready"');
      return parsed as ClientReadyMarker;
    } catch (e) {
      throw new UnsupportedOnBackendError(`ready marker s3://${this.config.bucket}/${key} of client ${instanceId} is not the JSON client-ready.sh writes (${(e as Error).message})`);
    }
  }

  // ------------------------------------------------------------------ jobs

  private async findCommand(clientId: string, comment: string): Promise<{ commandId: string; requested?: Date } | undefined> {
    let token: string | undefined;
    do {
      const out = await call(`SSM ListCommands ${clientId}`, () => this.clients.ssm.send(new ListCommandsCommand({ InstanceId: clientId, ...(token ? { NextToken: token } : {}) })));
      const found = (out.Commands ?? []).find((c) => c.Comment === comment && c.CommandId);
      if (found) return { commandId: found.CommandId!, ...(found.RequestedDateTime ? { requested: found.RequestedDateTime } : {}) };
      token = out.NextToken;
    } while (token);
    return undefined;
  }

  async startJobs(run: RunContext, cell: CellPlan, resources: CellResources, jobs: readonly RunnerJob[]): Promise<JobHandle[]> {
    if (!resources.credentials.secretRef) throw new UnsupportedOnBackendError(`cell ${cell.cellId} has no master user secret yet`);
    const handles: JobHandle[] = [];
    for (const job of jobs) {
      const step = stepOfJob(cell, job.jobId);
      const comment = jobComment(run.runId, job.jobId);
      // A retried StartJobs must not start a second runner for the same job.
      const previous = await this.findCommand(job.clientId, comment);
      if (previous) {
        handles.push({ jobId: job.jobId, clientId: job.clientId, phase: job.phase, outputPrefix: job.outputPrefix, ref: previous.commandId, startedAt: (previous.requested ?? this.now()).toISOString() });
        continue;
      }
      const scriptUri = job.workload.endsWith('.lua') ? this.lake.uri(lakeKeys.script(run.runId, job.workload)).replace(/[^/]+$/, '') : undefined;
      const argv = runnerArgs(job, {
        user: resources.credentials.user,
        passwordSecret: resources.credentials.secretRef,
        outLocation: this.lake.uri(job.outputPrefix),
        ...(scriptUri ? { scriptUri } : {}),
      });
      const commands = ssmRunnerCommands(this.config.region, this.config.runnerS3Uri, argv);
      const out = await call(`SSM SendCommand ${job.jobId}`, () =>
        this.clients.ssm.send(
          new SendCommandCommand({
            DocumentName: this.config.ssmDocumentName,
            InstanceIds: [job.clientId],
            Parameters: { commands, executionTimeout: [String(executionTimeoutS(cell, step, job.phase))] },
            TimeoutSeconds: DELIVERY_TIMEOUT_S,
            Comment: comment,
            OutputS3BucketName: this.config.bucket,
            OutputS3KeyPrefix: `${this.config.ssmOutputPrefix}${run.runId}/${job.jobId}`.slice(0, 500),
          }),
        ),
      );
      const commandId = out.Command?.CommandId;
      if (!commandId) throw new Error(`SSM SendCommand for ${job.jobId} returned no CommandId`);
      handles.push({ jobId: job.jobId, clientId: job.clientId, phase: job.phase, outputPrefix: job.outputPrefix, ref: commandId, startedAt: this.now().toISOString() });
    }
    return handles;
  }

  async checkJobs(_run: RunContext, handles: readonly JobHandle[]): Promise<JobsState> {
    const jobs: JobsState['jobs'][number][] = [];
    for (const h of handles) {
      let inv: GetCommandInvocationCommandOutput | undefined;
      try {
        inv = await this.clients.ssm.send(new GetCommandInvocationCommand({ CommandId: h.ref, InstanceId: h.clientId }));
      } catch (e) {
        if (/InvocationDoesNotExist/.test(errorCode(e))) {
          // Right after SendCommand the invocation may not be visible yet.
          const ageS = (this.now().getTime() - Date.parse(h.startedAt)) / 1000;
          jobs.push(ageS < 300 ? { jobId: h.jobId, state: 'running' } : { jobId: h.jobId, state: 'lost', detail: `SSM has no invocation of command ${h.ref} on ${h.clientId}` });
          continue;
        }
        rethrow(e, `SSM GetCommandInvocation ${h.ref}`);
      }
      jobs.push(mapInvocation(h, inv!));
    }
    const running = jobs.filter((j) => j.state === 'running').length;
    return { done: running === 0, running, jobs };
  }

  async stopJobs(_run: RunContext, handles: readonly JobHandle[]): Promise<void> {
    for (const h of handles) {
      try {
        await this.clients.ssm.send(new CancelCommandCommand({ CommandId: h.ref, InstanceIds: [h.clientId] }));
      } catch (e) {
        // Already finished or unknown: nothing to stop.
        if (isNotFound(e) || /InvalidCommandId|InvalidInstanceId|DoesNotExist/.test(errorCode(e))) continue;
        rethrow(e, `SSM CancelCommand ${h.ref}`);
      }
    }
  }

  // ------------------------------------------------------------------ metrics

  async collectServerMetrics(run: RunContext, cell: CellPlan, resources: CellResources, window: MetricsWindow): Promise<ServerMetricsCollection> {
    const endpoints = [...(resources.writer ? [resources.writer] : []), ...resources.readers];
    if (endpoints.length === 0) return { rows: [], windows: [] };
    const { start, end } = cloudWatchWindow(window.start, window.end);
    const base = { run_id: run.runId, cell_id: cell.cellId, variant: cell.variant.name, step_id: window.stepId, dt: run.dt };
    const wf = cell.variant.writeForwarding?.enabled === true;

    const wantedSeries: { instance: Endpoint; metric: ServerMetricName }[] = [];
    for (const ep of endpoints) {
      const metrics = [...BASE_METRICS, ...(ep.role === 'reader' ? (['AuroraReplicaLag'] as const) : []), ...(wf ? (ep.role === 'writer' ? WRITER_FORWARDING_METRICS : READER_FORWARDING_METRICS) : [])];
      for (const metric of metrics) wantedSeries.push({ instance: ep, metric });
    }
    const rows: ServerMetricRow[] = [];
    // GetMetricData's StartTime is inclusive and EndTime exclusive, both on whole minutes here: one
    // datapoint per minute per series is what a fully published window holds.
    const expected = windowDatapoints(start, end, CLOUDWATCH_PERIOD_S);
    const received = new Map<string, number>();
    for (const batch of chunk(wantedSeries.map((s, i) => ({ ...s, id: `m${i}` })), MAX_METRIC_QUERIES)) {
      const queries: MetricDataQuery[] = batch.map((s) => ({
        Id: s.id,
        MetricStat: {
          Metric: { Namespace: 'AWS/RDS', MetricName: s.metric, Dimensions: [{ Name: 'DBInstanceIdentifier', Value: s.instance.instanceId }] },
          Period: CLOUDWATCH_PERIOD_S,
          Stat: 'Average',
        },
        ReturnData: true,
      }));
      const results: MetricDataResult[] = [];
      let token: string | undefined;
      do {
        const out = await call('CloudWatch GetMetricData', () =>
          this.clients.cloudwatch.send(new GetMetricDataCommand({ MetricDataQueries: queries, StartTime: start, EndTime: end, ScanBy: 'TimestampAscending', ...(token ? { NextToken: token } : {}) })),
        );
        results.push(...(out.MetricDataResults ?? []));
        token = out.NextToken;
      } while (token);
      for (const r of results) {
        const series = batch.find((s) => s.id === r.Id);
        if (!series) continue;
        (r.Timestamps ?? []).forEach((ts, k) => {
          const value = r.Values?.[k];
          if (value === undefined || !Number.isFinite(value)) return;
          rows.push({ ...base, instance_id: series.instance.instanceId, role: series.instance.role, metric: series.metric, ts: new Date(ts).toISOString(), value, unit: SERVER_METRICS[series.metric], source: 'cloudwatch' });
          received.set(series.id, (received.get(series.id) ?? 0) + 1);
        });
      }
    }
    const windows: MetricWindowCount[] = wantedSeries.map((s, i) => ({
      instanceId: s.instance.instanceId,
      role: s.instance.role,
      metric: s.metric,
      source: 'cloudwatch',
      start: start.toISOString(),
      end: end.toISOString(),
      periodS: CLOUDWATCH_PERIOD_S,
      expected,
      received: received.get(`m${i}`) ?? 0,
    }));

    if (cell.variant.performanceInsights) {
      const pi = await this.collectPerformanceInsights(resources, endpoints, start, end, base);
      rows.push(...pi.rows);
      windows.push(...pi.windows);
    }
    rows.sort((a, b) => a.instance_id.localeCompare(b.instance_id) || a.metric.localeCompare(b.metric) || a.ts.localeCompare(b.ts));
    return { rows, windows };
  }

  /**
   * Performance Insights GetResourceMetrics per instance (Identifier = DbiResourceId): db.load.avg
   * grouped by db.wait_event (the response also carries the ungrouped total) and
   * os.cpuUtilization.total.avg (RDS User Guide, "Performance Insights counter metrics").
   * Rows: metric "db.load.avg" (total) and "db.load.avg:<wait event name>", unit "Sessions" (AAS).
   * Completeness is counted for the two totals: a wait event is absent from a period it did not occur in.
   */
  private async collectPerformanceInsights(
    resources: CellResources,
    endpoints: readonly Endpoint[],
    start: Date,
    end: Date,
    base: Pick<ServerMetricRow, 'run_id' | 'cell_id' | 'variant' | 'step_id' | 'dt'>,
  ): Promise<{ rows: ServerMetricRow[]; windows: MetricWindowCount[] }> {
    const rows: ServerMetricRow[] = [];
    const windows: MetricWindowCount[] = [];
    const expected = windowDatapoints(start, end, this.config.piPeriodS);
    let dbiIds = new Map<string, string | undefined>(endpoints.map((ep) => [ep.instanceId, resources.backendState[`dbi:${ep.instanceId}`]]));
    if ([...dbiIds.values()].some((v) => !v)) {
      const instances = await describeClusterInstances(this.clients, resources.clusterId);
      dbiIds = new Map(endpoints.map((ep) => [ep.instanceId, instances.find((i) => i.DBInstanceIdentifier === ep.instanceId)?.DbiResourceId]));
    }
    for (const ep of endpoints) {
      const received = new Map<string, number>(PI_TOTAL_METRICS.map((m) => [m, 0]));
      const identifier = dbiIds.get(ep.instanceId);
      if (identifier) {
        let token: string | undefined;
        do {
          const out = await call(`PI GetResourceMetrics ${ep.instanceId}`, () =>
            this.clients.pi.send(
              new GetResourceMetricsCommand({
                ServiceType: 'RDS',
                Identifier: identifier,
                StartTime: start,
                EndTime: end,
                PeriodInSeconds: this.config.piPeriodS,
                MetricQueries: [{ Metric: 'db.load.avg', GroupBy: { Group: 'db.wait_event', Limit: PI_WAIT_EVENT_LIMIT } }, { Metric: 'os.cpuUtilization.total.avg' }],
                ...(token ? { NextToken: token } : {}),
              }),
            ),
          );
          for (const m of out.MetricList ?? []) {
            const metricName = m.Key?.Metric;
            if (!metricName) continue;
            const waitEvent = m.Key?.Dimensions?.['db.wait_event.name'];
            const metric = waitEvent ? `${metricName}:${waitEvent}` : metricName;
            const unit = metricName.startsWith('db.load') ? 'Sessions' : metricName.startsWith('os.cpuUtilization') ? 'Percent' : 'None';
            for (const p of m.DataPoints ?? []) {
              if (p.Timestamp === undefined || p.Value === undefined || !Number.isFinite(p.Value)) continue;
              rows.push({ ...base, instance_id: ep.instanceId, role: ep.role, metric, ts: new Date(p.Timestamp).toISOString(), value: p.Value, unit, source: 'pi' });
              if (received.has(metric)) received.set(metric, received.get(metric)! + 1);
            }
          }
          token = out.NextToken;
        } while (token);
      }
      for (const metric of PI_TOTAL_METRICS) {
        windows.push({ instanceId: ep.instanceId, role: ep.role, metric, source: 'pi', start: start.toISOString(), end: end.toISOString(), periodS: this.config.piPeriodS, expected, received: received.get(metric)! });
      }
    }
    return { rows, windows };
  }

  // ------------------------------------------------------------------ teardown

  async teardownCell(run: RunContext, cell: CellPlan, resources: CellResources | undefined): Promise<TeardownReport> {
    const names = cellNames(run.runId, cell.cellId);
    // Clients from the state data plus any the tags find (a StartClients that failed after RunInstances).
    const tagged = await findLiveInstances(this.clients, [
      { Name: `tag:${this.tags.runId}`, Values: [run.runId] },
      { Name: `tag:${this.tags.cellId}`, Values: [cell.cellId] },
      { Name: 'instance-state-name', Values: ['pending', 'running', 'stopping', 'stopped'] },
    ]);
    const clientIds = [...(resources?.clients.map((c) => c.clientId) ?? []), ...tagged.map((i) => i.id)];
    const report = await deleteCellResources(
      this.clients,
      {
        clusterId: resources?.clusterId ?? names.clusterId,
        clusterParameterGroups: [names.clusterParameterGroup],
        instanceParameterGroups: [names.instanceParameterGroup],
        clientInstanceIds: clientIds,
      },
      (i, cluster) => isWriterInstance(i, cluster, names.writerId),
    );
    if (report.pending.length > 0) {
      throw new ResourceStillInUseError(`teardown of cell ${cell.cellId} is waiting for: ${report.pending.join('; ')}`);
    }
    // A never-created instance parameter group is "already gone": report only what was there.
    return { deleted: report.deleted, alreadyGone: report.alreadyGone };
  }
}

/**
 * The GetMetricData time range for a step: only the whole minutes inside it, so a partly idle first
 * or last minute (warm-up, ramp-down, the minutes around the step) does not pull the averages down —
 * S4's CPU- and network-bound verdicts compare them with 90% thresholds. A step shorter than two
 * minutes keeps its enclosing minutes, the only data there is. Minutes CloudWatch has not published
 * yet are absent: the window's counts say so (MetricWindowCount), and the workflow collects it again
 * once metricsPublishDelayS has passed.
 */
export function cloudWatchWindow(startIso: string, endIso: string): { start: Date; end: Date } {
  const minute = 60_000;
  const startMs = Date.parse(startIso);
  const endMs = Date.parse(endIso);
  const inner = { start: Math.ceil(startMs / minute) * minute, end: Math.floor(endMs / minute) * minute };
  if (inner.end - inner.start >= minute) return { start: new Date(inner.start), end: new Date(inner.end) };
  return { start: new Date(Math.floor(startMs / minute) * minute), end: new Date(Math.ceil(endMs / minute) * minute) };
}

export function isWriterInstance(i: DBInstance, cluster: DBCluster | undefined, writerId: string): boolean {
  const member = cluster?.DBClusterMembers?.find((m) => m.DBInstanceIdentifier === i.DBInstanceIdentifier);
  if (member?.IsClusterWriter !== undefined) return member.IsClusterWriter;
  return i.DBInstanceIdentifier === writerId;
}

/**
 * SSM invocation status -> job state. Status: Pending | InProgress | Delayed | Success | Cancelled |
 * TimedOut | Failed | Cancelling (ssm service-2.json CommandInvocationStatus).
 */
export function mapInvocation(h: JobHandle, inv: Pick<GetCommandInvocationCommandOutput, 'Status' | 'StatusDetails' | 'ResponseCode' | 'StandardErrorContent'>): JobsState['jobs'][number] {
  switch (inv.Status) {
    case 'Pending':
    case 'InProgress':
    case 'Delayed':
    case 'Cancelling':
      return { jobId: h.jobId, state: 'running' };
    case 'Success':
      return { jobId: h.jobId, state: 'exited' };
    default: {
      // Failed: the runner exited non-zero (its own usage/setup error: sysbench's exit code would be in
      // result.json); TimedOut / Cancelled: SSM stopped it. Either way its output cannot be trusted.
      const stderr = (inv.StandardErrorContent ?? '').trim().split('\n').slice(-3).join(' | ').slice(-300);
      const code = inv.ResponseCode !== undefined && inv.ResponseCode >= 0 ? ` (exit code ${inv.ResponseCode})` : '';
      return { jobId: h.jobId, state: 'lost', detail: redact(`SSM ${inv.StatusDetails ?? inv.Status ?? 'unknown'}${code}${stderr ? `: ${stderr}` : ''}`) };
    }
  }
}
