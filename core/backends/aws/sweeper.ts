/**
 * What the workflow's Catch cannot clean up, such as an aborted execution or a crashed Lambda.
 * Both sweeps delete each cell in dependency order. Idempotent: not-found is done.
 */
import { DescribeInstancesCommand } from '@aws-sdk/client-ec2';
import { CreateTagsCommand } from '@aws-sdk/client-ec2';
import {
  AddTagsToResourceCommand,
  DescribeDBClusterParameterGroupsCommand,
  DescribeDBClustersCommand,
  DescribeDBInstancesCommand,
  DescribeDBParameterGroupsCommand,
  ListTagsForResourceCommand,
  type DBCluster,
  type DBInstance,
  type Tag as RdsTag,
} from '@aws-sdk/client-rds';
import { ListSecretsCommand, TagResourceCommand } from '@aws-sdk/client-secrets-manager';
import { call, errorCode, isNotFound, rethrow } from './aws-errors';
import type { AwsClients } from './clients';
import type { AwsBackendConfig } from './config';
import { cellNames, tagKeys } from './names';
import { deleteCellResources, deleteSecret, isWriterInstance, type DeleteReport } from './teardown';

export interface SweepReport {
  readonly cells: readonly { readonly runId: string; readonly cellId: string; readonly expiresAt: string | null }[];
  readonly deleted: readonly string[];
  readonly alreadyGone: readonly string[];
  readonly pending: readonly string[];
  /** Resources re-tagged to expire now for the next scheduled sweep, by teardownRun only. */
  readonly marked: readonly string[];
  /** Resources the re-tagging could not reach, with the error. The rest of the run still marks it. */
  readonly markFailed: readonly string[];
}

interface CellKey {
  runId: string;
  cellId: string;
  expiresAt: string | null;
  clusterIds: Set<string>;
  clusterParameterGroups: Set<string>;
  instanceParameterGroups: Set<string>;
  clientIds: Set<string>;
  /** DB instances outside any cluster. */
  dbInstanceIds: Set<string>;
  /** Secrets Manager ARNs of self-managed cells' credentials. */
  secretArns: Set<string>;
}

type Tags = ReadonlyMap<string, string>;
const tagMap = (tags: readonly { Key?: string | undefined; Value?: string | undefined }[] | undefined): Tags =>
  new Map((tags ?? []).filter((t) => t.Key !== undefined).map((t) => [t.Key!, t.Value ?? '']));

async function allClusters(clients: AwsClients): Promise<DBCluster[]> {
  const out: DBCluster[] = [];
  let marker: string | undefined;
  do {
    const page = await call('RDS DescribeDBClusters', () =>
      clients.rds.send(new DescribeDBClustersCommand({ ...(marker ? { Marker: marker } : {}) })),
    );
    out.push(...(page.DBClusters ?? []));
    marker = page.Marker;
  } while (marker);
  return out;
}

async function allInstances(clients: AwsClients): Promise<DBInstance[]> {
  const out: DBInstance[] = [];
  let marker: string | undefined;
  do {
    const page = await call('RDS DescribeDBInstances', () =>
      clients.rds.send(new DescribeDBInstancesCommand({ ...(marker ? { Marker: marker } : {}) })),
    );
    out.push(...(page.DBInstances ?? []));
    marker = page.Marker;
  } while (marker);
  return out;
}

async function rdsTags(clients: AwsClients, arn: string): Promise<RdsTag[]> {
  const out = await call(`RDS ListTagsForResource ${arn}`, () =>
    clients.rds.send(new ListTagsForResourceCommand({ ResourceName: arn })),
  );
  return out.TagList ?? [];
}

/** Parameter groups whose name looks like ours, with their tags. They need ListTagsForResource. */
async function ourParameterGroups(
  clients: AwsClients,
): Promise<{ kind: 'cluster' | 'instance'; name: string; arn: string; tags: Tags }[]> {
  const found: { kind: 'cluster' | 'instance'; name: string; arn: string; tags: Tags }[] = [];
  let marker: string | undefined;
  do {
    const page = await call('RDS DescribeDBClusterParameterGroups', () =>
      clients.rds.send(new DescribeDBClusterParameterGroupsCommand({ ...(marker ? { Marker: marker } : {}) })),
    );
    for (const g of page.DBClusterParameterGroups ?? []) {
      if (g.DBClusterParameterGroupName?.startsWith('ab-') && g.DBClusterParameterGroupArn) {
        found.push({
          kind: 'cluster',
          name: g.DBClusterParameterGroupName,
          arn: g.DBClusterParameterGroupArn,
          tags: tagMap(await rdsTags(clients, g.DBClusterParameterGroupArn)),
        });
      }
    }
    marker = page.Marker;
  } while (marker);
  marker = undefined;
  do {
    const page = await call('RDS DescribeDBParameterGroups', () =>
      clients.rds.send(new DescribeDBParameterGroupsCommand({ ...(marker ? { Marker: marker } : {}) })),
    );
    for (const g of page.DBParameterGroups ?? []) {
      if (g.DBParameterGroupName?.startsWith('ab-') && g.DBParameterGroupArn) {
        found.push({
          kind: 'instance',
          name: g.DBParameterGroupName,
          arn: g.DBParameterGroupArn,
          tags: tagMap(await rdsTags(clients, g.DBParameterGroupArn)),
        });
      }
    }
    marker = page.Marker;
  } while (marker);
  return found;
}

