/**
 * RDS's asynchronous phases: teardown while instances and the cluster are still "deleting", and
 * readiness while they are still "creating". moto creates and deletes at once and has no state
 * transitions for RDS, so these phases are played by aws-sdk-client-mock here (the synchronous path
 * runs against moto in aws-backend.test.ts). The same holds for the abort rule's teardownRun, which
 * re-tags what RDS cannot delete yet.
 */
import { DescribeInstancesCommand } from '@aws-sdk/client-ec2';
import {
  AddTagsToResourceCommand,
  DeleteDBClusterCommand,
  DeleteDBClusterParameterGroupCommand,
  DeleteDBInstanceCommand,
  DeleteDBParameterGroupCommand,
  DescribeDBClusterParameterGroupsCommand,
  DescribeDBClusterParametersCommand,
  DescribeDBClustersCommand,
  DescribeDBInstancesCommand,
  DescribeDBParameterGroupsCommand,
  ListTagsForResourceCommand,
  type DBInstance,
} from '@aws-sdk/client-rds';
import { mockClient } from 'aws-sdk-client-mock';
import {
  ResourceStillInUseError,
  UnsupportedOnBackendError,
  type CellResources,
  type RunContext,
} from '../../core/backend';
import { AwsBackend } from '../../core/backends/aws/aws-backend';
import { ListSecretsCommand } from '@aws-sdk/client-secrets-manager';
import { destroyAwsClients, makeAwsClients } from '../../core/backends/aws/clients';
import { cellNames } from '../../core/backends/aws/names';
import { teardownRun } from '../../core/backends/aws/sweeper';
import type { CellPlan } from '../../core/plan/types';
import { offlineAwsConfig } from '../helpers/aws-config';

const config = offlineAwsConfig({ launchTemplateIds: { x86_64: 'lt-x' } });
const run: RunContext = {
  runId: 'run-async',
  specName: 's',
  backend: 'aws',
  region: 'us-east-1',
  engineVersion: '3.04.0',
  dt: '2026-11-21',
  ttlHours: 24,
};
// With instance parameters: the cell has an instance parameter group for the teardown to delete.
const cell = {
  cellId: 'c-r1',
  variant: { name: 'c', instanceParameters: { max_connections: 100 } },
} as unknown as CellPlan;
const names = cellNames(run.runId, cell.cellId);

function setup() {
  const clients = makeAwsClients({
    region: 'us-east-1',
    credentials: { accessKeyId: 'x', secretAccessKey: 'y' },
    maxAttempts: 1,
  });
  const rds = mockClient(clients.rds);
  const ec2 = mockClient(clients.ec2);
  ec2.on(DescribeInstancesCommand).resolves({ Reservations: [] });
  // No self-managed cell here: the sweeper's secret search finds none.
  mockClient(clients.secrets).on(ListSecretsCommand).resolves({ SecretList: [] });
  const backend = new AwsBackend({ config, clients });
  return { clients, rds, backend };
}

const instance = (id: string, status: string): DBInstance => ({
  DBInstanceIdentifier: id,
  DBInstanceStatus: status,
  DBClusterIdentifier: names.clusterId,
});

