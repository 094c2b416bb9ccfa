/**
 * RDS's asynchronous phases: teardown while instances and the cluster are still "deleting", and
 * readiness while they are still "creating". moto creates and deletes at once and has no state
 * transitions for RDS, so these phases are played by aws-sdk-client-mock here (the synchronous path
 * runs against moto in aws-backend.test.ts).
 */
import { DescribeInstancesCommand } from '@aws-sdk/client-ec2';
import {
  DeleteDBClusterCommand,
  DeleteDBClusterParameterGroupCommand,
  DeleteDBInstanceCommand,
  DeleteDBParameterGroupCommand,
  DescribeDBClustersCommand,
  DescribeDBInstancesCommand,
  type DBInstance,
} from '@aws-sdk/client-rds';
import { mockClient } from 'aws-sdk-client-mock';
import { ResourceStillInUseError, UnsupportedOnBackendError, type CellResources, type RunContext } from '../../core/backend';
import { AwsBackend } from '../../core/backends/aws/aws-backend';
import { destroyAwsClients, makeAwsClients } from '../../core/backends/aws/clients';
import type { AwsBackendConfig } from '../../core/backends/aws/config';
import { cellNames } from '../../core/backends/aws/names';
import type { CellPlan } from '../../core/plan/types';

const config: AwsBackendConfig = {
  region: 'us-east-1',
  bucket: 'b',
  lakePrefix: '',
  ssmOutputPrefix: 'ssm-output/',
  subnetIdsByAz: { 'us-east-1a': 'subnet-a' },
  dbSecurityGroupId: 'sg-db',
  dbSubnetGroupName: 'dbs',
  clientSecurityGroupId: 'sg-c',
  clientInstanceProfileArn: 'arn:aws:iam::1:instance-profile/c',
  launchTemplateIds: { x86_64: 'lt-x' },
  launchTemplateVersion: '$Default',
  runnerS3Uri: 's3://b/runner/',
  tagKeyPrefix: 'aurora-bench:',
  ssmDocumentName: 'AWS-RunShellScript',
  masterUsername: 'benchadmin',
  performanceInsightsRetentionDays: 7,
  piPeriodS: 60,
};
const run: RunContext = { runId: 'run-async', specName: 's', backend: 'aws', region: 'us-east-1', engineVersion: '3.04.0', dt: '2026-11-21', ttlHours: 24 };
const cell = { cellId: 'c-r1', variant: { name: 'c' } } as unknown as CellPlan;
const names = cellNames(run.runId, cell.cellId);

function setup() {
  const clients = makeAwsClients({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'y' }, maxAttempts: 1 });
  const rds = mockClient(clients.rds);
  const ec2 = mockClient(clients.ec2);
  ec2.on(DescribeInstancesCommand).resolves({ Reservations: [] });
  const backend = new AwsBackend({ config, clients });
  return { clients, rds, backend };
}

const instance = (id: string, status: string): DBInstance => ({ DBInstanceIdentifier: id, DBInstanceStatus: status, DBClusterIdentifier: names.clusterId });

describe('teardown while RDS deletes asynchronously', () => {
  it('deletes readers then the writer, and waits (ResourceStillInUseError) before touching the cluster', async () => {
    // Arrange
    const { clients, rds, backend } = setup();
    rds.on(DescribeDBClustersCommand).resolves({ DBClusters: [{ DBClusterIdentifier: names.clusterId, Status: 'available', DBClusterMembers: [{ DBInstanceIdentifier: names.writerId, IsClusterWriter: true }, { DBInstanceIdentifier: names.readerId(1), IsClusterWriter: false }] }] });
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
    expect(rds.commandCalls(DeleteDBClusterCommand).map((c) => c.args[0].input)).toEqual([{ DBClusterIdentifier: names.clusterId, SkipFinalSnapshot: true, DeleteAutomatedBackups: true }]);
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
    expect(report.alreadyGone).toEqual([`rds-cluster:${names.clusterId}`, `rds-parameter-group:${names.instanceParameterGroup}`]);
    expect(rds.commandCalls(DeleteDBClusterCommand)).toHaveLength(0);
    destroyAwsClients(clients);
  });
});

describe('readiness while RDS creates asynchronously', () => {
  const wfCell = { cellId: 'c-r1', variant: { name: 'c', writeForwarding: { enabled: true, consistency: 'EVENTUAL' } } } as unknown as CellPlan;
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
  const members = [{ DBInstanceIdentifier: names.writerId, IsClusterWriter: true }, { DBInstanceIdentifier: names.readerId(1), IsClusterWriter: false }];

  it('is not ready while the cluster, the secret, write forwarding or an instance is still being created', async () => {
    // Arrange
    const { clients, rds, backend } = setup();
    rds.on(DescribeDBClustersCommand).resolves({
      DBClusters: [{ DBClusterIdentifier: names.clusterId, Status: 'available', LocalWriteForwardingStatus: 'requested', MasterUserSecret: { SecretArn: 'arn:aws:secretsmanager:us-east-1:1:secret:rds!cluster-x', SecretStatus: 'creating' }, DBClusterMembers: members }],
    });
    rds.on(DescribeDBInstancesCommand).resolves({ DBInstances: [{ ...instance(names.writerId, 'available'), Endpoint: endpoint(names.writerId) }, instance(names.readerId(1), 'creating')] });

    // Act
    const state = await backend.checkCellReady(run, wfCell, provisioned);

    // Assert
    expect(state.ready).toBe(false);
    expect(state.detail).toBe(`master user secret creating; local write forwarding requested; instance ${names.readerId(1)} creating`);
    destroyAwsClients(clients);
  });

  it('reports roles as the cluster does after a failover, and fails on a failed instance', async () => {
    // Arrange: the reader was promoted.
    const { clients, rds, backend } = setup();
    rds.on(DescribeDBClustersCommand).resolves({
      DBClusters: [{ DBClusterIdentifier: names.clusterId, Status: 'available', LocalWriteForwardingStatus: 'enabled', MasterUserSecret: { SecretArn: 'arn:s', SecretStatus: 'active' }, DBClusterMembers: members.map((m) => ({ ...m, IsClusterWriter: !m.IsClusterWriter })) }],
    });
    rds
      .on(DescribeDBInstancesCommand)
      .resolvesOnce({ DBInstances: [{ ...instance(names.writerId, 'available'), Endpoint: endpoint(names.writerId) }, { ...instance(names.readerId(1), 'available'), Endpoint: endpoint(names.readerId(1)) }] })
      .resolves({ DBInstances: [{ ...instance(names.writerId, 'available'), Endpoint: endpoint(names.writerId) }, instance(names.readerId(1), 'incompatible-parameters')] });

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
