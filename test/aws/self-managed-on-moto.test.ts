/**
 * The AWS backend's self-managed servers (core/backends/aws/self-managed-servers.ts) against one
 * moto server (EC2, Secrets Manager, SSM SendCommand/ListCommands, CloudWatch): the credentials
 * secret before the instances, a writer and a replica from the server launch template with the
 * cell's tags, readiness one stage per call (the writer's setup, its JSON line, the replica's setup
 * pointing at the writer's reported endpoint, its JSON line), a failed setup's reason, an idempotent
 * repeat, teardown with a second pass, the sweeper, and the AWS/EC2 metrics under the reports' names.
 * moto runs no command on an instance: aws-sdk-client-mock answers what only an agent could (SSM
 * registration, GetCommandInvocation with the script's stdout/stderr), as in the other test/aws
 * files; SendCommand and ListCommands go on to moto. The scripts themselves are tested on real
 * MariaDB in test/integration.
 */
import { PutMetricDataCommand } from '@aws-sdk/client-cloudwatch';
import { DescribeInstancesCommand, type Instance } from '@aws-sdk/client-ec2';
import { DescribeSecretCommand, GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import {
  DescribeInstanceInformationCommand,
  GetCommandInvocationCommand,
  ListCommandsCommand,
  SendCommandCommand,
  type GetCommandInvocationCommandOutput,
  type SendCommandCommandInput,
} from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import type { CellPlan, Plan } from '../../core/plan/types';
import type { CellResources, RunContext } from '../../core/backend';
import { AwsBackend } from '../../core/backends/aws/aws-backend';
import { makeAwsClients, destroyAwsClients, type AwsClients } from '../../core/backends/aws/clients';
import type { AwsBackendConfig } from '../../core/backends/aws/config';
import { cellNames } from '../../core/backends/aws/names';
import { ServerSetupFailedError } from '../../core/backends/aws/self-managed-servers';
import { checkServerInstances, InstanceTypeCatalog } from '../../core/backends/aws/preflight-clients';
import { teardownRun } from '../../core/backends/aws/sweeper';
import { serverVolumeGib } from '../../core/aurora/engines';
import { validateSpec } from '../../core/experiment/validate';
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

const NOW = new Date('2026-11-23T04:00:00Z');

let moto: MotoServer;
let raw: RawClients;
let secrets: SecretsManagerClient;
let config: AwsBackendConfig;
let clients: AwsClients;
let backend: AwsBackend;
/** Every call the backend made, in order, as "<service> <command>". */
const calls: { call: string; input: Record<string, unknown> }[] = [];
/** What GetCommandInvocation answers per instance id (absent: InProgress). */
const invocations = new Map<string, GetCommandInvocationCommandOutput>();
const sent: SendCommandCommandInput[] = [];

beforeAll(async () => {
  moto = startMoto();
  raw = rawClients(moto.endpoint);
  secrets = new SecretsManagerClient({ region: REGION, endpoint: moto.endpoint, credentials: CREDENTIALS });
  config = await createStandingInfrastructure(moto.endpoint, raw);
  clients = makeAwsClients({ region: REGION, endpoint: moto.endpoint, credentials: CREDENTIALS, maxAttempts: 1 });
  const record = (service: string, commandName: unknown, input: unknown) =>
    calls.push({
      call: `${service} ${String(commandName).replace(/Command$/, '')}`,
      input: input as Record<string, unknown>,
    });
  clients.ec2.middlewareStack.add(
    (next, context) => async (args) => {
      record('ec2', context.commandName, args.input);
      return next(args);
    },
    { step: 'initialize', name: 'recordCalls' },
  );
  clients.secrets.middlewareStack.add(
    (next, context) => async (args) => {
      record('secrets', context.commandName, args.input);
      return next(args);
    },
    { step: 'initialize', name: 'recordCalls' },
  );
  const ssm = mockClient(clients.ssm);
  ssm.on(SendCommandCommand).callsFake((input: SendCommandCommandInput) => {
    sent.push(input);
    return raw.ssm.send(new SendCommandCommand(input));
  });
  ssm.on(ListCommandsCommand).callsFake((input) => raw.ssm.send(new ListCommandsCommand(input)));
  ssm.on(DescribeInstanceInformationCommand).callsFake((input: { Filters?: { Key: string; Values: string[] }[] }) => {
    const ids = input.Filters?.find((f) => f.Key === 'InstanceIds')?.Values ?? [];
    return { InstanceInformationList: ids.map((id) => ({ InstanceId: id, PingStatus: 'Online' })) };
  });
  ssm
    .on(GetCommandInvocationCommand)
    .callsFake((input: { InstanceId: string }) => invocations.get(input.InstanceId) ?? { Status: 'InProgress' });
  backend = new AwsBackend({ config, clients, now: () => NOW });
}, 300_000);

afterAll(() => {
  destroyAwsClients(clients);
  destroyRawClients(raw);
  secrets.destroy();
  moto.stop();
});

function planOf(readers: number): Plan {
  const s = validateSpec({
    name: 'self-managed-aws',
    engine: { kind: 'self-managed', version: 'mariadb-10.11' },
    region: REGION,
    variants: [
      {
        name: 'pool',
        instanceClass: 'db.r6g.large',
        az: 'a',
        readers,
        instanceParameters: { thread_handling: 'pool-of-threads' },
      },
    ],
    data: { tables: 2, tableSize: 1000 },
    workloads: [{ name: 'ro', test: 'oltp_read_only', threads: [4], durationS: 30 }],
    ttlHours: 2,
  });
  return planRun(s, { backend: 'aws', now: NOW, runId: `sm-${Math.random().toString(16).slice(2, 8)}` });
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

async function instance(id: string): Promise<Instance> {
  const out = await raw.ec2.send(new DescribeInstancesCommand({ InstanceIds: [id] }));
  return out.Reservations![0]!.Instances![0]!;
}

const tagsOf = (i: Instance) => Object.fromEntries((i.Tags ?? []).map((t) => [t.Key, t.Value]));

/** The argument after `flag` in an AWS-RunShellScript command line. */
function argOf(input: SendCommandCommandInput, flag: string): string | undefined {
  const line = input.Parameters?.['commands']?.find((c) => c.includes('server-setup.sh')) ?? '';
  const words = line.split(' ');
  const at = words.indexOf(flag);
  return at < 0 ? undefined : words[at + 1]?.replace(/^'|'$/g, '');
}

function succeeded(json: Record<string, unknown>): GetCommandInvocationCommandOutput {
  return {
    Status: 'Success',
    ResponseCode: 0,
    StandardOutputContent: `server-setup: starting mariadbd\n${JSON.stringify(json)}\n`,
    $metadata: {},
  };
}

describe('self-managed MariaDB on EC2: a writer and one replica', () => {
  const plan = planOf(1);
  const run = runOf(plan);
  const cell: CellPlan = plan.cells[0]!;
  const names = cellNames(run.runId, cell.cellId);
  let provisioned: CellResources;
  let ready: CellResources;

  it('creates the credentials secret, then the writer and the replica from the server launch template', async () => {
    // Arrange
    calls.length = 0;

    // Act
    provisioned = await backend.provisionCell(run, cell);

    // Assert: the secret before any instance; one RunInstances per server.
    const order = calls.map((c) => c.call).filter((c) => c === 'secrets CreateSecret' || c === 'ec2 RunInstances');
    expect(order).toEqual(['secrets CreateSecret', 'ec2 RunInstances', 'ec2 RunInstances']);
    const secret = await secrets.send(new GetSecretValueCommand({ SecretId: names.serverSecretName }));
    const value = JSON.parse(secret.SecretString!) as { username: string; password: string };
    expect(value.username).toBe('benchadmin');
    expect(value.password).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(provisioned.credentials).toEqual({ user: 'benchadmin', secretRef: secret.ARN });
    const secretTags = Object.fromEntries(
      ((await secrets.send(new DescribeSecretCommand({ SecretId: names.serverSecretName }))).Tags ?? []).map((t) => [
        t.Key,
        t.Value,
      ]),
    );
    expect(secretTags).toMatchObject({ 'aurora-bench:run-id': run.runId, 'aurora-bench:cell-id': cell.cellId });

    const ids = provisioned.backendState['serverIds']!.split(',');
    expect(ids).toHaveLength(2);
    const [writer, replica] = [await instance(ids[0]!), await instance(ids[1]!)];
    expect(writer.InstanceType).toBe('r6g.large');
    expect(tagsOf(writer)).toMatchObject({
      'aurora-bench:run-id': run.runId,
      'aurora-bench:role': 'server-writer',
      'aurora-bench:server-index': '0',
    });
    expect(tagsOf(replica)).toMatchObject({
      'aurora-bench:cell-id': cell.cellId,
      'aurora-bench:role': 'server-replica',
      'aurora-bench:server-index': '1',
    });
    expect(writer.SecurityGroups?.map((g) => g.GroupId)).toEqual([config.serverSecurityGroupId]);
    const launch = calls.find((c) => c.call === 'ec2 RunInstances')!.input;
    expect(launch).toMatchObject({
      LaunchTemplate: { LaunchTemplateId: config.serverLaunchTemplateIds!.arm64 },
      Monitoring: { Enabled: true },
      BlockDeviceMappings: [
        {
          DeviceName: '/dev/xvda',
          Ebs: { VolumeSize: serverVolumeGib(cell.data), VolumeType: 'gp3', DeleteOnTermination: true },
        },
      ],
    });
  });

  it("becomes ready stage by stage: the writer first, the replica pointed at the writer's endpoint", async () => {
    // Every check gets ProvisionCell's resources, as the workflow passes them (CheckCellReady's
    // result goes to its own ResultPath): what earlier checks started is found again in AWS.
    // Act 1: instances running and online: the writer's setup is sent, nothing for the replica.
    const first = await backend.checkCellReady(run, cell, provisioned);
    const [writerId, replicaId] = provisioned.backendState['serverIds']!.split(',') as [string, string];
    // Act 2: the writer's setup still runs.
    const second = await backend.checkCellReady(run, cell, provisioned);
    // Act 3: the writer reports (a port other than 3306: the
    // endpoint comes from this line); the replica's setup is sent.
    invocations.set(
      writerId,
      succeeded({
        ready: true,
        role: 'writer',
        host: '10.20.1.11',
        port: 3307,
        version: '10.11.10-MariaDB',
        serverId: 1,
      }),
    );
    const third = await backend.checkCellReady(run, cell, provisioned);
    // Act 4: the replica reports.
    invocations.set(
      replicaId,
      succeeded({
        ready: true,
        role: 'replica',
        host: '10.20.1.12',
        port: 3306,
        version: '10.11.10-MariaDB',
        serverId: 2,
      }),
    );
    const fourth = await backend.checkCellReady(run, cell, provisioned);
    ready = fourth.resources;

    // Assert
    expect([first.ready, second.ready, third.ready, fourth.ready]).toEqual([false, false, false, true]);
    expect(first.detail).toMatch(/writer setup InProgress/);
    expect(second.detail).toMatch(/writer setup InProgress/);
    expect(third.detail).toMatch(/replica 1 setup InProgress/);
    expect(third.resources.backendState['setupCommand0']).toBe(first.resources.backendState['setupCommand0']);
    expect(sent.map((s) => s.InstanceIds)).toEqual([[writerId], [replicaId]]);
    const [writerSetup, replicaSetup] = sent as [SendCommandCommandInput, SendCommandCommandInput];
    expect(writerSetup.DocumentName).toBe('AWS-RunShellScript');
    expect(argOf(writerSetup, '--role')).toBe('writer');
    expect(argOf(writerSetup, '--server-id')).toBe('1');
    expect(argOf(writerSetup, '--secret-arn')).toBe(provisioned.credentials.secretRef);
    expect(argOf(writerSetup, '--writer-host')).toBeUndefined();
    expect(Buffer.from(argOf(writerSetup, '--options-b64')!, 'base64').toString('utf8')).toMatch(
      /^thread_handling=pool-of-threads$/m,
    );
    expect(argOf(replicaSetup, '--role')).toBe('replica');
    expect(argOf(replicaSetup, '--server-id')).toBe('2');
    expect(argOf(replicaSetup, '--writer-host')).toBe('10.20.1.11');
    expect(argOf(replicaSetup, '--writer-port')).toBe('3307');
    expect(ready.writer).toMatchObject({ instanceId: writerId, role: 'writer', host: '10.20.1.11', port: 3307 });
    expect(ready.readers).toEqual([
      expect.objectContaining({ instanceId: replicaId, role: 'reader', host: '10.20.1.12', port: 3306 }),
    ]);
    expect(fourth.detail).toMatch(/10\.11\.10-MariaDB/);
  });

  it('is idempotent: provisioning and readiness again launch, create and send nothing new', async () => {
    // Arrange
    const launches = calls.filter((c) => c.call === 'ec2 RunInstances').length;
    const sends = sent.length;
    // Act
    const again = await backend.provisionCell(run, cell);
    const state = await backend.checkCellReady(run, cell, { ...again, backendState: ready.backendState });
    // Assert
    expect(again.backendState['serverIds']).toBe(provisioned.backendState['serverIds']);
    expect(again.credentials.secretRef).toBe(provisioned.credentials.secretRef);
    expect(calls.filter((c) => c.call === 'ec2 RunInstances').length).toBe(launches);
    expect(sent.length).toBe(sends);
    expect(state.ready).toBe(true);
  });

  it(
    'collects the AWS/EC2 metrics under the reports names, byte and operation counts per second, and the ' +
      "CloudWatch agent's memory",
    async () => {
      // Arrange: three one-minute datapoints of the writer.
      const writerId = ready.writer!.instanceId;
      const minute = (k: number) => new Date(Date.parse('2026-11-23T04:10:00Z') + k * 60_000);
      for (const [metric, values] of [
        ['CPUUtilization', [40, 50, 60]],
        ['NetworkIn', [6000, 6000, 12000]],
        ['EBSWriteOps', [600, 1200, 1800]],
      ] as const) {
        await raw.cw.send(
          new PutMetricDataCommand({
            Namespace: 'AWS/EC2',
            MetricData: values.map((v, k) => ({
              MetricName: metric,
              Dimensions: [{ Name: 'InstanceId', Value: writerId }],
              Timestamp: minute(k),
              Value: v,
            })),
          }),
        );
      }
      // The agent (client/cloudwatch-agent.json: namespace CWAgent, InstanceId the only dimension) in
      // two of the three minutes: memory is not counted in the window's completeness.
      await raw.cw.send(
        new PutMetricDataCommand({
          Namespace: 'CWAgent',
          MetricData: [3_500_000_000, 3_250_000_000].map((v, k) => ({
            MetricName: 'mem_available',
            Dimensions: [{ Name: 'InstanceId', Value: writerId }],
            Timestamp: minute(k),
            Value: v,
            Unit: 'Bytes',
          })),
        }),
      );
      // Act
      const collected = await backend.collectServerMetrics(run, cell, ready, {
        stepId: 's1',
        start: '2026-11-23T04:10:00Z',
        end: '2026-11-23T04:13:00Z',
      });
      // Assert
      const of = (metric: string) =>
        collected.rows.filter((r) => r.instance_id === writerId && r.metric === metric).map((r) => r.value);
      expect(of('CPUUtilization')).toEqual([40, 50, 60]);
      expect(of('NetworkReceiveThroughput')).toEqual([100, 100, 200]);
      expect(of('WriteIOPS')).toEqual([10, 20, 30]);
      expect(of('FreeableMemory')).toEqual([3_500_000_000, 3_250_000_000]);
      expect(collected.rows.find((r) => r.metric === 'FreeableMemory')).toMatchObject({
        unit: 'Bytes',
        role: 'writer',
        source: 'cloudwatch',
      });
      const counted = collected.windows.filter((w) => w.instanceId === writerId).map((w) => w.metric);
      expect(counted.sort()).toEqual(['CPUUtilization', 'NetworkReceiveThroughput', 'NetworkTransmitThroughput']);
      expect(collected.windows.find((w) => w.instanceId === writerId && w.metric === 'CPUUtilization')).toMatchObject({
        expected: 3,
        received: 3,
      });
      expect(ready.notes.map((n) => n.message).join('\n')).toMatch(
        new RegExp(
          /DatabaseConnections and ReplicaLag are not collected .*FreeableMemory is the CloudWatch/.source +
            / agent's CWAgent mem_available/.source,
        ),
      );
    },
  );

  it('tears down the instances and the secret; a second pass finds them gone', async () => {
    // Act
    const first = await backend.teardownCell(run, cell, ready);
    const second = await backend.teardownCell(run, cell, ready);
    // Assert
    const ids = ready.backendState['serverIds']!.split(',');
    expect(first.deleted).toEqual(
      expect.arrayContaining([...ids.map((id) => `ec2-instance:${id}`), `secret:${names.serverSecretName}`]),
    );
    for (const id of ids) expect((await instance(id)).State?.Name).toMatch(/shutting-down|terminated/);
    await expect(secrets.send(new DescribeSecretCommand({ SecretId: names.serverSecretName }))).rejects.toThrow(
      /ResourceNotFound|can't find|not find/i,
    );
    expect(second.deleted).toEqual([]);
    expect(second.alreadyGone).toEqual(expect.arrayContaining([`secret:${names.serverSecretName}`]));
  });
});

describe('self-managed: a failed setup, and the sweeper', () => {
  const plan = planOf(0);
  const run = runOf(plan);
  const cell: CellPlan = plan.cells[0]!;
  const names = cellNames(run.runId, cell.cellId);

  it("stops the cell with the script's reason when the writer's setup fails", async () => {
    // Arrange
    const provisioned = await backend.provisionCell(run, cell);
    const writerId = provisioned.backendState['serverIds']!;
    const started = await backend.checkCellReady(run, cell, provisioned);
    invocations.set(writerId, {
      Status: 'Failed',
      StatusDetails: 'Failed',
      ResponseCode: 1,
      StandardOutputContent: 'server-setup: waiting for the install marker\n',
      StandardErrorContent: 'dnf: noise\nserver-install failed: no package provides mariadb1011-server\n',
      $metadata: {},
    });
    // Act
    const failing = backend.checkCellReady(run, cell, started.resources);
    // Assert
    await expect(failing).rejects.toThrow(ServerSetupFailedError);
    await expect(backend.checkCellReady(run, cell, started.resources)).rejects.toThrow(
      new RegExp(
        /server setup of the writer \(i-\w+\) of .* failed: server-install failed: no package/.source +
          / provides mariadb1011-server \(SSM Failed exit code 1\)/.source,
      ),
    );
  });

  it('sweeps what the cell left (its server instance and its secret) by their tags', async () => {
    // Act
    const report = await teardownRun(clients, config, run.runId, NOW);
    // Assert
    expect(report.cells.map((c) => c.cellId)).toEqual([cell.cellId]);
    expect(report.deleted.filter((d) => d.startsWith('ec2-instance:'))).toHaveLength(1);
    expect(report.deleted.filter((d) => d.startsWith('secret:'))).toHaveLength(1);
    await expect(secrets.send(new DescribeSecretCommand({ SecretId: names.serverSecretName }))).rejects.toThrow();
  });
});

describe('self-managed: the preflight of the server type', () => {
  it('describes servers of a listed type; refuses them where the stack has no server launch template', async () => {
    // Arrange
    const plan = planOf(1);
    const spec = validateSpec({
      name: 'self-managed-aws',
      engine: { kind: 'self-managed', version: 'mariadb-10.11' },
      region: REGION,
      variants: [{ name: 'pool', instanceClass: 'db.r6g.large', az: 'a', readers: 1 }],
      data: { tables: 2, tableSize: 1000 },
      workloads: [{ name: 'ro', test: 'oltp_read_only', threads: [4], durationS: 30 }],
    });
    const input = { plan, spec, clients, config, types: new InstanceTypeCatalog(clients), stackLabel: 'the stack' };
    const withoutServers: AwsBackendConfig = { ...config, serverLaunchTemplateIds: {} };
    // Act
    const ok = await checkServerInstances(input);
    const refused = await checkServerInstances({ ...input, config: withoutServers });
    // Assert
    expect(ok.verdict).toBe('ok');
    expect(ok.summary).toBe('2 x r6g.large (arm64, 2 vCPUs) in us-east-1a');
    expect(refused.verdict).toBe('refuse');
    expect(refused.notes).toEqual([
      expect.objectContaining({
        level: 'refused',
        path: 'variants[0].instanceClass',
        message: expect.stringMatching(
          /r6g\.large is arm64 but the stack has no self-managed server launch template for arm64/,
        ),
      }),
    ]);
  });
});
