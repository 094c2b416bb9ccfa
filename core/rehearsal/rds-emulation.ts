/**
 * RDS, as far as the rehearsal needs it to behave like Aurora and RDS.
 * moto keeps the API state. This emulation gives every DB instance a real server on 127.0.0.1.
 * PostgreSQL engines get PostgreSQL, and every other engine gets MariaDB, both started with the local backend's code.
 *
 * A server gets only what the API calls asked for.
 * - The cluster's master user has the password Secrets Manager holds and Aurora's master privileges.
 *   See Aurora User Guide, "Master user account privileges".
 *   A PostgreSQL master user is a LOGIN role with CREATEDB and CREATEROLE, as on RDS.
 *   See RDS User Guide, "Master user account privileges".
 * - The database CreateDBCluster named in DatabaseName, if any.
 * - The accepted values of its parameter groups, through the local backend's parameter plan.
 *
 * With ManageMasterUserPassword, Aurora keeps a generated password in a secret.
 * See Aurora User Guide, "Password management with Amazon Aurora and AWS Secrets Manager".
 * moto 5 fills that secret with fixed credentials.
 * So the emulation writes the real username and a generated password before any server starts.
 *
 * An instance reads "creating" until its server accepts connections, then "available".
 * A reader must also have replicated what the writer had when it attached.
 * The first instance of a cluster is its writer, as in Aurora. Readers use MariaDB GTID replication.
 * The reader endpoint answers with the writer's port, because its load balancing is not emulated.
 *
 * RDS DB instances outside a cluster have their own master user and database.
 * A read replica runs the source's DB parameter group, as a same-Region replica does.
 * See botocore CreateDBInstanceReadReplicaMessage.DBParameterGroupName.
 * moto 5 deletes the secret a replica shares with the first instance deleted.
 * So the password is read once, when the source's server starts.
 *
 * moto reports every group in-sync, so the emulation keeps the apply status itself.
 * Its values are botocore's DBParameterGroupStatus.
 * Groups read `applying` for `applyingMs` after the instance becomes available or an immediate change.
 * A pending-reboot change reads `pending-reboot` until RebootDBInstance restarts the stand-in.
 *
 * ModifyDB(Cluster)ParameterGroup is checked before moto sees it.
 * A parameter RDS would refuse for the group's family fails with InvalidParameterValue, as on RDS.
 */
