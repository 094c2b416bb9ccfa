/**
 * What a cell has on AWS right now, with each resource's creation time, for the bill of what really ran.
 * The TeardownCell Task records it before and after each of its passes.
 * It is read-only: the same Describe calls the teardown makes.
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

/** EC2 bills a Linux instance until it starts shutting down. See botocore ec2/2016-11-15, Instance.State. */
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

/** The cell's EC2 instances by its run and cell tags, in any state. */
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