describe('teardown while RDS deletes asynchronously', () => {
  it('deletes readers then the writer, and waits (ResourceStillInUseError) before touching the cluster', async () => {
    // Arrange
    const { clients, rds, backend } = setup();
    rds.on(DescribeDBClustersCommand).resolves({
      DBClusters: [
        {
          DBClusterIdentifier: names.clusterId,
          Status: 'available',
          DBClusterMembers: [
            { DBInstanceIdentifier: names.writerId, IsClusterWriter: true },
            { DBInstanceIdentifier: names.readerId(1), IsClusterWriter: false },
          ],
        },
      ],
    });
    rds
      .on(DescribeDBInstancesCommand)
      .resolvesOnce({ DBInstances: [instance(names.writerId, 'available'), instance(names.readerId(1), 'available')] })
      .resolves({ DBInstances: [instance(names.writerId, 'deleting'), instance(names.readerId(1), 'deleting')] });
    rds.on(DeleteDBInstanceCommand).resolves({});

    // Act
    const attempt = backend.teardownCell(run, cell, undefined);

    // Assert
    await expect(attempt).rejects.toBeInstanceOf(ResourceStillInUseError);
    await expect(attempt).rejects.toThrow(/rds-instance:.*deleting.*rds-cluster:.*waiting for 2 instance/);
    expect(rds.commandCalls(DeleteDBInstanceCommand).map((c) => c.args[0].input)).toEqual([
      { DBInstanceIdentifier: names.readerId(1), SkipFinalSnapshot: true, DeleteAutomatedBackups: true },
      { DBInstanceIdentifier: names.writerId, SkipFinalSnapshot: true, DeleteAutomatedBackups: true },
    ]);
    expect(rds.commandCalls(DeleteDBClusterCommand)).toHaveLength(0);
    expect(rds.commandCalls(DeleteDBClusterParameterGroupCommand)).toHaveLength(0);
    destroyAwsClients(clients);
  });

  it('deletes the cluster once its instances are gone and waits for it before the parameter groups', async () => {
    // Arrange
    const { clients, rds, backend } = setup();
    rds.on(DescribeDBInstancesCommand).resolves({ DBInstances: [] });
    rds
      .on(DescribeDBClustersCommand)
      .resolvesOnce({ DBClusters: [{ DBClusterIdentifier: names.clusterId, Status: 'available' }] })
      .resolves({ DBClusters: [{ DBClusterIdentifier: names.clusterId, Status: 'deleting' }] });
    rds.on(DeleteDBClusterCommand).resolves({});

    // Act
    const attempt = backend.teardownCell(run, cell, undefined);

    // Assert
    await expect(attempt).rejects.toThrow(ResourceStillInUseError);
    expect(rds.commandCalls(DeleteDBClusterCommand).map((c) => c.args[0].input)).toEqual([
      { DBClusterIdentifier: names.clusterId, SkipFinalSnapshot: true, DeleteAutomatedBackups: true },
    ]);
    expect(rds.commandCalls(DeleteDBClusterParameterGroupCommand)).toHaveLength(0);
    destroyAwsClients(clients);
  });

  it('finishes with the parameter groups when the cluster is gone; not-found counts as done', async () => {
    // Arrange
    const { clients, rds, backend } = setup();
    const notFound = (name: string) => Object.assign(new Error(`${name} not found`), { name });
    rds.on(DescribeDBInstancesCommand).resolves({ DBInstances: [] });
    rds.on(DescribeDBClustersCommand).rejects(notFound('DBClusterNotFoundFault'));
    rds.on(DeleteDBClusterParameterGroupCommand).resolves({});
    rds.on(DeleteDBParameterGroupCommand).rejects(notFound('DBParameterGroupNotFoundFault'));

    // Act
    const report = await backend.teardownCell(run, cell, undefined);

    // Assert
    expect(report.deleted).toEqual([`rds-cluster-parameter-group:${names.clusterParameterGroup}`]);
    expect(report.alreadyGone).toEqual([
      `rds-cluster:${names.clusterId}`,
      `rds-parameter-group:${names.instanceParameterGroup}`,
    ]);
    expect(rds.commandCalls(DeleteDBClusterCommand)).toHaveLength(0);
    destroyAwsClients(clients);
  });
});