import { randomInt } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import {
  GetSecretValueCommand,
  PutSecretValueCommand,
  type SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import type { PlanNote } from '../plan/types';
import { attachReader, replicationOptions, replicationStatus } from '../backends/local/cluster';
import { currentHost, localShape, type HostResources } from '../backends/local/instance-classes';
import {
  launchServer,
  queryServer,
  startServerFromTemplate,
  stopServer,
  type ServerInfo,
} from '../backends/local/mariadb-server';
import { applyDynamicParameters, planParameters, verifyParameters } from '../backends/local/parameters';
import {
  planPostgresParameters,
  postgresReplicationStatus,
  verifyPostgresParameters,
} from '../backends/local/postgres-cluster';
import {
  baseBackup,
  openPathFor,
  PG_CONF_INCLUDE,
  pgQuery,
  postgresOwnerUid,
  preparePostgresDir,
  startPostgres,
  stopPostgres,
  type PostgresServer,
  type PostgresTemplate,
  type PostgresTools,
} from '../backends/local/postgres-server';
import type { ResolvedVariant } from '../plan/types';
import { writeFile } from 'node:fs/promises';
import type { LocalTools } from '../backends/local/preflight';
import { sqlString } from '../backends/local/sql-client';
import { LOCAL_LOGINS, type ServerTemplate } from '../backends/local/template';
import type { ProcessTracker } from './process-tracker';
import { interceptClient, serviceError, type SdkResult } from './sdk-intercept';

/** What RDS would refuse in a parameter group of a family, or [] when it accepts every parameter. */
export type ParameterCheck = (
  family: string,
  level: 'cluster' | 'instance',
  params: Readonly<Record<string, string>>,
) => readonly { readonly name: string; readonly reason: string }[];

/**
 * Characters of a generated master password.
 * RDS allows any printable ASCII except "/", """ and "@", and no spaces.
 * See the RDS API reference, CreateDBCluster MasterUserPassword, in rds service-2.json.
 */
const PASSWORD_CHARS = Array.from({ length: 126 - 33 + 1 }, (_, i) => String.fromCharCode(33 + i))
  .filter((c) => !'/"@'.includes(c))
  .join('');

/** A password as RDS could generate it: 28 characters of the allowed set. */
function generateMasterPassword(): string {
  return Array.from({ length: 28 }, () => PASSWORD_CHARS[randomInt(PASSWORD_CHARS.length)]!).join('');
}

/**
 * The privileges of an Aurora MySQL master user that MariaDB has. See UsingWithRDS.MasterAccounts.
 * @internal exported for its tests (a test seam)
 */
export const MASTER_USER_PRIVILEGES = [
  'SELECT',
  'INSERT',
  'UPDATE',
  'DELETE',
  'CREATE',
  'DROP',
  'RELOAD',
  'PROCESS',
  'REFERENCES',
  'INDEX',
  'ALTER',
  'SHOW DATABASES',
  'CREATE TEMPORARY TABLES',
  'LOCK TABLES',
  'EXECUTE',
  'REPLICATION SLAVE',
  'REPLICATION CLIENT',
  'CREATE VIEW',
  'SHOW VIEW',
  'CREATE ROUTINE',
  'ALTER ROUTINE',
  'CREATE USER',
  'EVENT',
  'TRIGGER',
] as const;

type InstanceState = 'creating' | 'available' | 'rebooting' | 'failed' | 'deleting';

/** The server that stands in for an engine. */
type ServerKind = 'mariadb' | 'postgresql';

function serverKindOf(engine: unknown): ServerKind {
  return engine === 'aurora-postgresql' || engine === 'postgres' ? 'postgresql' : 'mariadb';
}

interface EmulatedInstance {
  readonly id: string;
  readonly clusterId: string;
  readonly role: 'writer' | 'reader';
  readonly instanceClass: string;
  readonly parameterGroup: string | undefined;
  readonly serverId: number;
  state: InstanceState;
  server?: ServerInfo;
  /** The PostgreSQL stand-in of a PostgreSQL engine. */
  pg?: PostgresServer;
  failure?: string;
  /** Settles once the server runs or failed, with its port or undefined. */
  started: Promise<number | undefined>;
  /** The values the MariaDB stand-in was given, in its own terms. */
  applied?: Record<string, string>;
  /** Until when, in ms since the epoch, its groups read `applying`. */
  applyingUntil: number;
  /** Groups changed with ApplyMethod pending-reboot since it last started. */
  readonly pendingReboot: Set<'cluster' | 'instance'>;
}

interface EmulatedCluster {
  readonly id: string;
  readonly masterUsername: string;
  readonly databaseName: string | undefined;
  readonly parameterGroup: string | undefined;
  /** ARN of the managed secret, or undefined when the call gave a MasterUserPassword. */
  readonly secretArn: string | undefined;
  readonly explicitPassword: string | undefined;
  readonly instances: Map<string, EmulatedInstance>;
  nextServerId: number;
  readonly notesSaid: Set<string>;
  readonly serverKind: ServerKind;
  /** A source and its read replicas, not an Aurora cluster. It is named by the source's id. */
  readonly standalone: boolean;
  /** The size a db.serverless instance's server stands in at. */
  readonly serverlessMaxAcu?: number;
  /** StorageType as asked, since moto does not keep it. */
  readonly storageType?: string;
}

interface ParameterGroup {
  readonly level: 'cluster' | 'instance';
  readonly family: string;
  readonly params: Record<string, string>;
}

export interface ClusterMembers {
  readonly clusterId: string;
  /** MariaDB stand-ins, empty for a PostgreSQL engine. */
  readonly writer: ServerInfo | undefined;
  readonly readers: readonly ServerInfo[];
  readonly postgres?: { readonly writer: PostgresServer | undefined; readonly readers: readonly PostgresServer[] };
  /** RDS DB instances with read replicas publish ReplicaLag, not Aurora's metrics. */
  readonly rdsInstances: boolean;
  /**
   * A Serverless v2 cluster's MaxCapacity. Its servers stand in at that size and do not scale.
   * So the capacity they publish is that constant.
   */
  readonly serverlessMaxAcu?: number;
}

export interface RdsEmulationOptions {
  readonly tools: LocalTools;
  readonly template: ServerTemplate;
  readonly serverVersion: string;
  /** Servers go under <dir>/i<n>/. It must be short, since a unix socket path has at most 107 bytes. */
  readonly dir: string;
  /** Where the master user secret lives. */
  readonly secrets: SecretsManagerClient;
  readonly tracker: ProcessTracker;
  /** RDS's parameter rules for a family, from the Aurora parameter catalogue. */
  readonly checkParameters?: ParameterCheck;
  readonly masterPassword?: () => string;
  readonly host?: HostResources;
  /** PostgreSQL's programs and template, made on first use. */
  readonly postgres?: () => Promise<{ readonly tools: PostgresTools; readonly template: PostgresTemplate }>;
  /** The rehearsal's own directory above `dir`, opened to the postgres user down to each server's. */
  readonly ownedRoot?: string;
  /** Called whenever a cluster's set of available servers changes, so the metrics publisher follows it. */
  readonly onMembersChanged?: (members: ClusterMembers) => Promise<void> | void;
  readonly log?: (line: string) => void;
  /** How long groups read `applying` once available or after an immediate change. */
  readonly applyingMs?: number;
  /** How long RebootDBInstance shows the instance `rebooting`. */
  readonly rebootMs?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Read anew after an await, since DeleteDBInstance may have come in while the server started. */
function deletedMeanwhile(instance: { readonly state: InstanceState }): boolean {
  return instance.state !== 'creating';
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** An identifier from an API answer in RDS's lower case, or '' when absent. */
function idOf(v: unknown): string {
  return (str(v) ?? '').toLowerCase();
}

/** A PostgreSQL string literal under standard_conforming_strings. */
function pgString(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

function sqlIdentifier(name: string): string {
  return '`' + name.replace(/`/g, '``') + '`';
}

export class RdsEmulation {
  private readonly clusters = new Map<string, EmulatedCluster>();
  private readonly groups = new Map<string, ParameterGroup>();
  private readonly host: HostResources;
  private serverDirs = 0;
  private closed = false;

  /**
   * What an instance's MariaDB stand-in was asked to run with.
   * The prepare check compares the server with these rather than with the groups' Aurora values.
   */
  appliedParameters(instanceId: string): Record<string, string> | undefined {
    for (const c of this.clusters.values()) {
      const i = c.instances.get(instanceId);
      if (i) return i.applied;
    }
    return undefined;
  }

  constructor(private readonly o: RdsEmulationOptions) {
    this.host = o.host ?? currentHost();
  }

  private log(line: string): void {
    this.o.log?.(`[rehearsal rds] ${line}`);
  }

  /** Puts the emulation in front of moto on this RDS client. */
  install(client: Parameters<typeof interceptClient>[0]): void {
    interceptClient(client, 'auroraBenchRehearsalRds', (command, input, forward) =>
      this.handle(command, input, forward),
    );
  }

  private async handle(
    command: string,
    input: Record<string, unknown>,
    forward: (input?: Record<string, unknown>) => Promise<SdkResult>,
  ): Promise<SdkResult> {
    switch (command) {
      case 'CreateDBClusterParameterGroup':
      case 'CreateDBParameterGroup': {
        const result = await forward();
        const level = command === 'CreateDBClusterParameterGroup' ? 'cluster' : 'instance';
        const name = str(level === 'cluster' ? input['DBClusterParameterGroupName'] : input['DBParameterGroupName'])!;
        this.groups.set(name.toLowerCase(), { level, family: str(input['DBParameterGroupFamily']) ?? '', params: {} });
        return result;
      }
      case 'ModifyDBClusterParameterGroup':
      case 'ModifyDBParameterGroup': {
        const name =
          str(
            command === 'ModifyDBClusterParameterGroup'
              ? input['DBClusterParameterGroupName']
              : input['DBParameterGroupName'],
          ) ?? '';
        const group = this.groups.get(name.toLowerCase());
        const params: Record<string, string> = {};
        for (const p of (input['Parameters'] as { ParameterName?: string; ParameterValue?: string }[] | undefined) ??
          []) {
          if (p.ParameterName !== undefined) params[p.ParameterName] = p.ParameterValue ?? '';
        }
        if (group && this.o.checkParameters) {
          const problems = this.o.checkParameters(group.family, group.level, params);
          if (problems.length > 0) {
            const first = problems[0]!;
            const unknown = /^unknown|does not apply/.test(first.reason);
            throw serviceError(
              'InvalidParameterValue',
              unknown
                ? `Could not find parameter with name: ${first.name}`
                : `The parameter ${first.name} cannot be modified in an ${group.family} ${group.level} ` +
                    `parameter group: ${first.reason}` +
                    (problems.length > 1
                      ? ` (and ${problems.length - 1} more: ${problems
                          .slice(1)
                          .map((p) => p.name)
                          .join(', ')})`
                      : ''),
            );
          }
        }
        const result = await forward();
        if (group) {
          Object.assign(group.params, params);
          const pendingReboot = ((input['Parameters'] as { ApplyMethod?: string }[] | undefined) ?? []).some(
            (p) => p.ApplyMethod === 'pending-reboot',
          );
          await this.groupChanged(name.toLowerCase(), group.level, pendingReboot);
        }
        return result;
      }
      case 'DeleteDBClusterParameterGroup':
      case 'DeleteDBParameterGroup': {
        const result = await forward();
        this.groups.delete(
          (str(input['DBClusterParameterGroupName']) ?? str(input['DBParameterGroupName']) ?? '').toLowerCase(),
        );
        return result;
      }
      case 'CreateDBCluster': {
        // moto 5.2 keeps no Aurora StorageType and fails with a KeyError on "aurora" or "aurora-iopt1".
        // So the emulation takes the value off the call and answers it back as RDS does.
        const { StorageType: _storageType, ...withoutStorageType } = input;
        return this.createCluster(input, await forward(withoutStorageType));
      }
      case 'DescribeDBClusters':
        return this.amendClusters(await forward());
      case 'CreateDBInstance':
        return str(input['DBClusterIdentifier']) === undefined
          ? this.createSource(input, await forward())
          : this.createInstance(input, await forward());
      case 'CreateDBInstanceReadReplica':
        return this.createReplica(input, await forward());
      case 'DescribeDBInstances':
        return this.amendInstances(await forward());
      case 'RebootDBInstance': {
        const result = await forward();
        this.reboot((str(input['DBInstanceIdentifier']) ?? '').toLowerCase());
        return this.amendInstances(result);
      }
      case 'DeleteDBInstance': {
        const id = (str(input['DBInstanceIdentifier']) ?? '').toLowerCase();
        const result = await forward();
        await this.deleteInstance(id);
        return this.amendInstances(result);
      }
      case 'DeleteDBCluster': {
        const id = (str(input['DBClusterIdentifier']) ?? '').toLowerCase();
        const result = await forward();
        const cluster = this.clusters.get(id);
        if (cluster) {
          for (const i of [...cluster.instances.keys()]) await this.deleteInstance(i);
          this.clusters.delete(id);
        }
        return result;
      }
      default:
        return forward();
    }
  }

  // ------------------------------------------------------------------ clusters

  private async createCluster(input: Record<string, unknown>, result: SdkResult): Promise<SdkResult> {
    const out = result.output['DBCluster'] as Record<string, unknown> | undefined;
    const id = (str(out?.['DBClusterIdentifier']) ?? str(input['DBClusterIdentifier']) ?? '').toLowerCase();
    const masterUsername = str(input['MasterUsername']) ?? '';
    const scaling = input['ServerlessV2ScalingConfiguration'] as Record<string, unknown> | undefined;
    const secretArn = str((out?.['MasterUserSecret'] as Record<string, unknown> | undefined)?.['SecretArn']);
    if (input['ManageMasterUserPassword'] === true) {
      if (!secretArn)
        throw new Error(
          `moto created cluster ${id} with ManageMasterUserPassword but returned no MasterUserSecret.SecretArn`,
        );
      const password = (this.o.masterPassword ?? generateMasterPassword)();
      await this.o.secrets.send(
        new PutSecretValueCommand({
          SecretId: secretArn,
          SecretString: JSON.stringify({ username: masterUsername, password }),
        }),
      );
    }
    this.clusters.set(id, {
      id,
      masterUsername,
      databaseName: str(input['DatabaseName']),
      parameterGroup: str(input['DBClusterParameterGroupName'])?.toLowerCase(),
      secretArn: input['ManageMasterUserPassword'] === true ? secretArn : undefined,
      explicitPassword: str(input['MasterUserPassword']),
      instances: new Map(),
      nextServerId: 1,
      notesSaid: new Set(),
      serverKind: serverKindOf(input['Engine']),
      standalone: false,
      ...(typeof scaling?.['MaxCapacity'] === 'number' ? { serverlessMaxAcu: scaling['MaxCapacity'] } : {}),
      ...(str(input['StorageType']) !== undefined ? { storageType: str(input['StorageType']) } : {}),
    });
    this.log(
      `cluster ${id}: master ` +
        `user ${masterUsername}, ` +
        (str(input['DatabaseName'])
          ? `database ${String(input['DatabaseName'])}`
          : 'no database (CreateDBCluster named none)') +
        (str(input['StorageType']) !== undefined ? `, StorageType ${String(input['StorageType'])}` : '') +
        (scaling !== undefined
          ? `, ServerlessV2ScalingConfiguration ${String(scaling['MinCapacity'])}-${String(scaling['MaxCapacity'])} ` +
            'ACUs (its db.serverless servers stand in at the maximum)'
          : ''),
    );
    return this.amendClusters(result);
  }

  private amendCluster(c: Record<string, unknown>): Record<string, unknown> {
    const cluster = this.clusters.get(idOf(c['DBClusterIdentifier']));
    if (!cluster) return c;
    const writer = [...cluster.instances.values()].find((i) => i.role === 'writer' && i.state === 'available');
    const amended: Record<string, unknown> = { ...c };
    if (cluster.storageType !== undefined) amended['StorageType'] = cluster.storageType;
    if (Array.isArray(c['DBClusterMembers'])) {
      amended['DBClusterMembers'] = (c['DBClusterMembers'] as Record<string, unknown>[]).map((m) => {
        const member = cluster.instances.get(idOf(m['DBInstanceIdentifier']));
        return member ? { ...m, DBClusterParameterGroupStatus: this.applyStatus(member, 'cluster') } : m;
      });
    }
    const port = writer?.server?.port ?? writer?.pg?.port;
    if (port !== undefined) {
      amended['Endpoint'] = '127.0.0.1';
      amended['ReaderEndpoint'] = '127.0.0.1';
      amended['Port'] = port;
    } else {
      delete amended['Endpoint'];
      delete amended['ReaderEndpoint'];
    }
    return amended;
  }

  private amendClusters(result: SdkResult): SdkResult {
    const out = { ...result.output };
    if (Array.isArray(out['DBClusters']))
      out['DBClusters'] = (out['DBClusters'] as Record<string, unknown>[]).map((c) => this.amendCluster(c));
    if (out['DBCluster']) out['DBCluster'] = this.amendCluster(out['DBCluster'] as Record<string, unknown>);
    return { ...result, output: out };
  }

  // ------------------------------------------------------------------ instances

  private createInstance(input: Record<string, unknown>, result: SdkResult): SdkResult {
    const out = result.output['DBInstance'] as Record<string, unknown> | undefined;
    const id = (str(out?.['DBInstanceIdentifier']) ?? str(input['DBInstanceIdentifier']) ?? '').toLowerCase();
    const clusterId = (str(input['DBClusterIdentifier']) ?? '').toLowerCase();
    const cluster = this.clusters.get(clusterId);
    if (!cluster) throw new Error(`CreateDBInstance ${id}: cluster ${clusterId} was not created through the rehearsal`);
    const role = [...cluster.instances.values()].some((i) => i.role === 'writer') ? 'reader' : 'writer';
    this.addInstance(
      cluster,
      id,
      role,
      str(input['DBInstanceClass']) ?? '',
      str(input['DBParameterGroupName'])?.toLowerCase(),
    );
    return this.amendInstances(result);
  }

  /** An RDS source DB instance with its own master user and database. */
  private async createSource(input: Record<string, unknown>, result: SdkResult): Promise<SdkResult> {
    const out = result.output['DBInstance'] as Record<string, unknown> | undefined;
    const id = (str(out?.['DBInstanceIdentifier']) ?? str(input['DBInstanceIdentifier']) ?? '').toLowerCase();
    const masterUsername = str(input['MasterUsername']) ?? '';
    const secretArn = str((out?.['MasterUserSecret'] as Record<string, unknown> | undefined)?.['SecretArn']);
    if (input['ManageMasterUserPassword'] === true) {
      if (!secretArn)
        throw new Error(
          `moto created DB instance ${id} with ManageMasterUserPassword but returned no MasterUserSecret.SecretArn`,
        );
      const password = (this.o.masterPassword ?? generateMasterPassword)();
      await this.o.secrets.send(
        new PutSecretValueCommand({
          SecretId: secretArn,
          SecretString: JSON.stringify({ username: masterUsername, password }),
        }),
      );
    }
    const group: EmulatedCluster = {
      id,
      masterUsername,
      databaseName: str(input['DBName']),
      parameterGroup: undefined,
      secretArn: input['ManageMasterUserPassword'] === true ? secretArn : undefined,
      explicitPassword: str(input['MasterUserPassword']),
      instances: new Map(),
      nextServerId: 1,
      notesSaid: new Set(),
      serverKind: serverKindOf(input['Engine']),
      standalone: true,
    };
    this.clusters.set(id, group);
    this.log(
      `DB instance ${id} (${String(input['Engine'])}): master ` +
        `user ${masterUsername}, ` +
        (group.databaseName ? `database ${group.databaseName}` : 'no database (CreateDBInstance named none)'),
    );
    this.addInstance(
      group,
      id,
      'writer',
      str(input['DBInstanceClass']) ?? '',
      str(input['DBParameterGroupName'])?.toLowerCase(),
    );
    return this.amendInstances(result);
  }

  /** A replica of a source, on the source's DB parameter group. */
  private createReplica(input: Record<string, unknown>, result: SdkResult): SdkResult {
    const out = result.output['DBInstance'] as Record<string, unknown> | undefined;
    const id = (str(out?.['DBInstanceIdentifier']) ?? str(input['DBInstanceIdentifier']) ?? '').toLowerCase();
    const sourceId = (str(input['SourceDBInstanceIdentifier']) ?? '').toLowerCase();
    const found = this.findInstance(sourceId);
    if (!found?.cluster.standalone)
      throw new Error(
        `CreateDBInstanceReadReplica ${id}: source ${sourceId} was not created through the rehearsal ` +
          `as an RDS DB instance`,
      );
    this.addInstance(
      found.cluster,
      id,
      'reader',
      str(input['DBInstanceClass']) ?? found.instance.instanceClass,
      found.instance.parameterGroup,
    );
    return this.amendInstances(result);
  }

  private findInstance(id: string): { cluster: EmulatedCluster; instance: EmulatedInstance } | undefined {
    for (const cluster of this.clusters.values()) {
      const instance = cluster.instances.get(id);
      if (instance) return { cluster, instance };
    }
    return undefined;
  }

  private addInstance(
    cluster: EmulatedCluster,
    id: string,
    role: 'writer' | 'reader',
    instanceClass: string,
    parameterGroup: string | undefined,
  ): void {
    const instance: EmulatedInstance = {
      id,
      clusterId: cluster.id,
      role,
      instanceClass,
      parameterGroup,
      serverId: cluster.nextServerId++,
      state: 'creating',
      started: Promise.resolve(undefined),
      applyingUntil: 0,
      pendingReboot: new Set(),
    };
    cluster.instances.set(id, instance);
    const start =
      cluster.serverKind === 'postgresql'
        ? this.startPostgresInstance(cluster, instance)
        : this.startInstance(cluster, instance).then((s) => s.port);
    instance.started = start.then(
      (port) => port,
      (e: unknown) => {
        instance.state = 'failed';
        instance.failure = (e as Error).message;
        this.log(`instance ${id} failed to start: ${instance.failure}`);
        return undefined;
      },
    );
  }

  private get applyingMs(): number {
    return this.o.applyingMs ?? 1500;
  }

  /** The apply status an instance's group of a level reads now. */
  private applyStatus(instance: EmulatedInstance, level: 'cluster' | 'instance'): string {
    if (instance.pendingReboot.has(level)) return 'pending-reboot';
    return Date.now() < instance.applyingUntil ? 'applying' : 'in-sync';
  }

  /** A group some instances run was modified. It reads pending-reboot, or applying while its values are set. */
  private async groupChanged(name: string, level: 'cluster' | 'instance', pendingReboot: boolean): Promise<void> {
    for (const cluster of this.clusters.values()) {
      for (const instance of cluster.instances.values()) {
        const runs = level === 'cluster' ? cluster.parameterGroup === name : instance.parameterGroup === name;
        if (!runs || instance.state === 'creating' || instance.state === 'failed' || instance.state === 'deleting')
          continue;
        if (pendingReboot) {
          instance.pendingReboot.add(level);
          this.log(`instance ${instance.id}: its ${level} parameter group ${name} is pending-reboot`);
        } else {
          instance.applyingUntil = Date.now() + this.applyingMs;
          await this.applyGroupValues(cluster, instance);
        }
      }
    }
  }

  /**
   * RebootDBInstance restarts the engine, with status rebooting meanwhile. See botocore rds service-2.json.
   * A MariaDB stand-in restarts on its datadir and port with the groups' current values.
   * So a static parameter left pending-reboot takes effect. A reader resumes replication.
   * Whoever samples the server lets go of it meanwhile.
   * A PostgreSQL stand-in is not restarted, and its changed values are logged.
   */
  private reboot(id: string): void {
    const found = this.findInstance(id);
    if (!found || found.instance.state !== 'available') return;
    const { cluster, instance } = found;
    instance.state = 'rebooting';
    this.log(`instance ${id} rebooting`);
    const shownFor = sleep(this.o.rebootMs ?? 1000);
    // DeleteDBInstance and shutdown wait for `started`, so they stop the restarted server.
    instance.started = (async () => {
      await this.membersChanged(cluster);
      instance.pendingReboot.clear();
      try {
        if (instance.server) await this.restartServer(cluster, instance);
        else await this.applyGroupValues(cluster, instance);
      } catch (e) {
        if (instance.state === 'rebooting') {
          instance.state = 'failed';
          instance.failure = (e as Error).message;
        }
        this.log(`instance ${id} failed to restart: ${(e as Error).message}`);
        return undefined;
      }
      await shownFor;
      if (instance.state !== 'rebooting') return undefined;
      instance.state = 'available';
      instance.applyingUntil = Date.now() + this.applyingMs;
      this.log(`instance ${id} available again after its reboot`);
      await this.membersChanged(cluster);
      return instance.server?.port ?? instance.pg?.port;
    })();
  }

  /** A MariaDB stand-in restarted on the same datadir and port, with the groups' current values. */
  private async restartServer(cluster: EmulatedCluster, instance: EmulatedInstance): Promise<void> {
    const previous = instance.server!;
    await stopServer(previous, { graceMs: 30_000, keepDir: true });
    this.o.tracker.remove(previous.pid);
    instance.server = undefined;
    if (this.closed || instance.state !== 'rebooting') return;
    const plan = planParameters({
      variant: {
        name: instance.id,
        clusterParameters: cluster.parameterGroup ? (this.groups.get(cluster.parameterGroup)?.params ?? {}) : {},
        instanceParameters: instance.parameterGroup ? (this.groups.get(instance.parameterGroup)?.params ?? {}) : {},
      },
      shape: localShape(instance.instanceClass, this.host, cluster.serverlessMaxAcu),
      catalog: this.o.template.catalog,
      role: instance.role,
      serverVersion: this.o.serverVersion,
    });
    instance.applied = Object.fromEntries(plan.applied.map((a) => [a.name.toLowerCase(), a.value]));
    // The endpoint's port stays the instance's, so only that port is tried.
    const started = await launchServer({
      tools: this.o.tools,
      instanceId: instance.id,
      role: instance.role,
      serverId: instance.serverId,
      dir: previous.dir,
      options: { ...replicationOptions(instance.role), ...plan.startup },
      admin: LOCAL_LOGINS.admin,
      findPort: () => Promise.resolve(previous.port),
      portAttempts: 1,
    });
    const server = started.info;
    this.o.tracker.add(server.pid, { group: false, marker: server.defaultsFile });
    instance.server = server;
    // A reader starts with skip-slave-start, and its replication settings are in its datadir.
    if (instance.role === 'reader') await queryServer(server, 'START SLAVE');
    const notes = [
      ...(await applyDynamicParameters(server, plan, this.o.template.catalog)),
      ...(await verifyParameters(server, plan, this.o.template.catalog)).notes,
    ];
    for (const n of notes) this.log(`${instance.id}: ${n.message}`);
    this.log(`instance ${instance.id} restarted on 127.0.0.1:${server.port} (pid ${server.pid})`);
  }

  /** Sets the dynamic values on a running MariaDB stand-in and logs the static ones. */
  private async applyGroupValues(cluster: EmulatedCluster, instance: EmulatedInstance): Promise<void> {
    const server = instance.server;
    if (!server) {
      this.log(`${instance.id}: changed parameter values are not applied to a PostgreSQL stand-in after it started`);
      return;
    }
    const plan = planParameters({
      variant: {
        name: instance.id,
        clusterParameters: cluster.parameterGroup ? (this.groups.get(cluster.parameterGroup)?.params ?? {}) : {},
        instanceParameters: instance.parameterGroup ? (this.groups.get(instance.parameterGroup)?.params ?? {}) : {},
      },
      shape: localShape(instance.instanceClass, this.host),
      catalog: this.o.template.catalog,
      role: instance.role,
      serverVersion: this.o.serverVersion,
    });
    instance.applied = Object.fromEntries(plan.applied.map((a) => [a.name.toLowerCase(), a.value]));
    const notes = await applyDynamicParameters(server, plan, this.o.template.catalog).catch((e: unknown) => [
      { message: (e as Error).message },
    ]);
    for (const n of notes) this.log(`${instance.id}: ${n.message}`);
    const statics = Object.keys(plan.startup);
    if (statics.length > 0)
      this.log(
        `${instance.id}: start-up values not re-applied without a restart of the stand-in: ${statics.join(', ')}`,
      );
  }

  private writerOf(cluster: EmulatedCluster): EmulatedInstance | undefined {
    return [...cluster.instances.values()].find((i) => i.role === 'writer');
  }

  private async masterPassword(cluster: EmulatedCluster): Promise<string> {
    if (cluster.explicitPassword !== undefined) return cluster.explicitPassword;
    if (!cluster.secretArn)
      throw new Error(`cluster ${cluster.id} has neither a managed secret nor a MasterUserPassword`);
    const secret = await this.o.secrets.send(new GetSecretValueCommand({ SecretId: cluster.secretArn }));
    const password = (JSON.parse(secret.SecretString ?? '{}') as { password?: unknown }).password;
    if (typeof password !== 'string') throw new Error(`the master user secret of ${cluster.id} has no "password"`);
    return password;
  }

  private async startInstance(cluster: EmulatedCluster, instance: EmulatedInstance): Promise<ServerInfo> {
    const writer = instance.role === 'reader' ? this.writerOf(cluster) : undefined;
    // A reader replicates from the writer, so it can only start once the writer runs.
    if (writer) await writer.started;
    const writerServer = writer?.server;
    if (instance.role === 'reader' && !writerServer) throw new Error(`the writer of ${cluster.id} is not running`);
    if (this.closed || instance.state !== 'creating') throw new Error('deleted while creating');

    const shape = localShape(instance.instanceClass, this.host, cluster.serverlessMaxAcu);
    const clusterParameters = cluster.parameterGroup ? (this.groups.get(cluster.parameterGroup)?.params ?? {}) : {};
    const instanceParameters = instance.parameterGroup ? (this.groups.get(instance.parameterGroup)?.params ?? {}) : {};
    const plan = planParameters({
      variant: { name: instance.id, clusterParameters: clusterParameters, instanceParameters: instanceParameters },
      shape,
      catalog: this.o.template.catalog,
      role: instance.role,
      serverVersion: this.o.serverVersion,
    });
    instance.applied = Object.fromEntries(plan.applied.map((a) => [a.name.toLowerCase(), a.value]));
    const dir = join(this.o.dir, `i${++this.serverDirs}`);
    await mkdir(this.o.dir, { recursive: true });
    const started = await startServerFromTemplate(this.o.template.datadir, {
      tools: this.o.tools,
      instanceId: instance.id,
      role: instance.role,
      serverId: instance.serverId,
      dir,
      options: { ...replicationOptions(instance.role), ...plan.startup },
      admin: LOCAL_LOGINS.admin,
    });
    const server = started.info;
    this.o.tracker.add(server.pid, { group: false, marker: server.defaultsFile });
    instance.server = server;
    try {
      if (instance.role === 'writer') await this.createMasterAccount(cluster, server);
      else await this.attachAndCatchUp(server, writerServer!);
      const notes: PlanNote[] = [
        ...plan.notes,
        ...(await applyDynamicParameters(server, plan, this.o.template.catalog)),
        ...(await verifyParameters(server, plan, this.o.template.catalog)).notes,
      ];
      for (const n of notes) {
        // Paths name the instance, so each message is said once per cluster.
        const text = n.message.replace(new RegExp(instance.id, 'g'), '<instance>');
        if (cluster.notesSaid.has(text)) continue;
        cluster.notesSaid.add(text);
        this.log(`${cluster.id}: ${n.message}`);
      }
    } catch (e) {
      await this.stop(instance);
      throw e;
    }
    if (deletedMeanwhile(instance)) {
      // Deleted while it started. deleteInstance waits for this promise and stops it.
      return server;
    }
    instance.state = 'available';
    instance.applyingUntil = Date.now() + this.applyingMs;
    this.log(`instance ${instance.id} (${instance.role}) available on 127.0.0.1:${server.port}`);
    await this.membersChanged(cluster);
    return server;
  }

  /** The master user and DatabaseName on the writer, replicated to readers. */
  private async createMasterAccount(cluster: EmulatedCluster, writer: ServerInfo): Promise<void> {
    const password = await this.masterPassword(cluster);
    const user = `${sqlString(cluster.masterUsername)}@'%'`;
    await queryServer(
      writer,
      [
        `CREATE USER ${user} IDENTIFIED BY ${sqlString(password)};`,
        `GRANT ${MASTER_USER_PRIVILEGES.join(', ')} ON *.* TO ${user} WITH GRANT OPTION;`,
        ...(cluster.databaseName ? [`CREATE DATABASE ${sqlIdentifier(cluster.databaseName)};`] : []),
      ].join('\n'),
    );
  }

  private async attachAndCatchUp(reader: ServerInfo, writer: ServerInfo): Promise<void> {
    await attachReader(reader, writer);
    const deadline = Date.now() + 120_000;
    for (;;) {
      const { replicas } = await replicationStatus({ writer, readers: [reader] });
      const r = replicas[0]!;
      if (r.caughtUp) return;
      if (r.lastIoError || r.lastSqlError)
        throw new Error(`replication to ${reader.instanceId} failed: ${r.lastSqlError || r.lastIoError}`);
      if (Date.now() > deadline) throw new Error(`${reader.instanceId} did not catch up with the writer within 120 s`);
      await sleep(100);
    }
  }

  private postgresTools?: Promise<{ readonly tools: PostgresTools; readonly template: PostgresTemplate }>;

  private postgres(): Promise<{ readonly tools: PostgresTools; readonly template: PostgresTemplate }> {
    if (!this.o.postgres)
      throw new Error('a PostgreSQL engine was asked for, but the rehearsal was given no PostgreSQL');
    this.postgresTools ??= this.o.postgres();
    return this.postgresTools;
  }

  /** The source or writer comes from the template, a replica from a base backup of it. */
  private async startPostgresInstance(cluster: EmulatedCluster, instance: EmulatedInstance): Promise<number> {
    const writer = instance.role === 'reader' ? this.writerOf(cluster) : undefined;
    if (writer) await writer.started;
    const primary = writer?.pg;
    if (instance.role === 'reader' && !primary) throw new Error(`the writer of ${cluster.id} is not running`);
    if (this.closed || instance.state !== 'creating') throw new Error('deleted while creating');
    const { tools, template } = await this.postgres();
    const clusterParameters = cluster.parameterGroup ? (this.groups.get(cluster.parameterGroup)?.params ?? {}) : {};
    const instanceParameters = instance.parameterGroup ? (this.groups.get(instance.parameterGroup)?.params ?? {}) : {};
    const plan = planPostgresParameters({
      variant: { name: instance.id, clusterParameters, instanceParameters } as unknown as ResolvedVariant,
      shape: localShape(instance.instanceClass, this.host, cluster.serverlessMaxAcu),
      settings: template.settings,
      version: tools.version,
      role: instance.role,
    });
    instance.applied = { ...plan.applied };
    const dir = join(this.o.dir, `i${++this.serverDirs}`);
    await mkdir(this.o.dir, { recursive: true });
    await openPathFor(tools, this.o.dir, this.o.ownedRoot ?? this.o.dir);
    const datadir = await preparePostgresDir(tools, dir, primary ? undefined : template.datadir);
    if (primary) await baseBackup(tools, primary, datadir);
    await writeFile(join(datadir, PG_CONF_INCLUDE), plan.conf);
    await preparePostgresDir(tools, dir);
    const server = await startPostgres({
      tools,
      instanceId: instance.id,
      role: instance.role,
      dir,
      datadir,
      ...(primary
        ? {
            managed: {
              primary_conninfo:
                `host=${primary.socketDir} port=${primary.port} user=postgres ` + `application_name=${instance.id}`,
            },
          }
        : {}),
    });
    const owner = postgresOwnerUid();
    this.o.tracker.add(server.pid, { group: false, marker: server.datadir, ...(owner !== undefined ? { owner } : {}) });
    instance.pg = server;
    try {
      if (primary) await this.postgresCatchUp(cluster.id, primary, server);
      else await this.createPostgresMasterAccount(cluster, server);
      for (const n of [...plan.notes, ...(await verifyPostgresParameters(server, instance.id, plan))]) {
        const text = n.message.replace(new RegExp(instance.id, 'g'), '<instance>');
        if (cluster.notesSaid.has(text)) continue;
        cluster.notesSaid.add(text);
        this.log(`${cluster.id}: ${n.message}`);
      }
    } catch (e) {
      await this.stop(instance);
      throw e;
    }
    if (deletedMeanwhile(instance)) return server.port;
    instance.state = 'available';
    instance.applyingUntil = Date.now() + this.applyingMs;
    this.log(`instance ${instance.id} (${instance.role}, PostgreSQL) available on 127.0.0.1:${server.port}`);
    await this.membersChanged(cluster);
    return server.port;
  }

  /** The master user owns DBName, created or the template's. */
  private async createPostgresMasterAccount(cluster: EmulatedCluster, server: PostgresServer): Promise<void> {
    const password = await this.masterPassword(cluster);
    const role = `"${cluster.masterUsername.replace(/"/g, '""')}"`;
    const admin = { bindir: server.bindir, socketDir: server.socketDir, port: server.port, database: 'postgres' };
    await pgQuery(admin, `CREATE ROLE ${role} LOGIN CREATEDB CREATEROLE PASSWORD ${pgString(password)}`);
    if (!cluster.databaseName) return;
    const db = `"${cluster.databaseName.replace(/"/g, '""')}"`;
    const exists = await pgQuery(admin, `SELECT 1 FROM pg_database WHERE datname = ${pgString(cluster.databaseName)}`);
    // The template already holds a database of that name with the heartbeat schema, so hand it over.
    await pgQuery(
      admin,
      exists.length > 0 ? `ALTER DATABASE ${db} OWNER TO ${role}` : `CREATE DATABASE ${db} OWNER ${role}`,
    );
  }

  private async postgresCatchUp(clusterId: string, primary: PostgresServer, replica: PostgresServer): Promise<void> {
    const deadline = Date.now() + 120_000;
    for (;;) {
      const { replicas } = await postgresReplicationStatus({ clusterId, writer: primary, readers: [replica] });
      if (replicas[0]?.caughtUp) return;
      if (Date.now() > deadline)
        throw new Error(
          `${replica.instanceId} did not catch up with ${primary.instanceId} within 120 s ` +
            `(${replicas[0]?.state ?? 'not connected'})`,
        );
      await sleep(100);
    }
  }

  private amendInstance(i: Record<string, unknown>): Record<string, unknown> {
    const instance = this.findInstance(idOf(i['DBInstanceIdentifier']))?.instance;
    if (!instance) return i;
    const amended: Record<string, unknown> = { ...i, DBInstanceStatus: instance.state };
    if (Array.isArray(i['DBParameterGroups'])) {
      amended['DBParameterGroups'] = (i['DBParameterGroups'] as Record<string, unknown>[]).map((g) => ({
        ...g,
        ParameterApplyStatus: this.applyStatus(instance, 'instance'),
      }));
    }
    const port = instance.server?.port ?? instance.pg?.port;
    if (instance.state === 'available' && port !== undefined)
      amended['Endpoint'] = { ...(i['Endpoint'] as object | undefined), Address: '127.0.0.1', Port: port };
    else delete amended['Endpoint'];
    return amended;
  }

  private amendInstances(result: SdkResult): SdkResult {
    const out = { ...result.output };
    if (Array.isArray(out['DBInstances']))
      out['DBInstances'] = (out['DBInstances'] as Record<string, unknown>[]).map((i) => this.amendInstance(i));
    if (out['DBInstance']) out['DBInstance'] = this.amendInstance(out['DBInstance'] as Record<string, unknown>);
    return { ...result, output: out };
  }

  private async stop(instance: EmulatedInstance): Promise<void> {
    const pg = instance.pg;
    instance.pg = undefined;
    if (pg) {
      await stopPostgres(pg, { graceMs: 10_000 });
      this.o.tracker.remove(pg.pid);
    }
    const server = instance.server;
    instance.server = undefined;
    if (!server) return;
    await stopServer(server, { graceMs: 10_000 });
    this.o.tracker.remove(server.pid);
  }

  private async deleteInstance(id: string): Promise<void> {
    for (const cluster of this.clusters.values()) {
      const instance = cluster.instances.get(id);
      if (!instance) continue;
      const wasAvailable = instance.state === 'available';
      instance.state = 'deleting';
      // Whoever samples the server lets go of it before it stops.
      if (wasAvailable) await this.membersChanged(cluster);
      await instance.started;
      await this.stop(instance);
      cluster.instances.delete(id);
      this.log(`instance ${id} deleted, its server stopped`);
    }
  }

  private async membersChanged(cluster: EmulatedCluster): Promise<void> {
    if (!this.o.onMembersChanged) return;
    const available = [...cluster.instances.values()].filter((i) => i.state === 'available' && (i.server || i.pg));
    const pg = available.filter((i) => i.pg);
    await this.o.onMembersChanged({
      clusterId: cluster.id,
      writer: available.find((i) => i.role === 'writer')?.server,
      readers: available.filter((i) => i.role === 'reader' && i.server).map((i) => i.server!),
      ...(cluster.serverKind === 'postgresql'
        ? {
            postgres: {
              writer: pg.find((i) => i.role === 'writer')?.pg,
              readers: pg.filter((i) => i.role === 'reader').map((i) => i.pg!),
            },
          }
        : {}),
      rdsInstances: cluster.standalone,
      ...(cluster.serverlessMaxAcu !== undefined ? { serverlessMaxAcu: cluster.serverlessMaxAcu } : {}),
    });
  }

  // ------------------------------------------------------------------ what is left

  /** Servers still running, though the workflow should have deleted every instance. */
  runningServers(): { instanceId: string; clusterId: string; pid: number; port: number }[] {
    return [...this.clusters.values()].flatMap((c) =>
      [...c.instances.values()].flatMap((i) => {
        const s = i.server ?? i.pg;
        return s ? [{ instanceId: i.id, clusterId: c.id, pid: s.pid, port: s.port }] : [];
      }),
    );
  }

  /** Stops every server, whatever the workflow did, and removes their directories. */
  async shutdown(): Promise<void> {
    this.closed = true;
    for (const cluster of this.clusters.values()) {
      for (const instance of cluster.instances.values()) {
        instance.state = 'deleting';
        await instance.started;
        await this.stop(instance);
      }
    }
    this.clusters.clear();
    await rm(this.o.dir, { recursive: true, force: true });
  }
}
