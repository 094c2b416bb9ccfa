/**
 * The AWS backend against a moto server over HTTP (RDS, EC2, S3, CloudWatch, SSM SendCommand /
 * ListCommands). aws-sdk-client-mock only where moto has nothing: Performance Insights, SSM
 * DescribeInstanceInformation (agent registration), GetCommandInvocation and CancelCommand.
 */
import { PutMetricDataCommand } from '@aws-sdk/client-cloudwatch';
import { DescribeInstancesCommand } from '@aws-sdk/client-ec2';
import {
  GetResourceMetricsCommand,
  type PIClientResolvedConfig,
  type ServiceInputTypes as PiInput,
  type ServiceOutputTypes as PiOutput,
} from '@aws-sdk/client-pi';
import {
  AddTagsToResourceCommand,
  DescribeDBClusterParameterGroupsCommand,
  DescribeDBClusterParametersCommand,
  DescribeDBClustersCommand,
  DescribeDBInstancesCommand,
  DescribeDBParameterGroupsCommand,
  DescribeDBParametersCommand,
} from '@aws-sdk/client-rds';
import { DeleteObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import {
  CancelCommandCommand,
  DescribeInstanceInformationCommand,
  GetCommandInvocationCommand,
  ListCommandsCommand,
  SendCommandCommand,
  type ServiceInputTypes as SsmInput,
  type ServiceOutputTypes as SsmOutput,
  type SSMClientResolvedConfig,
} from '@aws-sdk/client-ssm';
import { mockClient, type AwsStub } from 'aws-sdk-client-mock';
import {
  ResourceStillInUseError,
  UnsupportedOnBackendError,
  type CellResources,
  type RunContext,
  type RunnerJob,
} from '../../core/backend';
import { AwsBackend } from '../../core/backends/aws/aws-backend';
import { MAX_PARAMETERS_PER_MODIFY } from '../../core/backends/aws/cluster';
import { volumeWindow } from '../../core/backends/aws/metrics';
import { makeAwsClients, destroyAwsClients, type AwsClients } from '../../core/backends/aws/clients';
import type { AwsBackendConfig } from '../../core/backends/aws/config';
import { cellNames } from '../../core/backends/aws/names';
import { clientReadyKey, type ClientReadyMarker } from '../../core/backends/aws/runner-command';
import { S3LakeStore } from '../../core/backends/aws/s3-lake';
import { sweepExpired, teardownRun } from '../../core/backends/aws/sweeper';
import { athenaRequestToken, runAthenaQuery } from '../../core/backends/aws/athena';
import { lakeKeys } from '../../core/lake/rows';
import { planRun } from '../../core/plan/plan';
import type { CellPlan, Plan } from '../../core/plan/types';
import type { SpecInput } from '../../core/experiment/schema';
import { validateSpec } from '../../core/experiment/validate';
import { BENCHMARK_DATABASE } from '../../core/plan/sysbench-args';
import {
  createStandingInfrastructure,
  CREDENTIALS,
  destroyRawClients,
  queueAthenaResults,
  rawClients,
  REGION,
  type RawClients,
} from './fixtures';
import { startMoto, type MotoServer } from './moto';

const NOW = new Date('2026-11-21T10:00:00Z');

let moto: MotoServer;
let raw: RawClients;
let config: AwsBackendConfig;

/** RDS API calls the backend made, in order (a middleware on the real client: moto answers them). */
const rdsCalls: { command: string; input: Record<string, unknown> }[] = [];
const ec2Calls: { command: string; input: Record<string, unknown> }[] = [];

function clientsFor(): AwsClients {
  const clients = makeAwsClients({ region: REGION, endpoint: moto.endpoint, credentials: CREDENTIALS, maxAttempts: 1 });
  clients.rds.middlewareStack.add(
    (next, context) => async (args) => {
      rdsCalls.push({ command: context.commandName as string, input: args.input as Record<string, unknown> });
      return next(args);
    },
    { step: 'initialize', name: 'recordRdsCalls' },
  );
  clients.ec2.middlewareStack.add(
    (next, context) => async (args) => {
      ec2Calls.push({ command: context.commandName as string, input: args.input as Record<string, unknown> });
      return next(args);
    },
    { step: 'initialize', name: 'recordEc2Calls' },
  );
  return clients;
}

const TWENTY_TWO_CLUSTER_PARAMETERS = [
  'auto_increment_increment',
  'auto_increment_offset',
  'binlog_group_commit_sync_delay',
  'binlog_group_commit_sync_no_delay_count',
  'binlog_transaction_dependency_history_size',
  'innodb_autoinc_lock_mode',
  'innodb_commit_concurrency',
  'innodb_ft_max_token_size',
  'innodb_ft_min_token_size',
  'innodb_ft_num_word_optimize',
  'innodb_ft_sort_pll_degree',
  'innodb_online_alter_log_max_size',
  'innodb_purge_batch_size',
  'innodb_purge_threads',
  'innodb_rollback_segments',
  'innodb_spin_wait_delay',
  'innodb_sync_array_size',
  'innodb_sync_spin_loops',
  'replica_transaction_retries',
  'rpl_read_size',
  'aurora_binlog_replication_max_yield_seconds',
  'thread_cache_size',
];

function spec(over: Partial<SpecInput> = {}): Plan {
  const s = validateSpec({
    name: 'aws-test',
    engine: { version: '3.04.0' },
    region: REGION,
    variants: [
      {
        name: 'wf',
        instanceClass: 'db.r6g.large',
        az: 'a',
        readers: 1,
        // 25 parameters: more than one ModifyDBClusterParameterGroup call of at most 20 (22 numeric
        // cluster-level parameters of Aurora MySQL 3 from the parameter catalogue, plus write forwarding's 3).
        clusterParameters: Object.fromEntries(TWENTY_TWO_CLUSTER_PARAMETERS.map((name, i) => [name, i + 1])),
        instanceParameters: { max_prepared_stmt_count: 1048575, performance_schema: true },
        writeForwarding: { enabled: true, consistency: 'SESSION', maxConnectionsPct: 90, idleTimeoutS: 60 },
        clients: { count: 2, instanceType: 'c6g.large', placement: 'same-az' },
      },
    ],
    data: { tables: 2, tableSize: 1000 },
    workloads: [{ name: 'rw', test: 'oltp_read_write', threads: [4], target: 'reader' }],
    ttlHours: 2,
    ...over,
  });
  return planRun(s, { backend: 'aws', now: NOW, runId: `aws-test-${Math.random().toString(16).slice(2, 8)}` });
}

/** The marker client/client-ready.sh uploads for a client (the bucket is the config's, in moto). */
async function putReadyMarker(instanceId: string, marker: ClientReadyMarker): Promise<void> {
  await raw.s3.send(
    new PutObjectCommand({
      Bucket: config.bucket,
      Key: clientReadyKey(instanceId),
      Body: JSON.stringify(marker),
      ContentType: 'application/json',
    }),
  );
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

async function provisionReady(backend: AwsBackend, run: RunContext, cell: CellPlan): Promise<CellResources> {
  let resources = await backend.provisionCell(run, cell);
  for (let i = 0; i < 5; i++) {
    const state = await backend.checkCellReady(run, cell, resources);
    resources = state.resources;
    if (state.ready) return resources;
  }
  throw new Error('cell never became ready on moto');
}

beforeAll(async () => {
  // On a fresh machine scripts/moto.sh first installs moto from PyPI (about 1.5 minutes).
  moto = startMoto();
  raw = rawClients(moto.endpoint);
  // The standing infrastructure the CDK stack would create.
  config = await createStandingInfrastructure(moto.endpoint, raw);
}, 300_000);

afterAll(() => {
  destroyRawClients(raw);
  moto.stop();
});

describe('AwsBackend on moto: one cell end to end', () => {
  let clients: AwsClients;
  let backend: AwsBackend;
  let plan: Plan;
  let run: RunContext;
  let cell: CellPlan;
  let resources: CellResources;
  let ssm: AwsStub<SsmInput, SsmOutput, SSMClientResolvedConfig>;
  let pi: AwsStub<PiInput, PiOutput, PIClientResolvedConfig>;

  beforeAll(() => {
    clients = clientsFor();
    backend = new AwsBackend({ config, clients, now: () => NOW });
    plan = spec();
    run = runOf(plan);
    cell = plan.cells[0]!;
    // SSM: SendCommand and ListCommands go to moto through an unmocked client; what moto lacks is mocked.
    const motoSsm = raw.ssm;
    ssm = mockClient(clients.ssm);
    ssm.on(SendCommandCommand).callsFake((input) => motoSsm.send(new SendCommandCommand(input)));
    ssm.on(ListCommandsCommand).callsFake((input) => motoSsm.send(new ListCommandsCommand(input)));
    pi = mockClient(clients.pi);
  });

  afterAll(() => {
    ssm.restore();
    pi.restore();
    destroyAwsClients(clients);
  });

  it('provisions parameter groups (in chunks of at most 20), the cluster and its instances', async () => {
    // Arrange
    const names = cellNames(run.runId, cell.cellId);
    rdsCalls.length = 0;

    // Act
    resources = await backend.provisionCell(run, cell);

    // Assert: every cluster parameter is in moto's group, written by more than one call of <= 20.
    const modifies = rdsCalls.filter((c) => c.command === 'ModifyDBClusterParameterGroupCommand');
    expect(modifies.length).toBe(2);
    for (const m of modifies)
      expect((m.input['Parameters'] as unknown[]).length).toBeLessThanOrEqual(MAX_PARAMETERS_PER_MODIFY);
    const params = await raw.rds.send(
      new DescribeDBClusterParametersCommand({ DBClusterParameterGroupName: names.clusterParameterGroup }),
    );
    const byName = Object.fromEntries((params.Parameters ?? []).map((p) => [p.ParameterName, p.ParameterValue]));
    expect(Object.keys(byName)).toHaveLength(25);
    expect(byName['thread_cache_size']).toBe('22');
    expect(byName['aurora_replica_read_consistency']).toBe('SESSION');
    expect(byName['aurora_fwd_writer_max_connections_pct']).toBe('90');
    expect(byName['aurora_fwd_writer_idle_timeout']).toBe('60');
    const instanceParams = await raw.rds.send(
      new DescribeDBParametersCommand({ DBParameterGroupName: names.instanceParameterGroup }),
    );
    expect(
      Object.fromEntries((instanceParams.Parameters ?? []).map((p) => [p.ParameterName, p.ParameterValue])),
    ).toEqual({
      max_prepared_stmt_count: '1048575',
      performance_schema: '1',
    });

    const cluster = (await raw.rds.send(new DescribeDBClustersCommand({ DBClusterIdentifier: names.clusterId })))
      .DBClusters![0]!;
    expect(cluster.Engine).toBe('aurora-mysql');
    expect(cluster.EngineVersion).toBe('8.0.mysql_aurora.3.04.0');
    expect(cluster.DBClusterParameterGroup).toBe(names.clusterParameterGroup);
    // The database sysbench connects to (--mysql-db): a new Aurora MySQL cluster has none unless asked.
    expect(cluster.DatabaseName).toBe(BENCHMARK_DATABASE);
    expect(BENCHMARK_DATABASE).toMatch(/^[A-Za-z0-9]{1,64}$/);
    expect(cluster.MasterUserSecret?.SecretArn).toMatch(/^arn:aws:secretsmanager:/);
    const tags = Object.fromEntries((cluster.TagList ?? []).map((t) => [t.Key, t.Value]));
    expect(tags['aurora-bench:run-id']).toBe(run.runId);
    expect(tags['aurora-bench:cell-id']).toBe(cell.cellId);
    expect(tags['aurora-bench:expires-at']).toBe('2026-11-21T12:00:00.000Z');
    const create = rdsCalls.find((c) => c.command === 'CreateDBClusterCommand')!.input;
    expect(create).toMatchObject({
      ManageMasterUserPassword: true,
      EnableLocalWriteForwarding: true,
      MasterUsername: 'benchadmin',
    });
    expect(create).not.toHaveProperty('MasterUserPassword');

    const instances = (
      await raw.rds.send(
        new DescribeDBInstancesCommand({ Filters: [{ Name: 'db-cluster-id', Values: [names.clusterId] }] }),
      )
    ).DBInstances!;
    expect(instances.map((i) => i.DBInstanceIdentifier).sort()).toEqual([names.readerId(1), names.writerId].sort());
    for (const i of instances) {
      expect(i.AvailabilityZone).toBe('us-east-1a');
      expect(i.DBInstanceClass).toBe('db.r6g.large');
    }
    const createdInstances = rdsCalls.filter((c) => c.command === 'CreateDBInstanceCommand').map((c) => c.input);
    expect(createdInstances.map((i) => i['DBInstanceIdentifier'])).toEqual([names.writerId, names.readerId(1)]);
    for (const i of createdInstances)
      expect(i).toMatchObject({ EnablePerformanceInsights: true, DBParameterGroupName: names.instanceParameterGroup });
  });

  it('is idempotent: provisioning again creates nothing new', async () => {
    // Arrange
    rdsCalls.length = 0;

    // Act
    const again = await backend.provisionCell(run, cell);

    // Assert
    expect(again.clusterId).toBe(resources.clusterId);
    expect(
      rdsCalls.filter((c) => c.command === 'CreateDBClusterCommand' || c.command === 'CreateDBInstanceCommand'),
    ).toEqual([]);
    const instances = (
      await raw.rds.send(
        new DescribeDBInstancesCommand({ Filters: [{ Name: 'db-cluster-id', Values: [resources.clusterId] }] }),
      )
    ).DBInstances!;
    expect(instances).toHaveLength(2);
  });

  it('reports the cell ready with writer and reader endpoints and the secret ARN', async () => {
    // Act: moto reports a new cluster "creating" once, then "available".
    const first = await backend.checkCellReady(run, cell, resources);
    const second = first.ready ? first : await backend.checkCellReady(run, cell, first.resources);

    // Assert
    expect(second.ready).toBe(true);
    resources = second.resources;
    const names = cellNames(run.runId, cell.cellId);
    expect(resources.writer).toMatchObject({
      instanceId: names.writerId,
      role: 'writer',
      port: 3306,
      az: 'us-east-1a',
    });
    expect(resources.writer!.host).toContain(names.writerId);
    expect(resources.readers.map((r) => r.instanceId)).toEqual([names.readerId(1)]);
    expect(resources.credentials.secretRef).toMatch(/^arn:aws:secretsmanager:/);
    expect(resources.backendState[`dbi:${names.writerId}`]).toMatch(/^db-/);
    // Each instance's parameter group apply status, for the check at prepare (core/workflow/effective-config.ts).
    const applyStatus = JSON.parse(resources.backendState['parameterApplyStatus']!) as {
      instanceId: string;
      kind: string;
      status: string;
    }[];
    expect(
      applyStatus
        .filter((s) => s.kind === 'instance')
        .map((s) => s.instanceId)
        .sort(),
    ).toEqual([names.writerId, names.readerId(1)].sort());
    expect(applyStatus.every((s) => s.status === 'in-sync')).toBe(true);
  });

  it('starts the clients from the arm64 launch template in the writer subnet, once', async () => {
    // Arrange
    ec2Calls.length = 0;

    // Act
    resources = await backend.startClients(run, cell, resources);
    const again = await backend.startClients(run, cell, resources);

    // Assert
    expect(resources.clients).toHaveLength(2);
    expect(again.clients.map((c) => c.clientId)).toEqual(resources.clients.map((c) => c.clientId));
    const runs = ec2Calls.filter((c) => c.command === 'RunInstancesCommand');
    expect(runs).toHaveLength(1);
    expect(runs[0]!.input).toMatchObject({
      MinCount: 2,
      MaxCount: 2,
      InstanceType: 'c6g.large',
      SubnetId: config.subnetIdsByAz['us-east-1a'],
      LaunchTemplate: { LaunchTemplateId: config.launchTemplateIds.arm64 },
      ClientToken: cellNames(run.runId, cell.cellId).clientToken(0),
    });
    const described = await raw.ec2.send(
      new DescribeInstancesCommand({ InstanceIds: resources.clients.map((c) => c.clientId) }),
    );
    for (const i of described.Reservations!.flatMap((r) => r.Instances!)) {
      expect(i.Placement?.AvailabilityZone).toBe('us-east-1a');
      expect(Object.fromEntries(i.Tags!.map((t) => [t.Key, t.Value]))).toMatchObject({
        'aurora-bench:run-id': run.runId,
        'aurora-bench:cell-id': cell.cellId,
      });
    }
  });

  it('waits for the SSM agent to be Online before the clients are ready', async () => {
    // Arrange: both clients have proven sysbench works; one agent is not registered yet.
    const ids = resources.clients.map((c) => c.clientId);
    for (const id of ids)
      await putReadyMarker(id, {
        ready: true,
        sysbench: 'sysbench 1.0.20 (using system LuaJIT 2.1.1700000000)',
        sysbenchVersion: '1.0.20',
      });
    ssm
      .on(DescribeInstanceInformationCommand)
      .resolvesOnce({ InstanceInformationList: [{ InstanceId: ids[0], PingStatus: 'Online' }] })
      .resolves({ InstanceInformationList: ids.map((id) => ({ InstanceId: id, PingStatus: 'Online' })) });

    // Act
    const first = await backend.checkClientsReady(run, cell, resources);
    const second = await backend.checkClientsReady(run, cell, resources);

    // Assert
    expect(first.ready).toBe(false);
    expect(first.detail).toContain(`${ids[1]} not registered with SSM`);
    expect(second.ready).toBe(true);
    expect(second.detail).toContain('sysbench proven (sysbench 1.0.20 (using system LuaJIT 2.1.1700000000))');
  });

  it('calls a client ready once its ready marker says sysbench works; stops at a not-ready marker', async () => {
    // Arrange: agents online; the second client has no marker yet, then a failed one.
    const ids = resources.clients.map((c) => c.clientId);
    ssm
      .on(DescribeInstanceInformationCommand)
      .resolves({ InstanceInformationList: ids.map((id) => ({ InstanceId: id, PingStatus: 'Online' })) });
    await raw.s3.send(new DeleteObjectCommand({ Bucket: config.bucket, Key: clientReadyKey(ids[1]!) }));

    // Act
    const withoutMarker = await backend.checkClientsReady(run, cell, resources);
    await putReadyMarker(ids[1]!, {
      ready: false,
      reason: 'sysbench autogen.sh failed; last lines: --mysql-password=hunter2 aclocal: not found',
    });
    const failed = backend.checkClientsReady(run, cell, resources);

    // Assert
    expect(withoutMarker.ready).toBe(false);
    expect(withoutMarker.detail).toBe(`${ids[1]} installing sysbench (no ready marker yet)`);
    await expect(failed).rejects.toThrow(
      new RegExp(
        `client ${ids[1]} could not prove that sysbench works: sysbench autogen.sh failed; last lines: ` +
          `--mysql-password=\\*\\*\\* aclocal: not found`,
      ),
    );
    await expect(backend.checkClientsReady(run, cell, resources)).rejects.toBeInstanceOf(UnsupportedOnBackendError);
    // Ready again for the tests that follow.
    await putReadyMarker(ids[1]!, {
      ready: true,
      sysbench: 'sysbench 1.0.20 (using system LuaJIT 2.1.1700000000)',
      sysbenchVersion: '1.0.20',
    });
    expect((await backend.checkClientsReady(run, cell, resources)).ready).toBe(true);
  });

  it("refuses a client whose sysbench lacks the cell engine's driver, and takes one that has it", async () => {
    // Arrange: this cell is Aurora MySQL (sysbench's mysql driver); the second client's build reports pgsql only.
    const ids = resources.clients.map((c) => c.clientId);
    ssm
      .on(DescribeInstanceInformationCommand)
      .resolves({ InstanceInformationList: ids.map((id) => ({ InstanceId: id, PingStatus: 'Online' })) });
    const proven = {
      ready: true,
      sysbench: 'sysbench 1.0.20 (using system LuaJIT 2.1.1700000000)',
      sysbenchVersion: '1.0.20',
    };
    await putReadyMarker(ids[1]!, { ...proven, drivers: ['pgsql'] });

    // Act
    const without = backend.checkClientsReady(run, cell, resources);

    // Assert
    await expect(without).rejects.toThrow(
      new RegExp(`client ${ids[1]}: its sysbench was built without the mysql driver .*\\(compiled-in: pgsql\\)`),
    );
    await putReadyMarker(ids[1]!, { ...proven, drivers: ['mysql', 'pgsql'] });
    expect((await backend.checkClientsReady(run, cell, resources)).ready).toBe(true);
  });

  it('starts one SSM command per job: runner argv, secret ARN, no password; a retry reuses it', async () => {
    // Arrange
    const step = cell.steps[0]!;
    const jobs: RunnerJob[] = resources.clients.map((c, i) => ({
      jobId: `${cell.cellId}/${step.stepId}/run/${c.clientId}`,
      phase: 'run',
      clientId: c.clientId,
      endpoint: resources.readers[i % resources.readers.length]!,
      workload: 'oltp_read_write',
      sysbenchArgs: ['--threads=4', '--time=60'],
      outputPrefix: lakeKeys.raw(run.dt, run.runId, cell.cellId, step.stepId, 'run', c.clientId),
    }));

    // Act
    const handles = await backend.startJobs(run, cell, resources, jobs);
    const again = await backend.startJobs(run, cell, resources, jobs);

    // Assert
    expect(handles).toHaveLength(2);
    expect(again.map((h) => h.ref)).toEqual(handles.map((h) => h.ref));
    expect(ssm.commandCalls(SendCommandCommand)).toHaveLength(2);
    const listed = await raw.ssm.send(new ListCommandsCommand({ CommandId: handles[0]!.ref }));
    const command = listed.Commands![0]!;
    expect(command.DocumentName).toBe('AWS-RunShellScript');
    expect(command.OutputS3BucketName).toBe('ab-lake');
    const script = command.Parameters!['commands']!.join('\n');
    expect(script).toContain('aws s3 cp --recursive --only-show-errors s3://ab-lake/runner/');
    expect(script).toContain(`--password-secret '${resources.credentials.secretRef}'`);
    expect(script).toContain(`--out s3://ab-lake/lake/${jobs[0]!.outputPrefix}`);
    expect(script).toContain(`--host ${resources.readers[0]!.host}`);
    expect(script).toContain('-- --threads=4 --time=60');
    expect(script).not.toMatch(/--password(-env)?[ =](?!.*secretsmanager)/);
    expect(Number(command.Parameters!['executionTimeout']![0])).toBeGreaterThanOrEqual(step.durationS);
  });

  it('maps SSM invocation states to running, exited and lost, and cancels on stop', async () => {
    // Arrange
    const handles = resources.clients.map((c) => ({
      jobId: `j-${c.clientId}`,
      clientId: c.clientId,
      phase: 'run' as const,
      outputPrefix: 'x/',
      ref: 'cmd-1',
      startedAt: NOW.toISOString(),
    }));
    ssm.on(GetCommandInvocationCommand, { InstanceId: handles[0]!.clientId }).resolves({ Status: 'InProgress' });
    ssm
      .on(GetCommandInvocationCommand, { InstanceId: handles[1]!.clientId })
      .resolves({ Status: 'Success', ResponseCode: 0 });
    const running = await backend.checkJobs(run, handles);
    ssm.on(GetCommandInvocationCommand, { InstanceId: handles[0]!.clientId }).resolves({
      Status: 'Failed',
      StatusDetails: 'Failed',
      ResponseCode: 2,
      StandardErrorContent: 'runner: --mysql-password=hunter2 rejected\nrunner: cannot reach host',
    });
    ssm.on(CancelCommandCommand).resolves({});

    // Act
    const finished = await backend.checkJobs(run, handles);
    await backend.stopJobs(run, handles);

    // Assert
    expect(running).toMatchObject({ done: false, running: 1 });
    expect(finished.done).toBe(true);
    expect(finished.jobs[1]).toEqual({ jobId: handles[1]!.jobId, state: 'exited' });
    expect(finished.jobs[0]!.state).toBe('lost');
    expect(finished.jobs[0]!.detail).toContain('exit code 2');
    expect(finished.jobs[0]!.detail).toContain('cannot reach host');
    expect(finished.jobs[0]!.detail).not.toContain('hunter2');
    expect(ssm.commandCalls(CancelCommandCommand).map((c) => c.args[0].input)).toEqual(
      handles.map((h) => ({ CommandId: 'cmd-1', InstanceIds: [h.clientId] })),
    );
  });

  it('collects CloudWatch AWS/RDS metrics (with Forwarding*) and Performance Insights rows', async () => {
    // Arrange: fake points for the writer and reader in moto's CloudWatch.
    const names = cellNames(run.runId, cell.cellId);
    const cw = raw.cw;
    const t0 = new Date(Date.now() - 10 * 60_000);
    const minute = (k: number) => new Date(Math.floor(t0.getTime() / 60_000) * 60_000 + k * 60_000);
    const put = (instance: string, metric: string, values: number[]) =>
      cw.send(
        new PutMetricDataCommand({
          Namespace: 'AWS/RDS',
          MetricData: values.map((v, k) => ({
            MetricName: metric,
            Dimensions: [{ Name: 'DBInstanceIdentifier', Value: instance }],
            Timestamp: minute(k + 1),
            Value: v,
          })),
        }),
      );
    await put(names.writerId, 'CPUUtilization', [40, 50, 60]);
    await put(names.writerId, 'ForwardingWriterOpenSessions', [3, 3, 4]);
    await put(names.readerId(1), 'AuroraReplicaLag', [12, 15, 11]);
    await put(names.readerId(1), 'ForwardingReplicaDMLThroughput', [100, 120, 90]);
    await put('some-other-instance', 'CPUUtilization', [99]);
    // The cluster volume's I/O: a cluster-level count per 5 minutes (Aurora MySQL has no instance IOPS).
    await cw.send(
      new PutMetricDataCommand({
        Namespace: 'AWS/RDS',
        MetricData: [
          {
            MetricName: 'VolumeWriteIOPs',
            Dimensions: [{ Name: 'DBClusterIdentifier', Value: names.clusterId }],
            // Its interval's start: the step's first 5-minute interval.
            Timestamp: new Date(Math.floor(minute(0).getTime() / 300_000) * 300_000),
            Value: 4200,
          },
        ],
      }),
    );
    pi.on(GetResourceMetricsCommand).resolves({
      MetricList: [
        { Key: { Metric: 'db.load.avg' }, DataPoints: [{ Timestamp: minute(1), Value: 2.5 }] },
        {
          Key: {
            Metric: 'db.load.avg',
            Dimensions: { 'db.wait_event.name': 'io/aurora_redo_log_flush', 'db.wait_event.type': 'IO' },
          },
          DataPoints: [
            { Timestamp: minute(1), Value: 1.5 },
            { Timestamp: minute(2), Value: Number.NaN },
          ],
        },
        { Key: { Metric: 'os.cpuUtilization.total.avg' }, DataPoints: [{ Timestamp: minute(1), Value: 47 }] },
      ],
    });

    // Act
    const { rows, windows } = await backend.collectServerMetrics(run, cell, resources, {
      stepId: 's1',
      start: minute(0).toISOString(),
      end: minute(4).toISOString(),
    });

    // Assert: four whole minutes were asked for; three came (minutes 1-3), none of the rest.
    const windowOf = (instance: string, metric: string, source = 'cloudwatch') =>
      windows.find((w) => w.instanceId === instance && w.metric === metric && w.source === source);
    expect(windowOf(names.writerId, 'CPUUtilization')).toEqual({
      instanceId: names.writerId,
      role: 'writer',
      metric: 'CPUUtilization',
      source: 'cloudwatch',
      start: minute(0).toISOString(),
      end: minute(4).toISOString(),
      periodS: 60,
      expected: 4,
      received: 3,
    });
    expect(windowOf(names.writerId, 'DMLThroughput')).toMatchObject({ expected: 4, received: 0 });
    expect(windowOf(names.readerId(1), 'AuroraReplicaLag')).toMatchObject({ role: 'reader', expected: 4, received: 3 });
    expect(windowOf(names.writerId, 'AuroraReplicaLag')).toBeUndefined();
    // PI: the two totals are counted per instance (a wait event is absent from periods it did not occur in).
    expect(windowOf(names.writerId, 'db.load.avg', 'pi')).toMatchObject({ expected: 4, received: 1, periodS: 60 });
    expect(windowOf(names.writerId, 'os.cpuUtilization.total.avg', 'pi')).toMatchObject({ expected: 4, received: 1 });
    expect(
      windows
        .filter((w) => w.source === 'pi')
        .map((w) => w.metric)
        .sort(),
    ).toEqual(['db.load.avg', 'db.load.avg', 'os.cpuUtilization.total.avg', 'os.cpuUtilization.total.avg']);
    const cwRows = rows.filter((r) => r.source === 'cloudwatch');
    const series = (instance: string, metric: string) =>
      cwRows.filter((r) => r.instance_id === instance && r.metric === metric).map((r) => r.value);
    expect(series(names.writerId, 'CPUUtilization')).toEqual([40, 50, 60]);
    expect(series(names.writerId, 'ForwardingWriterOpenSessions')).toEqual([3, 3, 4]);
    expect(series(names.readerId(1), 'AuroraReplicaLag')).toEqual([12, 15, 11]);
    expect(series(names.readerId(1), 'ForwardingReplicaDMLThroughput')).toEqual([100, 120, 90]);
    expect(cwRows.some((r) => r.instance_id === 'some-other-instance')).toBe(false);
    expect(cwRows.filter((r) => r.role === 'cluster').map((r) => [r.instance_id, r.metric, r.value, r.unit])).toEqual([
      [names.clusterId, 'VolumeWriteIOPs', 4200, 'Count/5 minutes'],
    ]);
    // The volume's windows are its 5-minute intervals the step overlaps, the last covering its end, and
    // they count in completeness: one interval came of VolumeWriteIOPs, none of VolumeReadIOPs.
    const volume = volumeWindow(minute(0).toISOString(), minute(4).toISOString(), 300);
    const intervals = (volume.end.getTime() - volume.start.getTime()) / 300_000;
    expect(volume.end.getTime()).toBeGreaterThanOrEqual(minute(4).getTime());
    expect(windowOf(names.clusterId, 'VolumeWriteIOPs')).toEqual({
      instanceId: names.clusterId,
      role: 'cluster',
      metric: 'VolumeWriteIOPs',
      source: 'cloudwatch',
      start: volume.start.toISOString(),
      end: volume.end.toISOString(),
      periodS: 300,
      expected: intervals,
      received: 1,
    });
    expect(windowOf(names.clusterId, 'VolumeReadIOPs')).toMatchObject({ expected: intervals, received: 0 });
    expect(cwRows.find((r) => r.metric === 'CPUUtilization')).toMatchObject({
      run_id: run.runId,
      cell_id: cell.cellId,
      step_id: 's1',
      role: 'writer',
      unit: 'Percent',
      dt: run.dt,
    });
    const piRows = rows.filter((r) => r.source === 'pi');
    expect(piRows.filter((r) => r.instance_id === names.writerId).map((r) => [r.metric, r.value, r.unit])).toEqual([
      ['db.load.avg', 2.5, 'Sessions'],
      ['db.load.avg:io/aurora_redo_log_flush', 1.5, 'Sessions'],
      ['os.cpuUtilization.total.avg', 47, 'Percent'],
    ]);
    // The minute that was missing is published late: the same window, collected again, is complete.
    await cw.send(
      new PutMetricDataCommand({
        Namespace: 'AWS/RDS',
        MetricData: [
          {
            MetricName: 'CPUUtilization',
            Dimensions: [{ Name: 'DBInstanceIdentifier', Value: names.writerId }],
            Timestamp: minute(0),
            Value: 30,
          },
        ],
      }),
    );
    const later = await backend.collectServerMetrics(run, cell, resources, {
      stepId: 's1',
      start: minute(0).toISOString(),
      end: minute(4).toISOString(),
    });
    expect(later.windows.find((w) => w.instanceId === names.writerId && w.metric === 'CPUUtilization')).toMatchObject({
      expected: 4,
      received: 4,
    });
    expect(
      later.rows.filter((r) => r.instance_id === names.writerId && r.metric === 'CPUUtilization').map((r) => r.value),
    ).toEqual([30, 40, 50, 60]);
    const piCall = pi.commandCalls(GetResourceMetricsCommand)[0]!.args[0].input;
    expect(piCall).toMatchObject({
      ServiceType: 'RDS',
      Identifier: resources.backendState[`dbi:${names.writerId}`],
      PeriodInSeconds: 60,
    });
    expect(piCall.MetricQueries).toEqual([
      { Metric: 'db.load.avg', GroupBy: { Group: 'db.wait_event', Limit: 10 } },
      { Metric: 'os.cpuUtilization.total.avg' },
    ]);
  });

  it('tears down in dependency order, and a second teardown finds everything gone', async () => {
    // Arrange
    rdsCalls.length = 0;
    ec2Calls.length = 0;
    const names = cellNames(run.runId, cell.cellId);

    // Act
    const report = await backend.teardownCell(run, cell, resources);
    const again = await backend.teardownCell(run, cell, resources);

    // Assert
    const deletes = rdsCalls
      .filter((c) => c.command.startsWith('Delete'))
      .map(
        (c) =>
          `${c.command}:` +
          String(
            c.input['DBInstanceIdentifier'] ??
              c.input['DBClusterIdentifier'] ??
              c.input['DBClusterParameterGroupName'] ??
              c.input['DBParameterGroupName'],
          ),
      );
    expect(deletes.slice(0, 5)).toEqual([
      `DeleteDBInstanceCommand:${names.readerId(1)}`,
      `DeleteDBInstanceCommand:${names.writerId}`,
      `DeleteDBClusterCommand:${names.clusterId}`,
      `DeleteDBClusterParameterGroupCommand:${names.clusterParameterGroup}`,
      `DeleteDBParameterGroupCommand:${names.instanceParameterGroup}`,
    ]);
    expect(ec2Calls.findIndex((c) => c.command === 'TerminateInstancesCommand')).toBeLessThan(ec2Calls.length);
    expect(report.deleted).toEqual(
      expect.arrayContaining([
        ...resources.clients.map((c) => `ec2-instance:${c.clientId}`),
        `rds-cluster:${names.clusterId}`,
        `rds-cluster-parameter-group:${names.clusterParameterGroup}`,
      ]),
    );
    expect(again.deleted).toEqual([]);
    expect(again.alreadyGone).toEqual(
      expect.arrayContaining([`rds-cluster:${names.clusterId}`, `rds-parameter-group:${names.instanceParameterGroup}`]),
    );
    await expect(
      raw.rds.send(new DescribeDBClustersCommand({ DBClusterIdentifier: names.clusterId })),
    ).rejects.toMatchObject({ name: 'DBClusterNotFoundFault' });
    const groups = await raw.rds.send(new DescribeDBClusterParameterGroupsCommand({}));
    expect(groups.DBClusterParameterGroups?.map((g) => g.DBClusterParameterGroupName)).not.toContain(
      names.clusterParameterGroup,
    );
    const left = await raw.ec2.send(
      new DescribeInstancesCommand({ InstanceIds: resources.clients.map((c) => c.clientId) }),
    );
    for (const i of left.Reservations!.flatMap((r) => r.Instances!))
      expect(['shutting-down', 'terminated']).toContain(i.State?.Name);
  });

  it('tears down a cell whose provisioning never returned (no resources in the state data)', async () => {
    // Arrange: only the parameter groups and the cluster exist, nothing recorded.
    const other = spec({
      variants: [{ name: 'half', instanceClass: 'db.r6g.large', az: 'b' }],
      workloads: [{ name: 'rw', test: 'oltp_read_write' }],
    });
    const otherRun = runOf(other);
    const otherCell = other.cells[0]!;
    await backend.provisionCell(otherRun, otherCell);

    // Act
    const report = await backend.teardownCell(otherRun, otherCell, undefined);

    // Assert
    const names = cellNames(otherRun.runId, otherCell.cellId);
    expect(report.deleted).toEqual(
      expect.arrayContaining([
        `rds-instance:${names.writerId}`,
        `rds-cluster:${names.clusterId}`,
        `rds-cluster-parameter-group:${names.clusterParameterGroup}`,
      ]),
    );
    // A cell without instance parameters never made an instance parameter group: none is deleted (the
    // role's tag condition would deny the call on a group that does not exist).
    expect([...report.deleted, ...report.alreadyGone]).not.toContain(
      `rds-parameter-group:${names.instanceParameterGroup}`,
    );
  });

  it('names ResourceStillInUseError after the state machine Retry that waits for it', () => {
    expect(new ResourceStillInUseError('x').name).toBe('ResourceStillInUseError');
  });
});

describe('S3 lake on moto', () => {
  it('puts, gets and lists keys across pages; a missing key is undefined', async () => {
    // Arrange
    const clients = clientsFor();
    const lake = new S3LakeStore(clients.s3, 'ab-lake', 'lake-test', 2);
    const keys = [
      'tables/steps/dt=2026-11-21/a.jsonl',
      'tables/steps/dt=2026-11-21/b.jsonl',
      'tables/steps/dt=2026-11-21/c.jsonl',
      'tables/runs/dt=2026-11-21/r.jsonl',
    ];

    // Act
    for (const k of keys) await lake.put(k, `{"key":"${k}"}\n`);
    await lake.put('raw/x/result.json', new TextEncoder().encode('{"exitCode":0}'));
    const listed = await lake.list('tables/steps/');
    const body = await lake.get(keys[1]!);
    const missing = await lake.get('tables/steps/dt=2026-11-21/nope.jsonl');

    // Assert
    expect(listed).toEqual(keys.slice(0, 3));
    expect(body).toBe(`{"key":"${keys[1]}"}\n`);
    expect(missing).toBeUndefined();
    expect(await lake.get('raw/x/result.json')).toBe('{"exitCode":0}');
    expect(lake.describe()).toBe('s3://ab-lake/lake-test/');
    const rawList = await raw.s3.send(
      new ListObjectsV2Command({ Bucket: 'ab-lake', Prefix: 'lake-test/tables/runs/' }),
    );
    expect(rawList.Contents?.map((o) => o.Key)).toEqual(['lake-test/tables/runs/dt=2026-11-21/r.jsonl']);
    destroyAwsClients(clients);
  });
});

describe('sweeper on moto', () => {
  it('deletes only expired cells, and teardownRun deletes one run whatever its expiry', async () => {
    const onWriter = { workloads: [{ name: 'rw', test: 'oltp_read_write' as const }] };
    // Arrange: an expired cell (ttl 1 h, swept 2 h later), a fresh one (ttl 48 h), and a third run.
    const clients = clientsFor();
    const expiredPlan = spec({
      variants: [
        {
          name: 'old',
          instanceClass: 'db.r6g.large',
          az: 'a',
          readers: 1,
          clients: { count: 1, instanceType: 'c6i.large', placement: 'same-az' },
        },
      ],
      ttlHours: 1,
      ...onWriter,
    });
    const freshPlan = spec({
      variants: [{ name: 'new', instanceClass: 'db.r6g.large', az: 'b' }],
      ttlHours: 48,
      ...onWriter,
    });
    const abortedPlan = spec({
      variants: [{ name: 'abort', instanceClass: 'db.r6g.large', az: 'a' }],
      ttlHours: 48,
      ...onWriter,
    });
    const backend = new AwsBackend({ config, clients, now: () => NOW });
    const expired = await provisionReady(backend, runOf(expiredPlan), expiredPlan.cells[0]!);
    await backend.startClients(runOf(expiredPlan), expiredPlan.cells[0]!, expired);
    await backend.provisionCell(runOf(freshPlan), freshPlan.cells[0]!);
    await backend.provisionCell(runOf(abortedPlan), abortedPlan.cells[0]!);
    const sweepAt = new Date(NOW.getTime() + 2 * 3600_000);

    // Act
    const swept = await sweepExpired(clients, config, sweepAt);
    const sweptAgain = await sweepExpired(clients, config, sweepAt);
    const aborted = await teardownRun(clients, config, abortedPlan.runId, sweepAt);

    // Assert
    const expiredNames = cellNames(expiredPlan.runId, expiredPlan.cells[0]!.cellId);
    const freshNames = cellNames(freshPlan.runId, freshPlan.cells[0]!.cellId);
    const abortedNames = cellNames(abortedPlan.runId, abortedPlan.cells[0]!.cellId);
    expect(swept.cells.map((c) => c.runId)).toContain(expiredPlan.runId);
    expect(swept.cells.map((c) => c.runId)).not.toContain(freshPlan.runId);
    expect(swept.deleted).toEqual(
      expect.arrayContaining([
        `rds-cluster:${expiredNames.clusterId}`,
        `rds-instance:${expiredNames.readerId(1)}`,
        `rds-cluster-parameter-group:${expiredNames.clusterParameterGroup}`,
        ...expired.clients.map((c) => `ec2-instance:${c.clientId}`),
      ]),
    );
    expect(swept.pending).toEqual([]);
    expect(sweptAgain.cells.map((c) => c.runId)).not.toContain(expiredPlan.runId);
    expect(aborted.cells.map((c) => c.runId)).toEqual([abortedPlan.runId]);
    expect(aborted.deleted).toContain(`rds-cluster:${abortedNames.clusterId}`);
    const clusters = (await raw.rds.send(new DescribeDBClustersCommand({}))).DBClusters!.map(
      (c) => c.DBClusterIdentifier,
    );
    expect(clusters).toContain(freshNames.clusterId);
    expect(clusters).not.toContain(expiredNames.clusterId);
    expect(clusters).not.toContain(abortedNames.clusterId);
    const pgs = (await raw.rds.send(new DescribeDBParameterGroupsCommand({}))).DBParameterGroups!.map(
      (g) => g.DBParameterGroupName,
    );
    expect(pgs.filter((n) => n?.startsWith(expiredNames.base))).toEqual([]);
    destroyAwsClients(clients);
  });

  it('deletes every cell of a run once any of its resources is marked expired (teardownRun re-tagged it)', async () => {
    // Arrange: a two-cell run with 48 h to live; one cluster re-tagged to expire now, as teardownRun does.
    const clients = clientsFor();
    const plan = spec({
      variants: [
        { name: 'one', instanceClass: 'db.r6g.large', az: 'a' },
        { name: 'two', instanceClass: 'db.r6g.large', az: 'b' },
      ],
      ttlHours: 48,
      workloads: [{ name: 'rw', test: 'oltp_read_write' as const }],
    });
    const backend = new AwsBackend({ config, clients, now: () => NOW });
    for (const c of plan.cells) await backend.provisionCell(runOf(plan), c);
    const [first, second] = plan.cells.map((c) => cellNames(plan.runId, c.cellId));
    const marked = (await raw.rds.send(new DescribeDBClustersCommand({ DBClusterIdentifier: first!.clusterId })))
      .DBClusters![0]!;
    await raw.rds.send(
      new AddTagsToResourceCommand({
        ResourceName: marked.DBClusterArn!,
        Tags: [{ Key: 'aurora-bench:expires-at', Value: NOW.toISOString() }],
      }),
    );

    // Act
    const swept = await sweepExpired(clients, config, new Date(NOW.getTime() + 3600_000));

    // Assert
    expect(swept.deleted).toEqual(
      expect.arrayContaining([
        `rds-cluster:${first!.clusterId}`,
        `rds-cluster:${second!.clusterId}`,
        `rds-cluster-parameter-group:${second!.clusterParameterGroup}`,
      ]),
    );
    const clusters = (await raw.rds.send(new DescribeDBClustersCommand({}))).DBClusters!.map(
      (c) => c.DBClusterIdentifier,
    );
    expect(clusters).not.toContain(first!.clusterId);
    expect(clusters).not.toContain(second!.clusterId);
    destroyAwsClients(clients);
  });
});

describe('Athena on moto', () => {
  it('runs a lake query and returns its rows without the header row', async () => {
    // Arrange: moto does not execute SQL; it serves the result set queued through its API.
    const clients = clientsFor();
    const columnInfo = [
      { Name: 'variant', Type: 'varchar', Label: 'variant' },
      { Name: 'tps', Type: 'double', Label: 'tps' },
    ];
    await queueAthenaResults(moto.endpoint, [
      {
        column_info: columnInfo,
        rows: [
          { Data: [{ VarCharValue: 'variant' }, { VarCharValue: 'tps' }] },
          { Data: [{ VarCharValue: 'r6g' }, { VarCharValue: '1234.5' }] },
          { Data: [{ VarCharValue: 'r5' }, {}] },
        ],
      },
    ]);

    // Act
    const result = await runAthenaQuery(
      clients.athena,
      {
        sql: 'SELECT variant, avg(tps) AS tps FROM steps GROUP BY 1',
        database: 'aurora_bench',
        outputLocation: 's3://ab-lake/athena/',
        requestToken: athenaRequestToken('run-1', 'variant_summary'),
      },
      { pollMs: 10 },
    );

    // Assert
    expect(result.columns).toEqual([
      { name: 'variant', type: 'varchar' },
      { name: 'tps', type: 'double' },
    ]);
    expect(result.rows).toEqual([
      { variant: 'r6g', tps: '1234.5' },
      { variant: 'r5', tps: null },
    ]);
    expect(result.queryExecutionId).toMatch(/\S+/);
    destroyAwsClients(clients);
  });
});
