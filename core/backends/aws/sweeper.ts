/**
 * What the workflow's Catch cannot clean up (an aborted or timed-out execution, a crashed Lambda):
 * - sweepExpired: the scheduled sweeper; deletes every cell whose resources carry an
 *   `<prefix>expires-at` tag in the past;
 * - teardownRun: the EventBridge rule on ABORTED/TIMED_OUT/FAILED executions; deletes every cell of
 *   one run now.
 * Both find resources by tag (DescribeDBClusters/DescribeDBInstances return TagList; parameter
 * groups need ListTagsForResource; EC2 DescribeInstances filters on tag-key), group them by
 * (run-id, cell-id) and delete each cell in dependency order (teardown.ts). RDS deletes are
 * asynchronous: what is still deleting is reported as pending and finished by the next call.
 * Idempotent: not-found is done.
 */
import { DescribeInstancesCommand } from '@aws-sdk/client-ec2';
import {
  DescribeDBClusterParameterGroupsCommand,
  DescribeDBClustersCommand,
  DescribeDBInstancesCommand,
  DescribeDBParameterGroupsCommand,
  ListTagsForResourceCommand,
  type DBCluster,
  type DBInstance,
  type Tag as RdsTag,
} from '@aws-sdk/client-rds';
import { call } from './aws-errors';
import { isWriterInstance } from './aws-backend';
import type { AwsClients } from './clients';
import type { AwsBackendConfig } from './config';
import { cellNames, tagKeys } from './names';
import { deleteCellResources } from './teardown';

export interface SweepReport {
  readonly cells: readonly { readonly runId: string; readonly cellId: string; readonly expiresAt: string | null }[];
  readonly deleted: readonly string[];
  readonly alreadyGone: readonly string[];
  readonly pending: readonly string[];
}

interface CellKey {
  runId: string;
  cellId: string;
  expiresAt: string | null;
  clusterIds: Set<string>;
  clusterParameterGroups: Set<string>;
  instanceParameterGroups: Set<string>;
  clientIds: Set<string>;
}

type Tags = ReadonlyMap<string, string>;
const tagMap = (tags: readonly { Key?: string | undefined; Value?: string | undefined }[] | undefined): Tags =>
  new Map((tags ?? []).filter((t) => t.Key !== undefined).map((t) => [t.Key!, t.Value ?? '']));

async function allClusters(clients: AwsClients): Promise<DBCluster[]> {
  const out: DBCluster[] = [];
  let marker: string | undefined;
  do {
    const page = await call('RDS DescribeDBClusters', () => clients.rds.send(new DescribeDBClustersCommand({ ...(marker ? { Marker: marker } : {}) })));
    out.push(...(page.DBClusters ?? []));
    marker = page.Marker;
  } while (marker);
  return out;
}

async function allInstances(clients: AwsClients): Promise<DBInstance[]> {
  const out: DBInstance[] = [];
  let marker: string | undefined;
  do {
    const page = await call('RDS DescribeDBInstances', () => clients.rds.send(new DescribeDBInstancesCommand({ ...(marker ? { Marker: marker } : {}) })));
    out.push(...(page.DBInstances ?? []));
    marker = page.Marker;
  } while (marker);
  return out;
}

async function rdsTags(clients: AwsClients, arn: string): Promise<RdsTag[]> {
  const out = await call(`RDS ListTagsForResource ${arn}`, () => clients.rds.send(new ListTagsForResourceCommand({ ResourceName: arn })));
  return out.TagList ?? [];
}

/** Parameter groups whose name looks like ours ("ab-..."), with their tags. */
async function ourParameterGroups(clients: AwsClients): Promise<{ kind: 'cluster' | 'instance'; name: string; tags: Tags }[]> {
  const found: { kind: 'cluster' | 'instance'; name: string; tags: Tags }[] = [];
  let marker: string | undefined;
  do {
    const page = await call('RDS DescribeDBClusterParameterGroups', () => clients.rds.send(new DescribeDBClusterParameterGroupsCommand({ ...(marker ? { Marker: marker } : {}) })));
    for (const g of page.DBClusterParameterGroups ?? []) {
      if (g.DBClusterParameterGroupName?.startsWith('ab-') && g.DBClusterParameterGroupArn) {
        found.push({ kind: 'cluster', name: g.DBClusterParameterGroupName, tags: tagMap(await rdsTags(clients, g.DBClusterParameterGroupArn)) });
      }
    }
    marker = page.Marker;
  } while (marker);
  marker = undefined;
  do {
    const page = await call('RDS DescribeDBParameterGroups', () => clients.rds.send(new DescribeDBParameterGroupsCommand({ ...(marker ? { Marker: marker } : {}) })));
    for (const g of page.DBParameterGroups ?? []) {
      if (g.DBParameterGroupName?.startsWith('ab-') && g.DBParameterGroupArn) {
        found.push({ kind: 'instance', name: g.DBParameterGroupName, tags: tagMap(await rdsTags(clients, g.DBParameterGroupArn)) });
      }
    }
    marker = page.Marker;
  } while (marker);
  return found;
}