describe('readiness while RDS creates asynchronously', () => {
  const wfCell = {
    cellId: 'c-r1',
    variant: {
      name: 'c',
      readers: 1,
      clusterParameters: {},
      instanceParameters: {},
      writeForwarding: { enabled: true, consistency: 'EVENTUAL' },
    },
  } as unknown as CellPlan;
  const provisioned: CellResources = {
    cellId: 'c-r1',
    clusterId: names.clusterId,
    readers: [],
    clients: [],
    credentials: { user: 'benchadmin', secretRef: '' },
    notes: [],
    backendState: { writerId: names.writerId, readerIds: names.readerId(1), az: 'us-east-1a' },
  };
  const endpoint = (id: string) => ({ Address: `${id}.x.us-east-1.rds.amazonaws.com`, Port: 3306 });
  const members = [
    { DBInstanceIdentifier: names.writerId, IsClusterWriter: true },
    { DBInstanceIdentifier: names.readerId(1), IsClusterWriter: false },
  ];

  it('is not ready while the cluster, the secret, write forwarding or an instance is still being created', async () => {
    // Arrange
    const { clients, rds, backend } = setup();
    rds.on(DescribeDBClustersCommand).resolves({
      DBClusters: [
        {
          DBClusterIdentifier: names.clusterId,
          Status: 'available',
          LocalWriteForwardingStatus: 'requested',
          MasterUserSecret: {
            SecretArn: 'arn:aws:secretsmanager:us-east-1:1:secret:rds!cluster-x',
            SecretStatus: 'creating',
          },
          DBClusterMembers: members,
        },
      ],
    });
    rds.on(DescribeDBInstancesCommand).resolves({
      DBInstances: [
        { ...instance(names.writerId, 'available'), Endpoint: endpoint(names.writerId) },
        instance(names.readerId(1), 'creating'),
      ],
    });

    // Act
    const state = await backend.checkCellReady(run, wfCell, provisioned);

    // Assert
    expect(state.ready).toBe(false);
    expect(state.detail).toBe(
      `master user secret creating; local write forwarding requested; instance ${names.readerId(1)} creating`,
    );
    destroyAwsClients(clients);
  });

  it('reports roles as the cluster does after a failover, and fails on a failed instance', async () => {
    // Arrange: the reader was promoted.
    const { clients, rds, backend } = setup();
    rds.on(DescribeDBClustersCommand).resolves({
      DBClusters: [
        {
          DBClusterIdentifier: names.clusterId,
          Status: 'available',
          LocalWriteForwardingStatus: 'enabled',
          MasterUserSecret: { SecretArn: 'arn:s', SecretStatus: 'active' },
          DBClusterMembers: members.map((m) => ({ ...m, IsClusterWriter: !m.IsClusterWriter })),
          DBClusterParameterGroup: names.clusterParameterGroup,
        },
      ],
    });
    // The cluster parameter group holds the write-forwarding level the variant asks for (checked on every instance).
    rds.on(DescribeDBClusterParametersCommand).resolves({
      Parameters: [{ ParameterName: 'aurora_replica_read_consistency', ParameterValue: 'EVENTUAL', Source: 'user' }],
    });
    rds
      .on(DescribeDBInstancesCommand)
      .resolvesOnce({
        DBInstances: [
          { ...instance(names.writerId, 'available'), Endpoint: endpoint(names.writerId) },
          { ...instance(names.readerId(1), 'available'), Endpoint: endpoint(names.readerId(1)) },
        ],
      })
      .resolves({
        DBInstances: [
          { ...instance(names.writerId, 'available'), Endpoint: endpoint(names.writerId) },
          instance(names.readerId(1), 'incompatible-parameters'),
        ],
      });

    // Act
    const state = await backend.checkCellReady(run, wfCell, provisioned);
    const failed = backend.checkCellReady(run, wfCell, provisioned);

    // Assert
    expect(state.ready).toBe(true);
    expect(state.resources.writer?.instanceId).toBe(names.readerId(1));
    expect(state.resources.readers.map((r) => r.instanceId)).toEqual([names.writerId]);
    expect(state.resources.credentials).toEqual({ user: 'benchadmin', secretRef: 'arn:s' });
    await expect(failed).rejects.toThrow(UnsupportedOnBackendError);
    await expect(failed).rejects.toThrow(/incompatible-parameters/);
    destroyAwsClients(clients);
  });
});

