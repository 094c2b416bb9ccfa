/**
 * A cell's Aurora cluster: its parameter groups, the cluster, its writer and readers, and whether all of it is ready.
 * Every resource has a deterministic name and the run, cell and expiry tags, so each call is safe to retry.
 * API fields are named as in botocore rds/2014-10-31.
 */
import {
  CreateDBClusterCommand,
  CreateDBClusterParameterGroupCommand,
  CreateDBInstanceCommand,
  CreateDBParameterGroupCommand,
  DescribeDBClusterParametersCommand,
  DescribeDBParametersCommand,
  ModifyDBClusterParameterGroupCommand,
  ModifyDBParameterGroupCommand,
  RebootDBInstanceCommand,
  type DBCluster,
  type DBInstance,
  type Parameter,
} from '@aws-sdk/client-rds';
import {
  UnsupportedOnBackendError,
  type CellResources,
  type Endpoint,
  type ReadyState,
  type RunContext,
} from '../../backend';
import { writeForwardingParameters } from '../../experiment/write-forwarding';
import type { CellPlan, PlanNote } from '../../plan/types';
import { BENCHMARK_DATABASE } from '../../plan/sysbench-args';
import { call, isAlreadyExists, rethrow } from './aws-errors';
import { chunk } from './batches';
import type { AwsClients } from './clients';
import type { AwsBackendConfig } from './config';
import { awsEngineVersion, ENGINES, parameterGroupFamily, type EngineRef } from '../../aurora/engines';
import { READER_PROMOTION_TIER, STORAGE_TYPES } from '../../aurora/aurora-configurations';
import { cellNames, cellTagger, tagKeys, type CellNames, type Tag } from './names';
import { cellAz } from './placement';
import { describeCluster, describeClusterInstances } from './teardown';
import { ConfigurationNotInEffectError } from '../../workflow/errors';

/**
 * Seconds between the last change to a cell's parameter groups and the cluster that uses them.
 * RDS asks to wait at least 5 minutes before a new cluster or instance uses a new or modified group.
 * See botocore rds, CreateDBClusterParameterGroup and ModifyDBParameterGroup.
 */
const PARAMETER_GROUP_SETTLE_S = 300;

/**
 * ParameterApplyStatus and DBClusterParameterGroupStatus, as botocore rds documents them.
 * `pending-reboot` waits for a reboot, and `failed-to-apply` is an invalid state.
 */
const IN_SYNC = 'in-sync';
const PENDING_REBOOT = 'pending-reboot';
const FAILED_TO_APPLY = 'failed-to-apply';

/**
 * The RDS API Reference allows at most 20 parameters in one ModifyDB(Cluster)ParameterGroup request.
 */
export const MAX_PARAMETERS_PER_MODIFY = 20;

/**
 * Statuses from which a cell will never become ready.
 * See AWS, RDS User Guide, "Viewing DB cluster/instance status".
 */
const FAILED_CLUSTER_STATUSES = new Set([
  'failed',
  'inaccessible-encryption-credentials',
  'inaccessible-encryption-credentials-recoverable',
  'incompatible-parameters',
  'incompatible-network',
  'incompatible-restore',
  'stopped',
  'deleting',
]);
export const FAILED_INSTANCE_STATUSES: ReadonlySet<string> = new Set([
  'failed',
  'incompatible-parameters',
  'incompatible-network',
  'incompatible-option-group',
  'incompatible-restore',
  'inaccessible-encryption-credentials',
  'inaccessible-encryption-credentials-recoverable',
  'restore-error',
  'storage-full',
  'stopped',
  'deleting',
  'insufficient-capacity',
]);

function paramValue(v: string | number | boolean): string {
  // MySQL boolean parameters take 1/0 in RDS parameter groups.
  return typeof v === 'boolean' ? (v ? '1' : '0') : String(v);
}

/**
 * The engine a cell provisions. A plan made before engines were a dimension gets Aurora MySQL at the run's version.
 */
export function cellEngineOf(run: Pick<RunContext, 'engineVersion'>, cell: Pick<CellPlan, 'variant'>): EngineRef {
  return cell.variant.engine ?? { kind: 'aurora-mysql', version: run.engineVersion };
}

