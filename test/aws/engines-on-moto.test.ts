/**
 * The AWS backend's engines other than Aurora MySQL against one moto server (RDS, Secrets Manager):
 * an RDS for MariaDB cell (DB parameter group of mariadb10.11 with the thread pool, a source DB
 * instance, its read replica created once the source is available, instance endpoints, teardown
 * replicas first and the group last, not-found = done on a second pass), an Aurora PostgreSQL
 * cluster (engine, family, port 5432), and the sweeper finding a DB instance cell by its tags.
 * moto keeps the API state only: the data plane is rehearsed in test/rehearsal.
 */
import {
  DescribeDBInstancesCommand,
  DescribeDBParameterGroupsCommand,
  DescribeDBParametersCommand,
  DescribeDBClustersCommand,
} from '@aws-sdk/client-rds';
import type { CellPlan, Plan } from '../../core/plan/types';
import type { CellResources, RunContext } from '../../core/backend';
import { AwsBackend } from '../../core/backends/aws/aws-backend';
import { makeAwsClients, destroyAwsClients, type AwsClients } from '../../core/backends/aws/clients';
import type { AwsBackendConfig } from '../../core/backends/aws/config';
import { engineMetrics, forwardingMetrics } from '../../core/backends/aws/metrics';
import { rdsAllocatedStorageGib as allocatedStorageGib } from '../../core/aurora/engines';
import { cellNames } from '../../core/backends/aws/names';
import { teardownRun } from '../../core/backends/aws/sweeper';
import { validateSpec } from '../../core/experiment/validate';
import type { SpecInput } from '../../core/experiment/schema';
import { planRun } from '../../core/plan/plan';
import {
  createStandingInfrastructure,
  CREDENTIALS,
  destroyRawClients,
  rawClients,
  REGION,
  type RawClients,
} from './fixtures';
import { startMoto, type MotoServer } from './moto';

const NOW = new Date('2026-11-23T01:00:00Z');

let moto: MotoServer;
let raw: RawClients;
let config: AwsBackendConfig;
let clients: AwsClients;
let backend: AwsBackend;
const rdsCalls: { command: string; input: Record<string, unknown> }[] = [];

beforeAll(async () => {
  moto = startMoto();
  raw = rawClients(moto.endpoint);
  config = await createStandingInfrastructure(moto.endpoint, raw);
  clients = makeAwsClients({ region: REGION, endpoint: moto.endpoint, credentials: CREDENTIALS, maxAttempts: 1 });
  clients.rds.middlewareStack.add(
    (next, context) => async (args) => {
      rdsCalls.push({
        command: (context.commandName as string).replace(/Command$/, ''),
        input: args.input as Record<string, unknown>,
      });
      return next(args);
    },
    { step: 'initialize', name: 'recordRdsCalls' },
  );
  backend = new AwsBackend({ config, clients, now: () => NOW });
}, 300_000);

afterAll(() => {
  destroyAwsClients(clients);
  destroyRawClients(raw);
  moto.stop();
});

function planOf(engine: SpecInput['engine'], variant: Partial<SpecInput['variants'][number]> = {}): Plan {
  const s = validateSpec({
    name: 'engines-aws',
    engine,
    region: REGION,
    variants: [{ name: 'v', instanceClass: 'db.r6g.large', az: 'a', readers: 1, ...variant }],
    data: { tables: 1, tableSize: 100 },
    workloads: [{ name: 'ro', test: 'oltp_read_only', threads: [4], durationS: 30 }],
    ttlHours: 2,
  });
  return planRun(s, { backend: 'aws', now: NOW, runId: `eng-${Math.random().toString(16).slice(2, 8)}` });
}

function runOf(plan: Plan): RunContext {
  return {
    runId: plan.runId,
    specName: plan.specName,
    backend: 'aws',
    region: plan.region,
    engineVersion: plan.engine.version,
    dt: plan.dt,
    ttlHours: plan.ttlHours,
  };
}

async function untilReady(
  run: RunContext,
  cell: CellPlan,
  resources: CellResources,
): Promise<{ resources: CellResources; checks: number }> {
  let current = resources;
  for (let checks = 1; checks <= 5; checks++) {
    const state = await backend.checkCellReady(run, cell, current);
    current = state.resources;
    if (state.ready) return { resources: current, checks };
  }
  throw new Error('the cell never became ready on moto');
}