describe('teardownRun (the abort rule) while RDS cannot finish', () => {
  const NOW = new Date('2026-11-21T12:00:00Z');
  const arn = (kind: string, id: string) => `arn:aws:rds:us-east-1:123456789012:${kind}:${id}`;
  const runTags = (runId: string) => [
    { Key: 'aurora-bench:run-id', Value: runId },
    { Key: 'aurora-bench:cell-id', Value: cell.cellId },
    { Key: 'aurora-bench:expires-at', Value: '2026-11-22T10:00:00.000Z' },
  ];
  const other = cellNames('someone-elses-run', cell.cellId);

  function abortedRunWithCreatingWriter() {
    const { clients, rds } = setup();
    rds.on(DescribeDBClustersCommand).resolves({
      DBClusters: [
        {
          DBClusterIdentifier: names.clusterId,
          DBClusterArn: arn('cluster', names.clusterId),
          Status: 'creating',
          TagList: runTags(run.runId),
        },
        {
          DBClusterIdentifier: other.clusterId,
          DBClusterArn: arn('cluster', other.clusterId),
          Status: 'available',
          TagList: runTags('someone-elses-run'),
        },
      ],
    });
    rds.on(DescribeDBInstancesCommand).resolves({
      DBInstances: [
        {
          ...instance(names.writerId, 'creating'),
          DBInstanceArn: arn('db', names.writerId),
          TagList: runTags(run.runId),
        },
      ],
    });
    rds
      .on(DeleteDBInstanceCommand)
      .rejects(Object.assign(new Error('instance is creating'), { name: 'InvalidDBInstanceStateFault' }));
    rds.on(DescribeDBClusterParameterGroupsCommand).resolves({
      DBClusterParameterGroups: [
        {
          DBClusterParameterGroupName: names.clusterParameterGroup,
          DBClusterParameterGroupArn: arn('cluster-pg', names.clusterParameterGroup),
        },
      ],
    });
    rds.on(DescribeDBParameterGroupsCommand).resolves({
      DBParameterGroups: [
        {
          DBParameterGroupName: names.instanceParameterGroup,
          DBParameterGroupArn: arn('pg', names.instanceParameterGroup),
        },
      ],
    });
    rds.on(ListTagsForResourceCommand).resolves({ TagList: runTags(run.runId) });
    rds.on(AddTagsToResourceCommand).resolves({});
    return { clients, rds };
  }

  it('re-tags what is left of the run to expire now, so the next scheduled sweep deletes it', async () => {
    // Arrange
    const { clients, rds } = abortedRunWithCreatingWriter();

    // Act
    const report = await teardownRun(clients, config, run.runId, NOW);

    // Assert
    expect(report.pending).toEqual(
      expect.arrayContaining([
        `rds-instance:${names.writerId} (creating)`,
        `rds-cluster:${names.clusterId} (waiting for 1 instance(s))`,
      ]),
    );
    const tagged = rds.commandCalls(AddTagsToResourceCommand).map((c) => c.args[0].input);
    expect(tagged.map((t) => t.ResourceName).sort()).toEqual(
      [
        arn('cluster', names.clusterId),
        arn('db', names.writerId),
        arn('cluster-pg', names.clusterParameterGroup),
        arn('pg', names.instanceParameterGroup),
      ].sort(),
    );
    expect(
      tagged.every(
        (t) =>
          JSON.stringify(t.Tags) ===
          JSON.stringify([{ Key: 'aurora-bench:expires-at', Value: '2026-11-21T12:00:00.000Z' }]),
      ),
    ).toBe(true);
    expect(report.marked).toHaveLength(4);
    expect(report.markFailed).toEqual([]);
    destroyAwsClients(clients);
  });

  it('keeps marking the rest when one resource refuses the tag', async () => {
    // Arrange
    const { clients, rds } = abortedRunWithCreatingWriter();
    rds
      .on(AddTagsToResourceCommand, { ResourceName: arn('db', names.writerId) })
      .rejects(Object.assign(new Error('busy'), { name: 'InvalidDBInstanceStateFault' }));

    // Act
    const report = await teardownRun(clients, config, run.runId, NOW);

    // Assert
    expect(report.markFailed).toEqual([`rds-instance:${names.writerId} (InvalidDBInstanceStateFault)`]);
    expect(report.marked).toEqual(
      expect.arrayContaining([
        `rds-cluster:${names.clusterId}`,
        `rds-cluster-parameter-group:${names.clusterParameterGroup}`,
      ]),
    );
    destroyAwsClients(clients);
  });

  it('tags nothing when the run is gone at once', async () => {
    // Arrange
    const { clients, rds } = setup();
    rds.on(DescribeDBClustersCommand).resolves({ DBClusters: [] });
    rds.on(DescribeDBInstancesCommand).resolves({ DBInstances: [] });
    rds.on(DescribeDBClusterParameterGroupsCommand).resolves({ DBClusterParameterGroups: [] });
    rds.on(DescribeDBParameterGroupsCommand).resolves({ DBParameterGroups: [] });

    // Act
    const report = await teardownRun(clients, config, run.runId, NOW);

    // Assert
    expect(report.pending).toEqual([]);
    expect(rds.commandCalls(AddTagsToResourceCommand)).toHaveLength(0);
    destroyAwsClients(clients);
  });
});
