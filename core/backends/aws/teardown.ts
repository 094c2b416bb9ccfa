/**
 * Deleting one cell's AWS resources in dependency order: clients, DB instances, the cluster, its parameter groups.
 * RDS deletes asynchronously, so what still deletes or blocks the next step is returned in `pending`.
 * Not-found is done. API facts come from botocore rds/2014-10-31 and the RDS API Reference.
 */
import { DescribeInstancesCommand, TerminateInstancesCommand, type Filter } from '@aws-sdk/client-ec2';
import {
  DeleteDBClusterCommand,
  DeleteDBClusterParameterGroupCommand,
  DeleteDBInstanceCommand,
  DeleteDBParameterGroupCommand,
  DescribeDBClustersCommand,
  DescribeDBInstancesCommand,
  type DBCluster,
  type DBInstance,
} from '@aws-sdk/client-rds';
import { DeleteSecretCommand, DescribeSecretCommand } from '@aws-sdk/client-secrets-manager';
import { ResourceStillInUseError, type CellResources, type RunContext, type TeardownReport } from '../../backend';
import type { CellPlan } from '../../plan/types';
import type { AwsClients } from './clients';
import { call, errorCode, isNotFound, rethrow } from './aws-errors';
import { cellNames, type TagKeys } from './names';
import { ENGINES } from '../../aurora/engines';

/** The SDK clients a cell's deletion uses. */
export type TeardownClients = Pick<AwsClients, 'ec2' | 'rds' | 'secrets'>;

export interface CellTarget {
  readonly clusterId: string;
  readonly clusterParameterGroups: readonly string[];
  readonly instanceParameterGroups: readonly string[];
  /** EC2 instance ids known to belong to the cell, from the state data or a tag search. */
  readonly clientInstanceIds: readonly string[];
  /** DB instances outside any cluster: the source and its read replicas. */
  readonly dbInstanceIds?: readonly string[];
}

export interface DeleteReport {
  readonly deleted: string[];
  readonly alreadyGone: string[];
  /** Still there: deleting, or blocked by something still deleting. */
  readonly pending: string[];
}

const GONE_EC2_STATES = new Set(['shutting-down', 'terminated']);

export async function describeCluster(
  clients: Pick<AwsClients, 'rds'>,
  clusterId: string,
): Promise<DBCluster | undefined> {
  try {
    const out = await clients.rds.send(new DescribeDBClustersCommand({ DBClusterIdentifier: clusterId }));
    return out.DBClusters?.[0];
  } catch (e) {
    if (isNotFound(e)) return undefined;
    return rethrow(e, `RDS DescribeDBClusters ${clusterId}`);
  }
}

/** One DB instance by identifier. Undefined when it does not exist. */
export async function describeInstance(clients: Pick<AwsClients, 'rds'>, id: string): Promise<DBInstance | undefined> {
  try {
    const out = await clients.rds.send(new DescribeDBInstancesCommand({ DBInstanceIdentifier: id }));
    return out.DBInstances?.[0];
  } catch (e) {
    if (isNotFound(e)) return undefined;
    return rethrow(e, `RDS DescribeDBInstances ${id}`);
  }
}

/**
 * The cell's DB instances outside a cluster, replicas first. A source is deleted only once it has no replica left.
 * Deleting it first would promote MySQL and MariaDB replicas, and leave PostgreSQL ones replicating from nothing.
 * See AWS, RDS User Guide, "Working with DB instance read replicas". Returns whether every one is gone.
 */
async function deleteStandaloneInstances(
  clients: TeardownClients,
  ids: readonly string[],
  report: DeleteReport,
): Promise<boolean> {
  const found: DBInstance[] = [];
  for (const id of new Set(ids)) {
    const i = await describeInstance(clients, id);
    if (i === undefined) report.alreadyGone.push(`rds-instance:${id}`);
    else if (i.DBClusterIdentifier === undefined) found.push(i);
  }
  const isReplica = (i: DBInstance) =>
    i.ReadReplicaSourceDBInstanceIdentifier !== undefined && i.ReadReplicaSourceDBInstanceIdentifier !== '';
  for (const i of found.filter(isReplica)) await deleteDbInstance(clients, i, report);
  for (const i of found.filter((x) => !isReplica(x))) {
    const replicasLeft = [];
    for (const r of i.ReadReplicaDBInstanceIdentifiers ?? [])
      if (await describeInstance(clients, r)) replicasLeft.push(r);
    if (replicasLeft.length > 0)
      report.pending.push(
        `rds-instance:${i.DBInstanceIdentifier} (waiting for its read replica(s) ${replicasLeft.join(', ')})`,
      );
    else await deleteDbInstance(clients, i, report);
  }
  let allGone = true;
  for (const i of found) {
    const after = await describeInstance(clients, i.DBInstanceIdentifier!);
    if (after === undefined) continue;
    allGone = false;
    const label = `rds-instance:${i.DBInstanceIdentifier}`;
    if (!report.pending.some((p) => p.startsWith(label)))
      report.pending.push(`${label} (${after.DBInstanceStatus ?? 'deleting'})`);
  }
  return allGone;
}

