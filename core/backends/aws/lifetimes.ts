/**
 * What a cell has on AWS right now, with the creation time each API gives, for the bill of what
 * really ran (core/plan/bill.ts mergeLifetimes, recorded by the TeardownCell Task before and after
 * each of its passes). Read-only: the same Describe calls the teardown makes.
 *
 * API facts used:
 * - DescribeDBClusters DBCluster.ClusterCreateTime: "The time when the DB cluster was created, in
 *   Universal Coordinated Time (UTC)"; DBCluster.Status "deleting" while RDS deletes it (botocore
 *   rds 2014-10-31 service-2.json).
 * - DescribeDBInstances DBInstance.InstanceCreateTime: "The date and time when the DB instance was
 *   created"; DBInstanceClass; DBInstanceStatus (same file). The filter db-cluster-id lists a
 *   cluster's instances, deleting ones included, until they are gone.
 * - EC2 DescribeInstances Instance.LaunchTime: "The time that the instance was last launched";
 *   InstanceType; State.Name pending | running | shutting-down | terminated | stopping | stopped
 *   (botocore ec2 2016-11-15 service-2.json). EC2 bills a Linux instance until it starts shutting
 *   down, so shutting-down counts as gone.
 */
import { DescribeInstancesCommand } from '@aws-sdk/client-ec2';
import type { DBInstance } from '@aws-sdk/client-rds';
import type { CellResources, RunContext } from '../../backend';
import type { ObservedResource } from '../../plan/bill';
import type { CellPlan } from '../../plan/types';
import { ENGINES } from '../../aurora/engines';
import { call } from './aws-errors';
import type { AwsClients } from './clients';
import { cellNames, type TagKeys } from './names';
import { describeCluster, describeClusterInstances, describeInstance, type TeardownClients } from './teardown';

const GONE_EC2 = new Set(['shutting-down', 'terminated']);

const iso = (d: Date | undefined): string | null => (d === undefined ? null : d.toISOString());

function dbInstance(i: DBInstance): ObservedResource {
  return {
    kind: 'db-instance',
    id: i.DBInstanceIdentifier!,
    type: i.DBInstanceClass ?? null,
    createdAt: iso(i.InstanceCreateTime),
    state: i.DBInstanceStatus === 'deleting' ? 'deleting' : 'live',
  };
}

/** The cell's EC2 instances (clients, a self-managed cell's servers) by its run and cell tags, in any state. */
async function cellEc2Instances(
  clients: Pick<AwsClients, 'ec2'>,
  tags: TagKeys,
  run: RunContext,
  cell: CellPlan,
): Promise<ObservedResource[]> {
  const found: ObservedResource[] = [];
  let token: string | undefined;
  do {
    const out = await call('EC2 DescribeInstances', () =>
      clients.ec2.send(
        new DescribeInstancesCommand({
          Filters: [
            { Name: `tag:${tags.runId}`, Values: [run.runId] },
            { Name: `tag:${tags.cellId}`, Values: [cell.cellId] },
          ],
          ...(token ? { NextToken: token } : {}),
        }),
      ),
    );
    for (const r of out.Reservations ?? []) {
      for (const i of r.Instances ?? []) {
        if (!i.InstanceId) continue;
        found.push({
          kind: 'ec2-instance',
          id: i.InstanceId,
          type: i.InstanceType ?? null,
          createdAt: iso(i.LaunchTime),
          state: GONE_EC2.has(i.State?.Name ?? '') ? 'gone' : 'live',
        });
      }
    }
    token = out.NextToken;
  } while (token);
  return found;
}

/** Every resource of the cell that AWS still lists, as it is now. */
export async function observeCellResources(
  clients: TeardownClients,
  tags: TagKeys,
  run: RunContext,
  cell: CellPlan,
  resources: CellResources | undefined,
): Promise<ObservedResource[]> {
  const names = cellNames(run.runId, cell.cellId);
  const observed = await cellEc2Instances(clients, tags, run, cell);
  const topology = cell.variant.engine !== undefined ? ENGINES[cell.variant.engine.kind].topology : 'cluster';
  if (topology === 'ec2') return observed;
  if (topology === 'instance') {
    for (const id of [
      names.writerId,
      ...Array.from({ length: cell.variant.readers }, (_, i) => names.readerId(i + 1)),
    ]) {
      const i = await describeInstance(clients, id);
      if (i !== undefined) observed.push(dbInstance(i));
    }
    return observed;
  }
  const clusterId = resources?.clusterId ?? names.clusterId;
  const cluster = await describeCluster(clients, clusterId);
  if (cluster !== undefined) {
    observed.push({
      kind: 'db-cluster',
      id: clusterId,
      type: null,
      createdAt: iso(cluster.ClusterCreateTime),
      state: cluster.Status === 'deleting' ? 'deleting' : 'live',
    });
  }
  for (const i of await describeClusterInstances(clients, clusterId)) observed.push(dbInstance(i));
  return observed;
}