/** One resource carrying the run and cell tags. `ref` is the ARN for RDS, or the instance id for EC2. */
interface TaggedResource {
  readonly kind:
    'rds-cluster' | 'rds-instance' | 'rds-cluster-parameter-group' | 'rds-parameter-group' | 'ec2-instance' | 'secret';
  readonly name: string;
  readonly ref: string | undefined;
  readonly clusterId?: string;
  readonly tags: Tags;
}

/** Every resource of ours in the account and region that carries run and cell tags. */
async function inventory(clients: AwsClients, config: AwsBackendConfig): Promise<TaggedResource[]> {
  const k = tagKeys(config.tagKeyPrefix);
  const found: TaggedResource[] = [];
  for (const cl of await allClusters(clients)) {
    if (cl.DBClusterIdentifier)
      found.push({
        kind: 'rds-cluster',
        name: cl.DBClusterIdentifier,
        ref: cl.DBClusterArn,
        clusterId: cl.DBClusterIdentifier,
        tags: tagMap(cl.TagList),
      });
  }
  for (const inst of await allInstances(clients)) {
    if (inst.DBInstanceIdentifier) {
      found.push({
        kind: 'rds-instance',
        name: inst.DBInstanceIdentifier,
        ref: inst.DBInstanceArn,
        ...(inst.DBClusterIdentifier ? { clusterId: inst.DBClusterIdentifier } : {}),
        tags: tagMap(inst.TagList),
      });
    }
  }
  for (const g of await ourParameterGroups(clients)) {
    found.push({
      kind: g.kind === 'cluster' ? 'rds-cluster-parameter-group' : 'rds-parameter-group',
      name: g.name,
      ref: g.arn,
      tags: g.tags,
    });
  }
  for (const i of await findLiveInstancesWithTags(clients, k.expiresAt))
    found.push({ kind: 'ec2-instance', name: i.id, ref: i.id, tags: i.tags });
  for (const secret of await ourSecrets(clients, k.expiresAt))
    found.push({ kind: 'secret', name: secret.name, ref: secret.arn, tags: secret.tags });
  return found.filter((r) => r.tags.has(k.runId) && r.tags.has(k.cellId));
}

function groupCells(resources: readonly TaggedResource[], config: AwsBackendConfig): CellKey[] {
  const k = tagKeys(config.tagKeyPrefix);
  const cells = new Map<string, CellKey>();
  for (const r of resources) {
    const runId = r.tags.get(k.runId)!;
    const cellId = r.tags.get(k.cellId)!;
    const key = `${runId}\n${cellId}`;
    let c = cells.get(key);
    if (!c) {
      c = {
        runId,
        cellId,
        expiresAt: r.tags.get(k.expiresAt) ?? null,
        clusterIds: new Set(),
        clusterParameterGroups: new Set(),
        instanceParameterGroups: new Set(),
        clientIds: new Set(),
        dbInstanceIds: new Set(),
        secretArns: new Set(),
      };
      cells.set(key, c);
    }
    if (r.kind === 'rds-cluster' || r.kind === 'rds-instance') {
      if (r.clusterId) c.clusterIds.add(r.clusterId);
      else if (r.kind === 'rds-instance') c.dbInstanceIds.add(r.name);
    } else if (r.kind === 'rds-cluster-parameter-group') c.clusterParameterGroups.add(r.name);
    else if (r.kind === 'rds-parameter-group') c.instanceParameterGroups.add(r.name);
    else if (r.kind === 'secret') c.secretArns.add(r.ref ?? r.name);
    else c.clientIds.add(r.name);
  }
  return [...cells.values()];
}

/**
 * Secrets named like ours that carry the tag key, with their tags.
 * ListSecrets's "tag-key" filter is a case-sensitive prefix match.
 * It lists no secret scheduled for deletion. See botocore secretsmanager, ListSecretsRequest.
 */