export async function describeClusterInstances(
  clients: Pick<AwsClients, 'rds'>,
  clusterId: string,
): Promise<DBInstance[]> {
  const instances: DBInstance[] = [];
  let marker: string | undefined;
  do {
    const out = await call(`RDS DescribeDBInstances db-cluster-id=${clusterId}`, () =>
      clients.rds.send(
        new DescribeDBInstancesCommand({
          Filters: [{ Name: 'db-cluster-id', Values: [clusterId] }],
          ...(marker ? { Marker: marker } : {}),
        }),
      ),
    );
    instances.push(...(out.DBInstances ?? []));
    marker = out.Marker;
  } while (marker);
  return instances;
}

/** EC2 instances matching the filters that are not already terminating. */
export async function findLiveInstances(
  clients: Pick<AwsClients, 'ec2'>,
  filters: Filter[],
): Promise<{ id: string; state: string; az?: string; launchTime?: Date }[]> {
  const found: { id: string; state: string; az?: string; launchTime?: Date }[] = [];
  let token: string | undefined;
  do {
    const out = await call('EC2 DescribeInstances', () =>
      clients.ec2.send(new DescribeInstancesCommand({ Filters: filters, ...(token ? { NextToken: token } : {}) })),
    );
    for (const r of out.Reservations ?? []) {
      for (const i of r.Instances ?? []) {
        if (!i.InstanceId) continue;
        found.push({
          id: i.InstanceId,
          state: i.State?.Name ?? 'unknown',
          ...(i.Placement?.AvailabilityZone ? { az: i.Placement.AvailabilityZone } : {}),
          ...(i.LaunchTime ? { launchTime: i.LaunchTime } : {}),
        });
      }
    }
    token = out.NextToken;
  } while (token);
  return found;
}

/**
 * A self-managed cell's credentials secret, by name or ARN. DescribeSecret asks for it first.
 * Force-deleting a name that no longer exists need not fail, as on moto, so only what exists is reported deleted.
 * Nobody needs the password after the cell, so it gets no recovery window.
 * Secrets Manager then deletes it asynchronously. See botocore secretsmanager, DeleteSecretRequest.
 * A secret already scheduled for deletion makes DeleteSecret fail with InvalidRequestException. It counts as gone.
 */
export async function deleteSecret(
  clients: Pick<AwsClients, 'secrets'>,
  secretId: string,
  report: DeleteReport,
): Promise<void> {
  const label = `secret:${secretId}`;
  try {
    const found = await clients.secrets.send(new DescribeSecretCommand({ SecretId: secretId }));
    if (found.DeletedDate !== undefined) {
      report.alreadyGone.push(label);
      return;
    }
    await clients.secrets.send(new DeleteSecretCommand({ SecretId: secretId, ForceDeleteWithoutRecovery: true }));
    report.deleted.push(label);
  } catch (e) {
    if (isNotFound(e) || (/InvalidRequest/.test(errorCode(e)) && /delet/i.test((e as Error).message)))
      report.alreadyGone.push(label);
    else rethrow(e, `Secrets Manager DeleteSecret ${secretId}`);
  }
}

/** Terminates each instance. Not found or already terminating is gone. */
async function terminateClients(
  clients: Pick<AwsClients, 'ec2'>,
  ids: readonly string[],
  report: DeleteReport,
): Promise<void> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return;
  // One by one, since TerminateInstances fails the whole call when any id is unknown.
  for (const id of unique) {
    try {
      const out = await clients.ec2.send(new TerminateInstancesCommand({ InstanceIds: [id] }));
      const previous = out.TerminatingInstances?.[0]?.PreviousState?.Name;
      (previous !== undefined && GONE_EC2_STATES.has(previous) ? report.alreadyGone : report.deleted).push(
        `ec2-instance:${id}`,
      );
    } catch (e) {
      if (isNotFound(e) || /InvalidInstanceID/.test(errorCode(e))) report.alreadyGone.push(`ec2-instance:${id}`);
      else rethrow(e, `EC2 TerminateInstances ${id}`);
    }
  }
}