/** The cluster parameters a variant asks for, write-forwarding settings included. */
export function clusterParametersFor(cell: CellPlan): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [k, v] of Object.entries(cell.variant.clusterParameters)) params[k] = paramValue(v);
  // These are cluster-level parameters of Aurora MySQL. Aurora PostgreSQL's is in write-forwarding.ts.
  // See AWS, Aurora User Guide, "Configuration parameters for write forwarding".
  return {
    ...params,
    ...writeForwardingParameters(cell.variant.writeForwarding, cell.variant.engine?.kind ?? 'aurora-mysql'),
  };
}

/** The instance-level parameters a variant asks for, as RDS takes them. */
export function instanceParametersFor(cell: CellPlan): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [k, v] of Object.entries(cell.variant.instanceParameters)) params[k] = paramValue(v);
  return params;
}

export function toParameters(params: Readonly<Record<string, string>>): Parameter[] {
  // `pending-reboot` is valid for static and dynamic parameters.
  // The instances are created with the group, so no reboot is needed.
  return Object.entries(params).map(([ParameterName, ParameterValue]) => ({
    ParameterName,
    ParameterValue,
    ApplyMethod: 'pending-reboot',
  }));
}

export interface AuroraClustersOptions {
  readonly clients: Pick<AwsClients, 'rds'>;
  readonly config: AwsBackendConfig;
  readonly now: () => Date;
}

export class AuroraClusters {
  private readonly config: AwsBackendConfig;
  private readonly clients: Pick<AwsClients, 'rds'>;
  private readonly tags: ReturnType<typeof tagKeys>;
  private readonly cellTagList: ReturnType<typeof cellTagger>;
  private readonly now: () => Date;

  constructor(options: AuroraClustersOptions) {
    this.config = options.config;
    this.clients = options.clients;
    this.now = options.now;
    this.tags = tagKeys(options.config.tagKeyPrefix);
    this.cellTagList = cellTagger(options.config.tagKeyPrefix, options.now);
  }

  private async ensureParameterGroup(
    kind: 'cluster' | 'instance',
    name: string,
    family: string,
    description: string,
    tags: Tag[],
    params: Record<string, string>,
  ): Promise<void> {
    try {
      if (kind === 'cluster') {
        await this.clients.rds.send(
          new CreateDBClusterParameterGroupCommand({
            DBClusterParameterGroupName: name,
            DBParameterGroupFamily: family,
            Description: description,
            Tags: tags,
          }),
        );
      } else {
        await this.clients.rds.send(
          new CreateDBParameterGroupCommand({
            DBParameterGroupName: name,
            DBParameterGroupFamily: family,
            Description: description,
            Tags: tags,
          }),
        );
      }
    } catch (e) {
      // A retried ProvisionCell. An earlier attempt made the group, so its values are set again.
      if (!isAlreadyExists(e)) rethrow(e, `RDS Create ${kind} parameter group ${name}`);
    }
    for (const batch of chunk(toParameters(params), MAX_PARAMETERS_PER_MODIFY)) {
      await call(`RDS Modify ${kind} parameter group ${name}`, () =>
        kind === 'cluster'
          ? this.clients.rds.send(
              new ModifyDBClusterParameterGroupCommand({ DBClusterParameterGroupName: name, Parameters: batch }),
            )
          : this.clients.rds.send(new ModifyDBParameterGroupCommand({ DBParameterGroupName: name, Parameters: batch })),
      );
    }
  }

