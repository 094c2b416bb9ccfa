/**
 * A cell on RDS for MySQL, MariaDB or PostgreSQL: one DB parameter group, a source DB instance and its read replicas.
 * Replicas can only be asked for once the source is available, so checkCellReady creates them after provisionCell.
 * The API facts below come from botocore rds/2014-10-31, as @aws-sdk/client-rds documents them.
 */
import {
  CreateDBInstanceCommand,
  CreateDBInstanceReadReplicaCommand,
  CreateDBParameterGroupCommand,
  ModifyDBParameterGroupCommand,
  type DBInstance,
} from '@aws-sdk/client-rds';
import {
  UnsupportedOnBackendError,
  type CellResources,
  type Endpoint,
  type ReadyState,
  type RunContext,
} from '../../backend';
import { awsEngineVersion, ENGINES, parameterGroupFamily, rdsAllocatedStorageGib } from '../../aurora/engines';
import type { CellPlan } from '../../plan/types';
import { BENCHMARK_DATABASE } from '../../plan/sysbench-args';
import { call, isAlreadyExists, rethrow } from './aws-errors';
import { chunk } from './batches';
import type { AwsClients } from './clients';
import {
  cellEngineOf,
  clusterParametersFor,
  FAILED_INSTANCE_STATUSES,
  instanceParametersFor,
  MAX_PARAMETERS_PER_MODIFY,
  toParameters,
} from './cluster';
import type { AwsBackendConfig } from './config';
import { cellNames, cellTagger, tagKeys, type Tag } from './names';
import { cellAz } from './placement';
import { describeInstance } from './teardown';

/**
 * These engines have no cluster parameter group. Both levels go into the DB parameter group, and instance values win.
 */
export function dbInstanceParametersFor(cell: CellPlan): Record<string, string> {
  return { ...clusterParametersFor(cell), ...instanceParametersFor(cell) };
}

export interface RdsInstancesOptions {
  readonly clients: Pick<AwsClients, 'rds'>;
  readonly config: AwsBackendConfig;
  readonly now: () => Date;
}

export class RdsInstances {
  private readonly config: AwsBackendConfig;
  private readonly clients: Pick<AwsClients, 'rds'>;
  private readonly tags: ReturnType<typeof tagKeys>;
  private readonly cellTagList: ReturnType<typeof cellTagger>;

  constructor(options: RdsInstancesOptions) {
    this.config = options.config;
    this.clients = options.clients;
    this.tags = tagKeys(options.config.tagKeyPrefix);
    this.cellTagList = cellTagger(options.config.tagKeyPrefix, options.now);
  }

  private async ensureParameterGroup(
    name: string,
    family: string,
    description: string,
    tags: Tag[],
    params: Record<string, string>,
  ): Promise<void> {
    try {
      await this.clients.rds.send(
        new CreateDBParameterGroupCommand({
          DBParameterGroupName: name,
          DBParameterGroupFamily: family,
          Description: description,
          Tags: tags,
        }),
      );
    } catch (e) {
      // A retried ProvisionCell. An earlier attempt made the group, so its values are set again.
      if (!isAlreadyExists(e)) rethrow(e, `RDS CreateDBParameterGroup ${name}`);
    }
    for (const batch of chunk(toParameters(params), MAX_PARAMETERS_PER_MODIFY)) {
      await call(`RDS ModifyDBParameterGroup ${name}`, () =>
        this.clients.rds.send(new ModifyDBParameterGroupCommand({ DBParameterGroupName: name, Parameters: batch })),
      );
    }
  }