async function deleteDbInstance(clients: TeardownClients, instance: DBInstance, report: DeleteReport): Promise<void> {
  const id = instance.DBInstanceIdentifier!;
  if (instance.DBInstanceStatus === 'deleting') {
    report.pending.push(`rds-instance:${id} (deleting)`);
    return;
  }
  try {
    // Instances in failed states need SkipFinalSnapshot, and Aurora instances have no final snapshot anyway.
    await clients.rds.send(
      new DeleteDBInstanceCommand({ DBInstanceIdentifier: id, SkipFinalSnapshot: true, DeleteAutomatedBackups: true }),
    );
    report.deleted.push(`rds-instance:${id}`);
  } catch (e) {
    if (isNotFound(e)) report.alreadyGone.push(`rds-instance:${id}`);
    // Still "creating" or "modifying", say. Try again on the next attempt.
    else if (/InvalidDBInstanceState/.test(errorCode(e)))
      report.pending.push(`rds-instance:${id} (${instance.DBInstanceStatus ?? 'busy'})`);
    else rethrow(e, `RDS DeleteDBInstance ${id}`);
  }
}

async function deleteParameterGroup(
  clients: TeardownClients,
  kind: 'cluster' | 'instance',
  name: string,
  report: DeleteReport,
): Promise<void> {
  const label = kind === 'cluster' ? `rds-cluster-parameter-group:${name}` : `rds-parameter-group:${name}`;
  try {
    if (kind === 'cluster')
      await clients.rds.send(new DeleteDBClusterParameterGroupCommand({ DBClusterParameterGroupName: name }));
    else await clients.rds.send(new DeleteDBParameterGroupCommand({ DBParameterGroupName: name }));
    report.deleted.push(label);
  } catch (e) {
    if (isNotFound(e)) report.alreadyGone.push(label);
    // RDS refuses to delete a parameter group in use.
    else if (/InvalidDBParameterGroupState/.test(errorCode(e))) report.pending.push(`${label} (in use)`);
    else rethrow(e, `RDS Delete ${kind} parameter group ${name}`);
  }
}

/**
 * One pass of the deletion: every call it can make now, in dependency order. Safe to repeat.
 * `isWriter` tells the writer apart, since it goes after the readers.
 */
export async function deleteCellResources(
  clients: TeardownClients,
  target: CellTarget,
  isWriter: (instance: DBInstance, cluster?: DBCluster) => boolean,
): Promise<DeleteReport> {
  const report: DeleteReport = { deleted: [], alreadyGone: [], pending: [] };

  await terminateClients(clients, target.clientInstanceIds, report);

  const cluster = await describeCluster(clients, target.clusterId);
  const instances = await describeClusterInstances(clients, target.clusterId);
  const readers = instances.filter((i) => !isWriter(i, cluster));
  const writers = instances.filter((i) => isWriter(i, cluster));
  for (const i of [...readers, ...writers]) await deleteDbInstance(clients, i, report);

  const remaining = await describeClusterInstances(clients, target.clusterId);
  for (const i of remaining) {
    const label = `rds-instance:${i.DBInstanceIdentifier}`;
    if (!report.pending.some((p) => p.startsWith(label)))
      report.pending.push(`${label} (${i.DBInstanceStatus ?? 'deleting'})`);
  }

  const standaloneGone = await deleteStandaloneInstances(clients, target.dbInstanceIds ?? [], report);

  let clusterGone = cluster === undefined;
  if (cluster === undefined) {
    // A cell on DB instances never had a cluster, so there is nothing to report for it.
    if ((target.dbInstanceIds ?? []).length === 0) report.alreadyGone.push(`rds-cluster:${target.clusterId}`);
  } else if (remaining.length > 0) {
    report.pending.push(`rds-cluster:${target.clusterId} (waiting for ${remaining.length} instance(s))`);
  } else if (cluster.Status === 'deleting') {
    report.pending.push(`rds-cluster:${target.clusterId} (deleting)`);
  } else {
    try {
      await clients.rds.send(
        new DeleteDBClusterCommand({
          DBClusterIdentifier: target.clusterId,
          // A benchmark cluster needs no final snapshot.
          SkipFinalSnapshot: true,
          DeleteAutomatedBackups: true,
        }),
      );
      report.deleted.push(`rds-cluster:${target.clusterId}`);
    } catch (e) {
      if (isNotFound(e)) report.alreadyGone.push(`rds-cluster:${target.clusterId}`);
      // RDS refuses to delete a cluster while instances are still members.
      else if (/InvalidDBClusterState|ToBeDeletedHasActiveMembers/.test(errorCode(e)))
        report.pending.push(`rds-cluster:${target.clusterId} (${cluster.Status ?? 'busy'})`);
      else rethrow(e, `RDS DeleteDBCluster ${target.clusterId}`);
    }
    // Deletion is asynchronous on AWS, and immediate on moto.
    const after = await describeCluster(clients, target.clusterId);
    if (after === undefined) clusterGone = true;
    else if (!report.pending.some((p) => p.startsWith(`rds-cluster:${target.clusterId}`)))
      report.pending.push(`rds-cluster:${target.clusterId} (${after.Status ?? 'deleting'})`);
  }

  if (!standaloneGone) {
    for (const name of [...target.clusterParameterGroups, ...target.instanceParameterGroups])
      report.pending.push(`rds-parameter-group:${name} (DB instances still exist)`);
  } else if (clusterGone) {
    for (const name of target.clusterParameterGroups) await deleteParameterGroup(clients, 'cluster', name, report);
    for (const name of target.instanceParameterGroups) await deleteParameterGroup(clients, 'instance', name, report);
  } else {
    for (const name of target.clusterParameterGroups)
      report.pending.push(`rds-cluster-parameter-group:${name} (cluster still exists)`);
    for (const name of target.instanceParameterGroups)
      report.pending.push(`rds-parameter-group:${name} (cluster still exists)`);
  }
  return report;
}