describe('RDS for MariaDB: a DB instance and its read replica', () => {
  const plan = planOf(
    { kind: 'rds-mariadb', version: '10.11.9' },
    {
      clusterParameters: { innodb_flush_log_at_trx_commit: 2 },
      instanceParameters: { thread_handling: 'pool-of-threads', thread_pool_size: 16 },
    },
  );
  const run = runOf(plan);
  const cell = plan.cells[0]!;
  const names = cellNames(run.runId, cell.cellId);
  let ready: CellResources;

  it('creates the mariadb10.11 parameter group, the source, then the replica once the source is up', async () => {
    // Act
    const provisioned = await backend.provisionCell(run, cell);
    const afterProvision = rdsCalls.map((c) => c.command);
    const { resources, checks } = await untilReady(run, cell, provisioned);
    ready = resources;

    // Assert: one DB parameter group with both levels' values (an RDS DB instance has no cluster group).
    const group = (
      await raw.rds.send(new DescribeDBParameterGroupsCommand({ DBParameterGroupName: names.instanceParameterGroup }))
    ).DBParameterGroups![0]!;
    expect(group.DBParameterGroupFamily).toBe('mariadb10.11');
    const values = Object.fromEntries(
      (
        (
          await raw.rds.send(
            new DescribeDBParametersCommand({ DBParameterGroupName: names.instanceParameterGroup, Source: 'user' }),
          )
        ).Parameters ?? []
      ).map((p) => [p.ParameterName, p.ParameterValue]),
    );
    expect(values).toMatchObject({
      thread_handling: 'pool-of-threads',
      thread_pool_size: '16',
      innodb_flush_log_at_trx_commit: '2',
    });
    expect(afterProvision).not.toContain('CreateDBCluster');
    expect(afterProvision).not.toContain('CreateDBInstanceReadReplica');
    const create = rdsCalls.find((c) => c.command === 'CreateDBInstance')!.input;
    expect(create).toMatchObject({
      DBInstanceIdentifier: names.writerId,
      Engine: 'mariadb',
      EngineVersion: '10.11.9',
      AllocatedStorage: 20,
      MaxAllocatedStorage: 40,
      ManageMasterUserPassword: true,
      DBName: 'sbtest',
      DBParameterGroupName: names.instanceParameterGroup,
      BackupRetentionPeriod: 1,
    });
    const replica = rdsCalls.find((c) => c.command === 'CreateDBInstanceReadReplica')!.input;
    expect(replica).toMatchObject({
      DBInstanceIdentifier: names.readerId(1),
      SourceDBInstanceIdentifier: names.writerId,
    });
    // Same-Region replicas take the source's group: naming one is refused for MySQL (db-instances.ts).
    expect(replica).not.toHaveProperty('DBParameterGroupName');
    expect(checks).toBeGreaterThanOrEqual(1);
    expect(ready.writer).toMatchObject({ instanceId: names.writerId, role: 'writer', port: 3306 });
    expect(ready.readers.map((r) => r.instanceId)).toEqual([names.readerId(1)]);
    expect(ready.credentials.secretRef).toMatch(/^arn:aws:secretsmanager:/);
  });

  it('is idempotent: provisioning and readiness again create nothing new', async () => {
    // Arrange
    const before = rdsCalls.filter((c) => c.command.startsWith('Create')).length;
    // Act
    const again = await backend.provisionCell(run, cell);
    await untilReady(run, cell, again);
    // Assert: only the parameter group's create is tried (and answered "already exists").
    expect(rdsCalls.filter((c) => c.command.startsWith('Create')).length - before).toBe(1);
  });

  it('tears down the replica, then the source, then the group; a second pass finds all gone', async () => {
    // Act
    const first = await backend.teardownCell(run, cell, ready).catch((e: unknown) => e);
    const deletes = rdsCalls
      .filter((c) => c.command.startsWith('Delete'))
      .map((c) => `${c.command} ${String(c.input['DBInstanceIdentifier'] ?? c.input['DBParameterGroupName'])}`);
    const second = await backend.teardownCell(run, cell, ready);
    // Assert
    expect(first).not.toBeInstanceOf(Error);
    expect(deletes).toEqual([
      `DeleteDBInstance ${names.readerId(1)}`,
      `DeleteDBInstance ${names.writerId}`,
      `DeleteDBParameterGroup ${names.instanceParameterGroup}`,
    ]);
    expect(second.deleted).toEqual([]);
    expect(second.alreadyGone).toEqual(
      expect.arrayContaining([
        `rds-instance:${names.writerId}`,
        `rds-instance:${names.readerId(1)}`,
        `rds-parameter-group:${names.instanceParameterGroup}`,
      ]),
    );
    expect(
      (await raw.rds.send(new DescribeDBInstancesCommand({}))).DBInstances!.filter((i) =>
        i.DBInstanceIdentifier!.startsWith(names.clusterId),
      ),
    ).toEqual([]);
  });
});