  async provisionCell(run: RunContext, cell: CellPlan): Promise<CellResources> {
    const engine = cellEngineOf(run, cell);
    const facts = ENGINES[engine.kind];
    const family = parameterGroupFamily(engine);
    if (facts.topology !== 'instance' || facts.rdsEngine === undefined || family === undefined) {
      throw new UnsupportedOnBackendError(`${engine.kind} ${engine.version} is not an RDS DB instance engine`);
    }
    const names = cellNames(run.runId, cell.cellId);
    const az = cellAz(this.config, run, cell);
    const description = `aurora-bench ${run.runId} ${cell.cellId}`.slice(0, 255);
    await this.ensureParameterGroup(
      names.instanceParameterGroup,
      family,
      description,
      this.cellTagList(run, cell),
      dbInstanceParametersFor(cell),
    );

    let source = await describeInstance(this.clients, names.writerId);
    if (!source) {
      const pi = cell.variant.performanceInsights;
      const storage = rdsAllocatedStorageGib(cell.data);
      try {
        const out = await this.clients.rds.send(
          new CreateDBInstanceCommand({
            DBInstanceIdentifier: names.writerId,
            Engine: facts.rdsEngine,
            EngineVersion: awsEngineVersion(engine),
            DBInstanceClass: cell.variant.instanceClass,
            // RDS takes 20 to 65536 GiB of gp2 or gp3. StorageType is left out, so RDS picks gp3.
            AllocatedStorage: storage.allocated,
            MaxAllocatedStorage: storage.max,
            MasterUsername: this.config.masterUsername,
            // RDS generates the password and keeps it in Secrets Manager (MasterUserSecret.SecretArn).
            ManageMasterUserPassword: true,
            // Without DBName, MySQL and MariaDB create no database. PostgreSQL creates it next to "postgres".
            DBName: BENCHMARK_DATABASE,
            DBParameterGroupName: names.instanceParameterGroup,
            DBSubnetGroupName: this.config.dbSubnetGroupName,
            VpcSecurityGroupIds: [this.config.dbSecurityGroupId],
            AvailabilityZone: az,
            MultiAZ: false,
            // A source of read replicas must keep automatic backups, so the period cannot be 0.
            BackupRetentionPeriod: 1,
            StorageEncrypted: true,
            EnablePerformanceInsights: pi,
            ...(pi ? { PerformanceInsightsRetentionPeriod: this.config.performanceInsightsRetentionDays } : {}),
            PubliclyAccessible: false,
            AutoMinorVersionUpgrade: false,
            DeletionProtection: false,
            CopyTagsToSnapshot: false,
            Tags: this.cellTagList(run, cell, { [this.tags.role]: 'writer' }),
          }),
        );
        source = out.DBInstance;
      } catch (e) {
        if (!isAlreadyExists(e)) rethrow(e, `RDS CreateDBInstance ${names.writerId}`);
        source = await describeInstance(this.clients, names.writerId);
      }
    }
    if (source?.DBInstanceStatus !== undefined && FAILED_INSTANCE_STATUSES.has(source.DBInstanceStatus)) {
      throw new UnsupportedOnBackendError(`DB instance ${names.writerId} is ${source.DBInstanceStatus}`);
    }
    const readerIds = Array.from({ length: cell.variant.readers }, (_, i) => names.readerId(i + 1));
    return {
      cellId: cell.cellId,
      // No cluster: the source instance stands for the cell where a cluster id is asked for.
      clusterId: names.writerId,
      readers: [],
      clients: [],
      credentials: { user: this.config.masterUsername, secretRef: source?.MasterUserSecret?.SecretArn ?? '' },
      notes: [],
      backendState: {
        az,
        engine: engine.kind,
        engineVersion: awsEngineVersion(engine),
        instanceParameterGroup: names.instanceParameterGroup,
        writerId: names.writerId,
        readerIds: readerIds.join(','),
      },
    };
  }

  /**
   * A read replica is created from a snapshot of its source, which must be available first.
   * See AWS, RDS User Guide, "Working with DB instance read replicas".
   * DBParameterGroupName is left out, since a same-Region MySQL replica cannot take one.
   * Without it, the replica runs the source's group, so every instance of the cell runs the one group.
   * Replicas of one source need DB subnet groups of the same VPC.
   */
  private async ensureReplica(
    run: RunContext,
    cell: CellPlan,
    id: string,
    sourceId: string,
    az: string,
  ): Promise<void> {
    const pi = cell.variant.performanceInsights;
    try {
      await this.clients.rds.send(
        new CreateDBInstanceReadReplicaCommand({
          DBInstanceIdentifier: id,
          SourceDBInstanceIdentifier: sourceId,
          DBInstanceClass: cell.variant.instanceClass,
          AvailabilityZone: az,
          DBSubnetGroupName: this.config.dbSubnetGroupName,
          VpcSecurityGroupIds: [this.config.dbSecurityGroupId],
          MultiAZ: false,
          EnablePerformanceInsights: pi,
          ...(pi ? { PerformanceInsightsRetentionPeriod: this.config.performanceInsightsRetentionDays } : {}),
          PubliclyAccessible: false,
          AutoMinorVersionUpgrade: false,
          DeletionProtection: false,
          Tags: this.cellTagList(run, cell, { [this.tags.role]: 'reader' }),
        }),
      );
    } catch (e) {
      if (!isAlreadyExists(e)) rethrow(e, `RDS CreateDBInstanceReadReplica ${id}`);
    }
  }

