/**
 * A cell on RDS for MySQL, MariaDB or PostgreSQL: one DB parameter group of the engine's family,
 * a source DB instance (the writer) and its read replicas (the readers), each with its own instance
 * endpoint. Every resource has the deterministic names of names.ts (the cell's writer and reader
 * ids, its `-ipg` group) and the run/cell/expiry tags, so each call is safe to retry.
 *
 * API facts used (botocore rds/2014-10-31 service-2.json, read through @aws-sdk/client-rds, whose
 * documentation is generated from it):
 * - CreateDBInstance: Engine mysql | mariadb | postgres, EngineVersion, DBInstanceClass,
 *   AllocatedStorage ("General Purpose (SSD) storage (gp2, gp3): Must be an integer from 20 to
 *   65536" for RDS for MariaDB, MySQL and PostgreSQL; sized from the cell's data,
 * core/aurora/engines.ts rdsAllocatedStorageGib), StorageType left out ("Default: io1, if the
 *   Iops parameter is specified. Otherwise, gp3"), MasterUsername ("required for RDS DB instances"),
 *   ManageMasterUserPassword (the secret is DBInstance.MasterUserSecret), DBName ("The name of the
 *   database to create when the DB instance is created. If this parameter isn't specified, no
 *   database is created" for MySQL and MariaDB; PostgreSQL always has "postgres" and creates this
 *   one too), BackupRetentionPeriod ("Can't be set to 0 if the DB instance is a source to read
 *   replicas"), DBParameterGroupName, DBSubnetGroupName, VpcSecurityGroupIds, AvailabilityZone,
 *   MultiAZ.
 * - CreateDBInstanceReadReplica: SourceDBInstanceIdentifier ("Each DB instance can have up to 15
 *   read replicas ... The specified DB instance must have automatic backups enabled"), and the
 *   source must be available first (RDS User Guide, "Working with DB instance read replicas": a
 *   read replica is created from a snapshot of the source). DBParameterGroupName is left out:
 *   "Specifying a parameter group for this operation is only supported for MySQL DB instances for
 *   cross-Region read replicas ... It isn't supported for MySQL DB instances for same Region read
 *   replicas", and without it "Amazon RDS uses the DBParameterGroup of the source DB instance for a
 *   same Region read replica": every instance of the cell runs the one group. DBSubnetGroupName:
 *   "All read replicas in one Amazon Web Services Region that are created from the same source DB
 *   instance must ... Specify DB subnet groups from the same VPC".
 * - A DB instance of these engines has no cluster parameter group: the variant's cluster and
 *   instance parameters both go into its DB parameter group (instance values win).
 *
 * The replicas can only be asked for once the source is available, so provisioning takes two
 * steps: provisionCell creates the group and the source; checkCellReady creates each missing
 * replica once the source is available, then waits for all of them.
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

export function dbInstanceParametersFor(cell: CellPlan): Record<string, string> {
  return { ...clusterParametersFor(cell), ...instanceParametersFor(cell) };
}

export interface RdsInstancesOptions {
  readonly clients: Pick<AwsClients, 'rds'>;
  readonly config: AwsBackendConfig;
  readonly now: () => Date;
}

/** Provisioning and readiness of cells on RDS DB instances with read replicas. */
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
      // A retried ProvisionCell: the group was made by an earlier attempt; set its values again.
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
            AllocatedStorage: storage.allocated,
            MaxAllocatedStorage: storage.max,
            MasterUsername: this.config.masterUsername,
            // RDS generates the password and keeps it in Secrets Manager (MasterUserSecret.SecretArn).
            ManageMasterUserPassword: true,
            DBName: BENCHMARK_DATABASE,
            DBParameterGroupName: names.instanceParameterGroup,
            DBSubnetGroupName: this.config.dbSubnetGroupName,
            VpcSecurityGroupIds: [this.config.dbSecurityGroupId],
            AvailabilityZone: az,
            MultiAZ: false,
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
    // MasterUserSecret.SecretStatus: creating | active | rotating | impaired (rds service-2.json).
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
    // DBInstance.DBParameterGroups[].ParameterApplyStatus, as for Aurora instances (cluster.ts).
    const applyStatus = ours.flatMap((i) =>
      (i.DBParameterGroups ?? []).map((g) => ({
        instanceId: i.DBInstanceIdentifier!,
        kind: 'instance',
        group: g.DBParameterGroupName ?? '?',
        status: g.ParameterApplyStatus ?? 'unknown',
      })),
    );
    // A group still being applied ("applying", "pending-database-upgrade": DBParameterGroupStatus in
    // botocore's rds service-2.json) is a state to wait out, as for Aurora instances (cluster.ts):
    // the cell is not ready yet, and the readiness deadline names the instance and group if it stays so.
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