  private async ensureCluster(
    run: RunContext,
    cell: CellPlan,
    names: CellNames,
    engine: EngineRef,
  ): Promise<DBCluster | undefined> {
    const existing = await describeCluster(this.clients, names.clusterId);
    if (existing) return existing;
    const wf = cell.variant.writeForwarding?.enabled === true;
    const { serverless, storage } = cell.variant;
    try {
      const out = await this.clients.rds.send(
        new CreateDBClusterCommand({
          DBClusterIdentifier: names.clusterId,
          Engine: ENGINES[engine.kind].rdsEngine,
          EngineVersion: awsEngineVersion(engine),
          MasterUsername: this.config.masterUsername,
          // Without DatabaseName, an Aurora MySQL cluster starts with no database at all.
          // And sysbench never creates the one it connects to.
          // See AWS, Aurora User Guide, "Settings for Aurora DB clusters".
          // Aurora PostgreSQL creates this one next to "postgres".
          DatabaseName: BENCHMARK_DATABASE,
          // RDS generates the password and keeps it in Secrets Manager.
          // It never passes through this code, the state data or the lake.
          ManageMasterUserPassword: true,
          DBClusterParameterGroupName: names.clusterParameterGroup,
          DBSubnetGroupName: this.config.dbSubnetGroupName,
          VpcSecurityGroupIds: [this.config.dbSecurityGroupId],
          // Valid for both Aurora engines. Validation checks the versions.
          ...(wf ? { EnableLocalWriteForwarding: true } : {}),
          // A cluster needs this scaling configuration before it can add db.serverless instances.
          // See AWS, Aurora User Guide, "Requirements and limitations for Aurora Serverless v2".
          // The capacities are ACUs per instance. Validation checks the range.
          ...(serverless
            ? { ServerlessV2ScalingConfiguration: { MinCapacity: serverless.minAcu, MaxCapacity: serverless.maxAcu } }
            : {}),
          // Sent only when the spec chose one. RDS defaults to "aurora".
          ...(storage !== undefined ? { StorageType: STORAGE_TYPES[storage] } : {}),
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

  private async ensureInstance(
    run: RunContext,
    cell: CellPlan,
    id: string,
    role: 'writer' | 'reader',
    az: string,
    names: CellNames,
    hasInstanceGroup: boolean,
    promotionTier: number,
    engine: EngineRef,
  ): Promise<void> {
    const pi = cell.variant.performanceInsights;
    try {
      await this.clients.rds.send(
        new CreateDBInstanceCommand({
          DBInstanceIdentifier: id,
          DBClusterIdentifier: names.clusterId,
          // An Aurora instance takes the cluster's engine.
          Engine: ENGINES[engine.kind].rdsEngine,
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
    const engine = cellEngineOf(run, cell);
    const family = parameterGroupFamily(engine);
    if (ENGINES[engine.kind].topology !== 'cluster')
      throw new UnsupportedOnBackendError(`${engine.kind} is not an Aurora cluster engine`);
    if (family === undefined)
      throw new UnsupportedOnBackendError(`no parameter group family for ${engine.kind} ${engine.version}`);
    const names = cellNames(run.runId, cell.cellId);
    const az = cellAz(this.config, run, cell);
    const notes: PlanNote[] = [];
    const description = `aurora-bench ${run.runId} ${cell.cellId}`.slice(0, 255);

    await this.ensureParameterGroup(
      'cluster',
      names.clusterParameterGroup,
      family,
      description,
      this.cellTagList(run, cell),
      clusterParametersFor(cell),
    );
    const instanceParams = instanceParametersFor(cell);
    const hasInstanceGroup = Object.keys(instanceParams).length > 0;
    if (hasInstanceGroup) {
      await this.ensureParameterGroup(
        'instance',
        names.instanceParameterGroup,
        family,
        description,
        this.cellTagList(run, cell),
        instanceParams,
      );
    }

    // The groups were just created or modified, so the cluster that uses them waits until they settle.
    // checkCellReady creates it then. A cluster that already exists gets its missing instances now.
    // checkCellReady applies a value changed under running instances, rebooting where the group is pending-reboot.
    const settleS = this.config.parameterGroupSettleS ?? PARAMETER_GROUP_SETTLE_S;
    const settledAt = new Date(this.now().getTime() + settleS * 1000).toISOString();
    const existingCluster = await describeCluster(this.clients, names.clusterId);
    const cluster =
      existingCluster || settleS === 0
        ? await this.ensureMembers(run, cell, names, engine, az, hasInstanceGroup)
        : undefined;
    const wanted = this.wantedInstances(cell, names);

    return {
      cellId: cell.cellId,
      clusterId: names.clusterId,
      readers: [],
      clients: [],
      credentials: { user: this.config.masterUsername, secretRef: cluster?.MasterUserSecret?.SecretArn ?? '' },
      notes,
      backendState: {
        az,
        parameterGroupsSettledAt: settledAt,
        engine: engine.kind,
        engineVersion: awsEngineVersion(engine),
        clusterParameterGroup: names.clusterParameterGroup,
        ...(hasInstanceGroup ? { instanceParameterGroup: names.instanceParameterGroup } : {}),
        writerId: names.writerId,
        readerIds: wanted
          .filter((w) => w.role === 'reader')
          .map((w) => w.id)
          .join(','),
      },
    };
  }

  /** The writer, then the readers in creation order. The first instance created in an Aurora cluster is its writer. */
  private wantedInstances(cell: CellPlan, names: CellNames): { id: string; role: 'writer' | 'reader'; tier: number }[] {
    return [
      { id: names.writerId, role: 'writer', tier: 0 },
      // Serverless v2 readers in tiers 0-1 keep the writer's capacity, and tiers 2-15 scale on their own.
      // Provisioned readers stay in tier 1.
      ...Array.from({ length: cell.variant.readers }, (_, i) => ({
        id: names.readerId(i + 1),
        role: 'reader' as const,
        tier: READER_PROMOTION_TIER[cell.variant.serverless?.readerScaling ?? 'with-writer'],
      })),
    ];
  }

  /** The cluster and each missing instance, writer first. Every call finds what exists. */
  private async ensureMembers(
    run: RunContext,
    cell: CellPlan,
    names: CellNames,
    engine: EngineRef,
    az: string,
    hasInstanceGroup: boolean,
  ): Promise<DBCluster | undefined> {
    const cluster = await this.ensureCluster(run, cell, names, engine);
    if (cluster?.Status !== undefined && FAILED_CLUSTER_STATUSES.has(cluster.Status)) {
      throw new UnsupportedOnBackendError(`cluster ${names.clusterId} is ${cluster.Status}`);
    }
    const existing = new Set(
      (await describeClusterInstances(this.clients, names.clusterId)).map((i) => i.DBInstanceIdentifier),
    );
    for (const w of this.wantedInstances(cell, names)) {
      if (!existing.has(w.id))
        await this.ensureInstance(run, cell, w.id, w.role, az, names, hasInstanceGroup, w.tier, engine);
    }
    return cluster;
  }

  async checkCellReady(run: RunContext, cell: CellPlan, resources: CellResources): Promise<ReadyState> {
    const cluster = await describeCluster(this.clients, resources.clusterId);
    if (!cluster) {
      const settledAt = resources.backendState['parameterGroupsSettledAt'];
      if (settledAt === undefined)
        throw new UnsupportedOnBackendError(
          `cluster ${resources.clusterId} does not exist (deleted outside the workflow?)`,
        );
      if (this.now().getTime() < Date.parse(settledAt)) {
        return {
          ready: false,
          resources,
          detail:
            `parameter groups settling until ${settledAt} before the cluster uses them (RDS: wait at ` +
            `least 5 minutes after creating or modifying a parameter group)`,
        };
      }
      const names = cellNames(run.runId, cell.cellId);
      const az = resources.backendState['az'] ?? cellAz(this.config, run, cell);
      await this.ensureMembers(
        run,
        cell,
        names,
        cellEngineOf(run, cell),
        az,
        resources.backendState['instanceParameterGroup'] !== undefined,
      );
      return {
        ready: false,
        resources,
        detail: `cluster ${resources.clusterId} and its ${1 + cell.variant.readers} instance(s) requested`,
      };
    }
    if (cluster.Status && FAILED_CLUSTER_STATUSES.has(cluster.Status))
      throw new UnsupportedOnBackendError(`cluster ${resources.clusterId} is ${cluster.Status}`);
    const instances = await describeClusterInstances(this.clients, resources.clusterId);
    const pending: string[] = [];
    if (cluster.Status !== 'available') pending.push(`cluster ${cluster.Status ?? 'unknown'}`);
    // MasterUserSecret.SecretStatus: creating | active | rotating | impaired.
    const secret = cluster.MasterUserSecret;
    if (!secret?.SecretArn) pending.push('master user secret not created yet');
    else if (secret.SecretStatus === 'impaired')
      throw new UnsupportedOnBackendError(`master user secret of ${resources.clusterId} is impaired`);
    else if (secret.SecretStatus !== undefined && secret.SecretStatus !== 'active')
      pending.push(`master user secret ${secret.SecretStatus}`);
    // LocalWriteForwardingStatus: enabled | disabled | enabling | disabling | requested.
    if (cell.variant.writeForwarding?.enabled) {
      const wf = cluster.LocalWriteForwardingStatus;
      if (wf === 'disabled' || wf === 'disabling')
        throw new UnsupportedOnBackendError(`local write forwarding of ${resources.clusterId} is ${wf}`);
      if (wf !== undefined && wf !== 'enabled') pending.push(`local write forwarding ${wf}`);
    }

    const expectedIds = [
      resources.backendState['writerId'],
      ...(resources.backendState['readerIds'] ?? '').split(','),
    ].filter((x): x is string => !!x);
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

    // Roles as the cluster reports them, since a failover may have promoted a reader.
    const writerIds = new Set(
      (cluster.DBClusterMembers ?? []).filter((m) => m.IsClusterWriter).map((m) => m.DBInstanceIdentifier),
    );
    const endpoint = (inst: DBInstance, role: 'writer' | 'reader'): Endpoint => ({
      instanceId: inst.DBInstanceIdentifier!,
      role,
      host: inst.Endpoint!.Address!,
      port: inst.Endpoint!.Port ?? cluster.Port ?? ENGINES[cellEngineOf(run, cell).kind].defaultPort,
      ...(inst.AvailabilityZone ? { az: inst.AvailabilityZone } : {}),
    });
    const ours = expectedIds.map((id) => byId.get(id)!);
    const writerInst =
      ours.find((i) => writerIds.has(i.DBInstanceIdentifier)) ?? byId.get(resources.backendState['writerId'] ?? '');
    if (!writerInst) return { ready: false, resources, detail: 'no writer instance yet' };
    const readers = ours
      .filter((i) => i !== writerInst)
      .sort((a, b) => a.DBInstanceIdentifier!.localeCompare(b.DBInstanceIdentifier!, 'en', { numeric: true }));
    const dbi: Record<string, string> = {};
    for (const i of ours) if (i.DbiResourceId) dbi[`dbi:${i.DBInstanceIdentifier}`] = i.DbiResourceId;
    // Whether the parameter groups' values are what runs. effective-config.ts checks it again at prepare.
    const applyStatus = [
      ...ours.flatMap((i) =>
        (i.DBParameterGroups ?? []).map((g) => ({
          instanceId: i.DBInstanceIdentifier!,
          kind: 'instance',
          group: g.DBParameterGroupName ?? '?',
          status: g.ParameterApplyStatus ?? 'unknown',
        })),
      ),
      ...(cluster.DBClusterMembers ?? [])
        .filter(
          (m) =>
            m.DBInstanceIdentifier !== undefined &&
            expectedIds.includes(m.DBInstanceIdentifier) &&
            m.DBClusterParameterGroupStatus !== undefined,
        )
        .map((m) => ({
          instanceId: m.DBInstanceIdentifier!,
          kind: 'cluster',
          group: cluster.DBClusterParameterGroup ?? '?',
          status: m.DBClusterParameterGroupStatus!,
        })),
    ];
    // Nothing is measured before every instance, readers included, runs its groups' values.
    // `applying` is waited for, within the readiness deadline.
    // `pending-reboot` gets the reboot RDS waits for, since static parameters apply only after a reboot.
    // See botocore rds, ModifyDBClusterParameterGroup. `failed-to-apply` fails the cell.
    const parametersOf = (kind: string): string => {
      const names = Object.keys(kind === 'cluster' ? clusterParametersFor(cell) : instanceParametersFor(cell));
      return names.length === 0
        ? 'no parameter set by the experiment'
        : names.slice(0, 8).join(', ') + (names.length > 8 ? ', ...' : '');
    };
    const notInSync = applyStatus.filter((s) => s.status !== IN_SYNC);
    const failed = notInSync.find((s) => s.status === FAILED_TO_APPLY);
    if (failed) {
      throw new ConfigurationNotInEffectError(
        `instance ${failed.instanceId} of cell ${cell.cellId}: its ${failed.kind} parameter ` +
          `group ${failed.group} is ${FAILED_TO_APPLY} (${parametersOf(failed.kind)})`,
      );
    }
    if (notInSync.length > 0) {
      const reboot = [...new Set(notInSync.filter((s) => s.status === PENDING_REBOOT).map((s) => s.instanceId))];
      for (const id of reboot) {
        await call(`RDS RebootDBInstance ${id}`, () =>
          this.clients.rds.send(new RebootDBInstanceCommand({ DBInstanceIdentifier: id })),
        );
      }
      const detail = notInSync
        .map(
          (s) =>
            `instance ${s.instanceId}: ${s.kind} parameter ` +
            `group ${s.group} ${s.status}${s.status === PENDING_REBOOT ? ', rebooted' : ''} ` +
            `(${parametersOf(s.kind)})`,
        )
        .join('; ');
      return { ready: false, resources, detail };
    }
    const wrong = await this.valuesNotInGroups(cell, cluster, ours);
    if (wrong.length > 0) {
      throw new ConfigurationNotInEffectError(
        `cell ${cell.cellId} would not run with the configuration asked for (nothing measured): ${wrong.join('; ')}`,
      );
    }
    const ready: CellResources = {
      ...resources,
      writer: endpoint(writerInst, 'writer'),
      readers: readers.map((i) => endpoint(i, 'reader')),
      credentials: { user: cluster.MasterUsername ?? resources.credentials.user, secretRef: secret!.SecretArn! },
      backendState: {
        ...resources.backendState,
        ...dbi,
        ...(cluster.EngineVersion ? { engineVersion: cluster.EngineVersion } : {}),
        parameterApplyStatus: JSON.stringify(applyStatus),
      },
    };
    return {
      ready: true,
      resources: ready,
      detail: `cluster ${resources.clusterId} available with ${ours.length} instance(s)`,
    };
  }

  /** A parameter group's values as RDS holds them, by lower-case name. Source "user" marks the ones set in it. */
  private async groupValues(kind: 'cluster' | 'instance', group: string): Promise<Map<string, string>> {
    const values = new Map<string, string>();
    let marker: string | undefined;
    do {
      const page =
        kind === 'cluster'
          ? await call(`RDS DescribeDBClusterParameters ${group}`, () =>
              this.clients.rds.send(
                new DescribeDBClusterParametersCommand({
                  DBClusterParameterGroupName: group,
                  Source: 'user',
                  MaxRecords: 100,
                  Marker: marker,
                }),
              ),
            )
          : await call(`RDS DescribeDBParameters ${group}`, () =>
              this.clients.rds.send(
                new DescribeDBParametersCommand({
                  DBParameterGroupName: group,
                  Source: 'user',
                  MaxRecords: 100,
                  Marker: marker,
                }),
              ),
            );
      for (const p of page.Parameters ?? [])
        if (p.ParameterName !== undefined) values.set(p.ParameterName.toLowerCase(), p.ParameterValue ?? '');
      marker = page.Marker || undefined;
    } while (marker !== undefined);
    return values;
  }

  /**
   * Every value the cell asks for that an instance's groups do not hold, named with the parameter and the instance.
   * An instance runs its DB parameter group's value, else the cluster parameter group's.
   * See AWS, Aurora User Guide, "DB cluster parameter groups for Amazon Aurora DB clusters".
   * Aurora MySQL forwards no writes from a reader whose aurora_replica_read_consistency is unset.
   * So the readers are checked like the writer. See AWS, Aurora User Guide, "Read consistency for write forwarding".
   */
  private async valuesNotInGroups(
    cell: CellPlan,
    cluster: DBCluster,
    instances: readonly DBInstance[],
  ): Promise<string[]> {
    const clusterAsked = clusterParametersFor(cell);
    const instanceAsked = instanceParametersFor(cell);
    const asked = { ...clusterAsked, ...instanceAsked };
    if (Object.keys(asked).length === 0) return [];
    const cache = new Map<string, Promise<Map<string, string>>>();
    const valuesOf = (kind: 'cluster' | 'instance', group: string) => {
      const key = `${kind}:${group}`;
      if (!cache.has(key)) cache.set(key, this.groupValues(kind, group));
      return cache.get(key)!;
    };
    const clusterGroup = cluster.DBClusterParameterGroup;
    const clusterValues =
      clusterGroup !== undefined ? await valuesOf('cluster', clusterGroup) : new Map<string, string>();
    const problems: string[] = [];
    for (const inst of instances) {
      const own = inst.DBParameterGroups?.[0]?.DBParameterGroupName;
      const ownValues =
        own !== undefined && !own.startsWith('default.') ? await valuesOf('instance', own) : new Map<string, string>();
      for (const [name, value] of Object.entries(asked)) {
        const key = name.toLowerCase();
        const held = ownValues.get(key) ?? clusterValues.get(key);
        if (held !== undefined && held.trim().toLowerCase() === value.trim().toLowerCase()) continue;
        const where =
          name in instanceAsked
            ? `DB parameter group ${own ?? '(none)'}`
            : `cluster parameter group ${clusterGroup ?? '(none)'}`;
        problems.push(
          `${name}: asked ${value}, instance ${inst.DBInstanceIdentifier ?? '?'} ` +
            `runs ${held === undefined ? 'the default' : held} (${where})`,
        );
      }
    }
    return problems;
  }
}