  async checkCellReady(run: RunContext, cell: CellPlan, resources: CellResources): Promise<ReadyState> {
    const engine = cellEngineOf(run, cell);
    const writerId = resources.backendState['writerId'] ?? resources.clusterId;
    const readerIds = (resources.backendState['readerIds'] ?? '').split(',').filter((x) => x !== '');
    const az = resources.backendState['az'] ?? cellAz(this.config, run, cell);
    const source = await describeInstance(this.clients, writerId);
    if (!source)
      throw new UnsupportedOnBackendError(`DB instance ${writerId} does not exist (deleted outside the workflow?)`);
    const pending: string[] = [];
    const status = (i: DBInstance): string => i.DBInstanceStatus ?? 'unknown';
    if (FAILED_INSTANCE_STATUSES.has(status(source)))
      throw new UnsupportedOnBackendError(`DB instance ${writerId} is ${status(source)}`);
    const sourceReady = status(source) === 'available' && source.Endpoint?.Address !== undefined;
    if (!sourceReady) pending.push(`instance ${writerId} ${status(source)}`);
    // MasterUserSecret.SecretStatus: creating | active | rotating | impaired.
    const secret = source.MasterUserSecret;
    if (!secret?.SecretArn) pending.push('master user secret not created yet');
    else if (secret.SecretStatus === 'impaired')
      throw new UnsupportedOnBackendError(`master user secret of ${writerId} is impaired`);
    else if (secret.SecretStatus !== undefined && secret.SecretStatus !== 'active')
      pending.push(`master user secret ${secret.SecretStatus}`);

    const replicas: DBInstance[] = [];
    for (const id of readerIds) {
      let replica = await describeInstance(this.clients, id);
      if (!replica) {
        if (!sourceReady) {
          pending.push(`replica ${id} waits for its source`);
          continue;
        }
        await this.ensureReplica(run, cell, id, writerId, az);
        replica = await describeInstance(this.clients, id);
        if (!replica) {
          pending.push(`replica ${id} requested`);
          continue;
        }
      }
      if (FAILED_INSTANCE_STATUSES.has(status(replica)))
        throw new UnsupportedOnBackendError(`read replica ${id} is ${status(replica)}`);
      if (status(replica) !== 'available' || !replica.Endpoint?.Address)
        pending.push(`replica ${id} ${status(replica)}`);
      replicas.push(replica);
    }
    if (pending.length > 0) return { ready: false, resources, detail: pending.join('; ') };

    const port = ENGINES[engine.kind].defaultPort;
    const endpoint = (inst: DBInstance, role: 'writer' | 'reader'): Endpoint => ({
      instanceId: inst.DBInstanceIdentifier!,
      role,
      host: inst.Endpoint!.Address!,
      port: inst.Endpoint!.Port ?? port,
      ...(inst.AvailabilityZone ? { az: inst.AvailabilityZone } : {}),
    });
    const ours = [source, ...replicas];
    const dbi: Record<string, string> = {};
    for (const i of ours) if (i.DbiResourceId) dbi[`dbi:${i.DBInstanceIdentifier}`] = i.DbiResourceId;
    // As for Aurora instances in cluster.ts.
    const applyStatus = ours.flatMap((i) =>
      (i.DBParameterGroups ?? []).map((g) => ({
        instanceId: i.DBInstanceIdentifier!,
        kind: 'instance',
        group: g.DBParameterGroupName ?? '?',
        status: g.ParameterApplyStatus ?? 'unknown',
      })),
    );
    // A group still being applied is a state to wait out, as for Aurora instances.
    // The readiness deadline names the instance and group if it stays so.
    const settling = applyStatus.filter((g) => g.status === 'applying' || g.status === 'pending-database-upgrade');
    if (settling.length > 0) {
      return {
        ready: false,
        resources,
        detail: settling.map((g) => `instance ${g.instanceId}: parameter group ${g.group} ${g.status}`).join('; '),
      };
    }
    const ready: CellResources = {
      ...resources,
      writer: endpoint(source, 'writer'),
      readers: replicas.map((r) => endpoint(r, 'reader')),
      credentials: { user: source.MasterUsername ?? resources.credentials.user, secretRef: secret!.SecretArn! },
      backendState: {
        ...resources.backendState,
        ...dbi,
        ...(source.EngineVersion ? { engineVersion: source.EngineVersion } : {}),
        parameterApplyStatus: JSON.stringify(applyStatus),
      },
    };
    return {
      ready: true,
      resources: ready,
      detail: `DB instance ${writerId} available with ${replicas.length} read replica(s)`,
    };
  }
}