/** The writer of a cluster, as the cluster reports its members. Else the instance named as the cell's writer. */
export function isWriterInstance(i: DBInstance, cluster: DBCluster | undefined, writerId: string): boolean {
  const member = cluster?.DBClusterMembers?.find((m) => m.DBInstanceIdentifier === i.DBInstanceIdentifier);
  if (member?.IsClusterWriter !== undefined) return member.IsClusterWriter;
  return i.DBInstanceIdentifier === writerId;
}

/**
 * One pass of a cell's teardown. It takes the clients from the state data plus any its tags find.
 * A StartClients that failed after RunInstances leaves such clients.
 * Throws ResourceStillInUseError while something is still deleting, so the state machine's Retry calls again.
 */
export async function teardownCell(
  clients: TeardownClients,
  tags: TagKeys,
  run: RunContext,
  cell: CellPlan,
  resources: CellResources | undefined,
): Promise<TeardownReport> {
  const names = cellNames(run.runId, cell.cellId);
  const tagged = await findLiveInstances(clients, [
    { Name: `tag:${tags.runId}`, Values: [run.runId] },
    { Name: `tag:${tags.cellId}`, Values: [cell.cellId] },
    { Name: 'instance-state-name', Values: ['pending', 'running', 'stopping', 'stopped'] },
  ]);
  const clientIds = [...(resources?.clients.map((c) => c.clientId) ?? []), ...tagged.map((i) => i.id)];
  if (cell.variant.engine !== undefined && ENGINES[cell.variant.engine.kind].topology === 'ec2') {
    // Self-managed servers: the instances and the credentials secret.
    // The tag search above finds the servers with the clients. Nothing waits on EC2's termination.
    const serverIds = (resources?.backendState['serverIds'] ?? '').split(',').filter((id) => id !== '');
    const report: DeleteReport = { deleted: [], alreadyGone: [], pending: [] };
    await terminateClients(clients, [...clientIds, ...serverIds], report);
    await deleteSecret(clients, names.serverSecretName, report);
    return { deleted: report.deleted, alreadyGone: report.alreadyGone };
  }
  // A cell on RDS DB instances: its source and every replica it may have asked for.
  const onInstances = cell.variant.engine !== undefined && ENGINES[cell.variant.engine.kind].topology === 'instance';
  const report = await deleteCellResources(
    clients,
    {
      ...(onInstances
        ? {
            dbInstanceIds: [
              names.writerId,
              ...Array.from({ length: cell.variant.readers }, (_, i) => names.readerId(i + 1)),
            ],
          }
        : {}),
      clusterId: onInstances ? names.clusterId : (resources?.clusterId ?? names.clusterId),
      clusterParameterGroups: onInstances ? [] : [names.clusterParameterGroup],
      // Only a group the cell made, as provisioning decides. The role deletes only groups with the run tag.
      // A group never made carries none, and a condition key missing from the request does not match.
      // So AWS would deny the call, not answer NotFound. See the IAM User Guide, "Condition operators".
      instanceParameterGroups:
        onInstances || Object.keys(cell.variant.instanceParameters).length > 0 ? [names.instanceParameterGroup] : [],
      clientInstanceIds: clientIds,
    },
    (i, cluster) => isWriterInstance(i, cluster, names.writerId),
  );
  if (report.pending.length > 0) {
    throw new ResourceStillInUseError(`teardown of cell ${cell.cellId} is waiting for: ${report.pending.join('; ')}`);
  }
  return { deleted: report.deleted, alreadyGone: report.alreadyGone };
}