/** Every cell with at least one tagged resource the predicate selects. */
async function findCells(clients: AwsClients, config: AwsBackendConfig, select: (tags: Tags) => boolean): Promise<CellKey[]> {
  const k = tagKeys(config.tagKeyPrefix);
  const cells = new Map<string, CellKey>();
  const cellFor = (tags: Tags): CellKey | undefined => {
    const runId = tags.get(k.runId);
    const cellId = tags.get(k.cellId);
    if (runId === undefined || cellId === undefined || !select(tags)) return undefined;
    const key = `${runId}\n${cellId}`;
    let c = cells.get(key);
    if (!c) {
      c = { runId, cellId, expiresAt: tags.get(k.expiresAt) ?? null, clusterIds: new Set(), clusterParameterGroups: new Set(), instanceParameterGroups: new Set(), clientIds: new Set() };
      cells.set(key, c);
    }
    return c;
  };
  for (const cl of await allClusters(clients)) {
    if (cl.DBClusterIdentifier) cellFor(tagMap(cl.TagList))?.clusterIds.add(cl.DBClusterIdentifier);
  }
  for (const inst of await allInstances(clients)) {
    if (inst.DBClusterIdentifier) cellFor(tagMap(inst.TagList))?.clusterIds.add(inst.DBClusterIdentifier);
  }
  for (const g of await ourParameterGroups(clients)) {
    const c = cellFor(g.tags);
    if (c) (g.kind === 'cluster' ? c.clusterParameterGroups : c.instanceParameterGroups).add(g.name);
  }
  const ec2 = await findLiveInstancesWithTags(clients, k.expiresAt);
  for (const i of ec2) cellFor(i.tags)?.clientIds.add(i.id);
  return [...cells.values()];
}

async function findLiveInstancesWithTags(clients: AwsClients, tagKey: string): Promise<{ id: string; tags: Tags }[]> {
  const found: { id: string; tags: Tags }[] = [];
  let token: string | undefined;
  do {
    const page = await call('EC2 DescribeInstances tag-key', () =>
      clients.ec2.send(
        new DescribeInstancesCommand({
          Filters: [
            { Name: 'tag-key', Values: [tagKey] },
            { Name: 'instance-state-name', Values: ['pending', 'running', 'stopping', 'stopped'] },
          ],
          ...(token ? { NextToken: token } : {}),
        }),
      ),
    );
    for (const r of page.Reservations ?? []) for (const i of r.Instances ?? []) if (i.InstanceId) found.push({ id: i.InstanceId, tags: tagMap(i.Tags) });
    token = page.NextToken;
  } while (token);
  return found;
}

async function deleteCells(clients: AwsClients, cells: readonly CellKey[]): Promise<SweepReport> {
  const deleted: string[] = [];
  const alreadyGone: string[] = [];
  const pending: string[] = [];
  for (const c of cells) {
    const names = cellNames(c.runId, c.cellId);
    // The deterministic names cover what a crashed provision left without tags being readable yet.
    const clusterIds = new Set([...c.clusterIds, names.clusterId]);
    let first = true;
    for (const clusterId of clusterIds) {
      const report = await deleteCellResources(
        clients,
        {
          clusterId,
          clusterParameterGroups: first ? [...new Set([...c.clusterParameterGroups, names.clusterParameterGroup])] : [],
          instanceParameterGroups: first ? [...new Set([...c.instanceParameterGroups, names.instanceParameterGroup])] : [],
          clientInstanceIds: first ? [...c.clientIds] : [],
        },
        (i, cluster) => isWriterInstance(i, cluster, names.writerId),
      );
      first = false;
      deleted.push(...report.deleted);
      alreadyGone.push(...report.alreadyGone);
      pending.push(...report.pending);
    }
  }
  return { cells: cells.map((c) => ({ runId: c.runId, cellId: c.cellId, expiresAt: c.expiresAt })), deleted, alreadyGone, pending };
}

/** Delete every cell whose expires-at tag is before `now`. */
export async function sweepExpired(clients: AwsClients, config: AwsBackendConfig, now: Date): Promise<SweepReport> {
  const k = tagKeys(config.tagKeyPrefix);
  const cells = await findCells(clients, config, (tags) => {
    const at = Date.parse(tags.get(k.expiresAt) ?? '');
    return Number.isFinite(at) && at < now.getTime();
  });
  return deleteCells(clients, cells);
}

/** Delete every cell of one run (the abort/timeout rule), whatever its expiry. */
export async function teardownRun(clients: AwsClients, config: AwsBackendConfig, runId: string): Promise<SweepReport> {
  const k = tagKeys(config.tagKeyPrefix);
  const cells = await findCells(clients, config, (tags) => tags.get(k.runId) === runId);
  return deleteCells(clients, cells);
}