describe('Aurora PostgreSQL and RDS for PostgreSQL', () => {
  it(
    'creates an aurora-postgresql cluster of family aurora-postgresql16 whose endpoints are on 5432, its ' +
      'write-forwarding level as apg_write_forward.consistency_mode',
    async () => {
      // Arrange
      const plan = planOf(
        { kind: 'aurora-postgresql', version: '16.4' },
        { readers: 0, writeForwarding: { enabled: true, consistency: 'GLOBAL' } },
      );
      const run = runOf(plan);
      const cell = plan.cells[0]!;
      const names = cellNames(run.runId, cell.cellId);
      // Act
      const { resources } = await untilReady(run, cell, await backend.provisionCell(run, cell));
      const cluster = (await raw.rds.send(new DescribeDBClustersCommand({ DBClusterIdentifier: names.clusterId })))
        .DBClusters![0]!;
      await backend.teardownCell(run, cell, resources);
      // Assert
      expect(cluster.Engine).toBe('aurora-postgresql');
      expect(cluster.EngineVersion).toBe('16.4');
      expect(
        rdsCalls.find(
          (c) =>
            c.command === 'CreateDBClusterParameterGroup' &&
            c.input['DBClusterParameterGroupName'] === names.clusterParameterGroup,
        )!.input,
      ).toMatchObject({
        DBParameterGroupFamily: 'aurora-postgresql16',
      });
      expect(
        rdsCalls.find((c) => c.command === 'CreateDBInstance' && c.input['DBInstanceIdentifier'] === names.writerId)!
          .input,
      ).toMatchObject({ Engine: 'aurora-postgresql' });
      expect(rdsCalls.find((c) => c.command === 'CreateDBCluster')!.input).toMatchObject({
        EnableLocalWriteForwarding: true,
      });
      const parameters = rdsCalls
        .filter(
          (c) =>
            c.command === 'ModifyDBClusterParameterGroup' &&
            c.input['DBClusterParameterGroupName'] === names.clusterParameterGroup,
        )
        .flatMap((c) => c.input['Parameters'] as { ParameterName: string; ParameterValue: string }[]);
      expect(parameters).toEqual([
        expect.objectContaining({ ParameterName: 'apg_write_forward.consistency_mode', ParameterValue: 'GLOBAL' }),
      ]);
      expect(resources.writer).toMatchObject({ port: 5432 });
    },
  );

  it('leaves an RDS for PostgreSQL cell to the sweeper when the workflow did not tear it down', async () => {
    // Arrange
    const plan = planOf({ kind: 'rds-postgresql', version: '16.4' });
    const run = runOf(plan);
    const cell = plan.cells[0]!;
    const names = cellNames(run.runId, cell.cellId);
    const { resources } = await untilReady(run, cell, await backend.provisionCell(run, cell));
    // Act: what the stack's safety net runs for an execution that failed.
    const report = await teardownRun(clients, config, run.runId, NOW);
    const again = await teardownRun(clients, config, run.runId, NOW);
    // Assert
    expect(resources.writer).toMatchObject({ port: 5432 });
    expect(
      rdsCalls.find(
        (c) =>
          c.command === 'CreateDBParameterGroup' && c.input['DBParameterGroupName'] === names.instanceParameterGroup,
      )!.input,
    ).toMatchObject({
      DBParameterGroupFamily: 'postgres16',
    });
    expect(report.deleted).toEqual(
      expect.arrayContaining([
        `rds-instance:${names.writerId}`,
        `rds-instance:${names.readerId(1)}`,
        `rds-parameter-group:${names.instanceParameterGroup}`,
      ]),
    );
    expect(report.pending).toEqual([]);
    expect(again.deleted).toEqual([]);
  });
});

describe('RDS storage for the data', () => {
  it("is RDS's least for small data, grows with the tables, and stops at RDS's most", () => {
    expect(allocatedStorageGib({ tables: 1, tableSize: 100 })).toEqual({ allocated: 20, max: 40 });
    // 10 x 10,000,000 rows x 500 bytes = 46.6 GiB, x 1.5 = 70 GiB.
    expect(allocatedStorageGib({ tables: 10, tableSize: 10_000_000 })).toEqual({ allocated: 70, max: 140 });
    expect(allocatedStorageGib({ tables: 1000, tableSize: 1_000_000_000 }).allocated).toBe(65536);
  });
});

describe('CloudWatch metrics per engine', () => {
  it('asks each engine only for the AWS/RDS names AWS documents for it', () => {
    expect(engineMetrics('rds-mariadb').base).not.toContain('CommitThroughput');
    expect(engineMetrics('rds-postgresql').replicaLag).toBe('ReplicaLag');
    expect(engineMetrics('aurora-postgresql').base).toEqual(
      expect.arrayContaining(['CommitThroughput', 'BufferCacheHitRatio', 'Deadlocks']),
    );
    expect(engineMetrics('aurora-postgresql').base).not.toContain('DMLThroughput');
    expect(engineMetrics('aurora-mysql').base).toContain('SelectThroughput');
  });

  it("asks for write forwarding's metrics under each Aurora engine's own names, and none on RDS", () => {
    expect(forwardingMetrics('aurora-mysql')!.writer).toContain('ForwardingWriterDMLThroughput');
    expect(forwardingMetrics('aurora-postgresql')!.writer).toEqual([
      'AuroraLocalForwardingWriterDMLThroughput',
      'AuroraLocalForwardingWriterOpenSessions',
    ]);
    expect(forwardingMetrics('aurora-postgresql')!.readerLatency).toContain('AuroraForwardingReplicaReadWaitLatency');
    expect(forwardingMetrics('rds-mysql')).toBeUndefined();
  });
});