async function ourSecrets(clients: AwsClients, tagKey: string): Promise<{ name: string; arn: string; tags: Tags }[]> {
  const found: { name: string; arn: string; tags: Tags }[] = [];
  let token: string | undefined;
  do {
    const page = await call('Secrets Manager ListSecrets tag-key', () =>
      clients.secrets.send(
        new ListSecretsCommand({
          Filters: [{ Key: 'tag-key', Values: [tagKey] }],
          ...(token ? { NextToken: token } : {}),
        }),
      ),
    );
    for (const s of page.SecretList ?? [])
      if (s.Name?.startsWith('ab-') && s.ARN) found.push({ name: s.Name, arn: s.ARN, tags: tagMap(s.Tags) });
    token = page.NextToken;
  } while (token);
  return found;
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
    for (const r of page.Reservations ?? [])
      for (const i of r.Instances ?? []) if (i.InstanceId) found.push({ id: i.InstanceId, tags: tagMap(i.Tags) });
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
          instanceParameterGroups: first
            ? [...new Set([...c.instanceParameterGroups, names.instanceParameterGroup])]
            : [],
          clientInstanceIds: first ? [...c.clientIds] : [],
          ...(first && c.dbInstanceIds.size > 0 ? { dbInstanceIds: [...c.dbInstanceIds] } : {}),
        },
        (i, cluster) => isWriterInstance(i, cluster, names.writerId),
      );
      if (first) {
        const secrets: DeleteReport = { deleted: [], alreadyGone: [], pending: [] };
        for (const arn of c.secretArns) await deleteSecret(clients, arn, secrets);
        report.deleted.push(...secrets.deleted);
        report.alreadyGone.push(...secrets.alreadyGone);
      }
      first = false;
      deleted.push(...report.deleted);
      alreadyGone.push(...report.alreadyGone);
      pending.push(...report.pending);
    }
  }
  return {
    cells: cells.map((c) => ({ runId: c.runId, cellId: c.cellId, expiresAt: c.expiresAt })),
    deleted,
    alreadyGone,
    pending,
    marked: [],
    markFailed: [],
  };
}

/** Runs with at least one resource whose expires-at tag is before `now`. */
function markedRuns(resources: readonly TaggedResource[], config: AwsBackendConfig, now: Date): Set<string> {
  const k = tagKeys(config.tagKeyPrefix);
  const runs = new Set<string>();
  for (const r of resources) {
    const at = Date.parse(r.tags.get(k.expiresAt) ?? '');
    if (Number.isFinite(at) && at < now.getTime()) runs.add(r.tags.get(k.runId)!);
  }
  return runs;
}

/**
 * Delete every run that has a resource whose expires-at tag is before `now`, with all of that run's resources.
 * That covers a resource the re-tagging could not reach.
 */
export async function sweepExpired(clients: AwsClients, config: AwsBackendConfig, now: Date): Promise<SweepReport> {
  const k = tagKeys(config.tagKeyPrefix);
  const resources = await inventory(clients, config);
  const runs = markedRuns(resources, config, now);
  return deleteCells(
    clients,
    groupCells(
      resources.filter((r) => runs.has(r.tags.get(k.runId)!)),
      config,
    ),
  );
}

/** Sets expires-at = `at` on one resource. One deleted meanwhile is nothing to mark. */
async function markForSweep(
  clients: AwsClients,
  config: AwsBackendConfig,
  r: TaggedResource,
  at: string,
  report: { marked: string[]; markFailed: string[] },
): Promise<void> {
  const k = tagKeys(config.tagKeyPrefix);
  const label = `${r.kind}:${r.name}`;
  if (r.ref === undefined) {
    report.markFailed.push(`${label} (no ARN)`);
    return;
  }
  const tag = { Key: k.expiresAt, Value: at };
  try {
    if (r.kind === 'ec2-instance') await clients.ec2.send(new CreateTagsCommand({ Resources: [r.ref], Tags: [tag] }));
    else if (r.kind === 'secret') await clients.secrets.send(new TagResourceCommand({ SecretId: r.ref, Tags: [tag] }));
    else await clients.rds.send(new AddTagsToResourceCommand({ ResourceName: r.ref, Tags: [tag] }));
    report.marked.push(label);
  } catch (e) {
    if (isNotFound(e) || /InvalidInstanceID/.test(errorCode(e))) return;
    // One resource that cannot be tagged, say in a state that refuses it, does not stop the others.
    // The scheduled sweep takes the whole run once any of its resources is marked.
    if (/InvalidDB\w*State|IncorrectInstanceState/.test(errorCode(e)))
      report.markFailed.push(`${label} (${errorCode(e)})`);
    else rethrow(e, `tag ${label} with ${k.expiresAt}`);
  }
}

/**
 * Delete every cell of one run now, whatever its expiry. The rule on failed executions calls it once.
 * What is still pending afterwards is re-tagged to expire at `now`.
 * So the next hourly sweep takes over instead of waiting for the run's own expiry.
 */
export async function teardownRun(
  clients: AwsClients,
  config: AwsBackendConfig,
  runId: string,
  now: Date,
): Promise<SweepReport> {
  const k = tagKeys(config.tagKeyPrefix);
  const ofRun = (resources: readonly TaggedResource[]) => resources.filter((r) => r.tags.get(k.runId) === runId);
  const report = await deleteCells(clients, groupCells(ofRun(await inventory(clients, config)), config));
  if (report.pending.length === 0) return report;
  const marks = { marked: [] as string[], markFailed: [] as string[] };
  const at = now.toISOString();
  for (const r of ofRun(await inventory(clients, config))) {
    const current = Date.parse(r.tags.get(k.expiresAt) ?? '');
    if (Number.isFinite(current) && current <= now.getTime()) continue;
    await markForSweep(clients, config, r, at, marks);
  }
  return { ...report, ...marks };
}
