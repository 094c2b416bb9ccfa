/**
 * The rehearsal's emulations one by one, against one moto server and real MariaDB servers / bash:
 * what an RDS cluster created through the API really contains, what an SSM command really does,
 * and when CloudWatch datapoints become visible. The whole workflow through them is in
 * rehearsal-runs.test.ts.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CloudWatchClient, GetMetricDataCommand } from '@aws-sdk/client-cloudwatch';
import { EC2Client, RunInstancesCommand, TerminateInstancesCommand } from '@aws-sdk/client-ec2';
import {
  CreateDBClusterCommand,
  CreateDBClusterParameterGroupCommand,
  CreateDBInstanceCommand,
  CreateDBParameterGroupCommand,
  DeleteDBClusterCommand,
  DeleteDBInstanceCommand,
  DescribeDBClusterParametersCommand,
  DescribeDBClustersCommand,
  DescribeDBInstancesCommand,
  ModifyDBClusterParameterGroupCommand,
  ModifyDBParameterGroupCommand,
  RDSClient,
  RebootDBInstanceCommand,
  type DBInstance,
} from '@aws-sdk/client-rds';
import { CreateBucketCommand, GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import {
  CreateSecretCommand,
  GetSecretValueCommand,
  ListSecretsCommand,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import {
  CancelCommandCommand,
  DescribeInstanceInformationCommand,
  GetCommandInvocationCommand,
  SendCommandCommand,
  SSMClient,
  type GetCommandInvocationCommandOutput,
} from '@aws-sdk/client-ssm';
import { renderServerOptions, serverOptionsBase64 } from '../../core/aurora/server-config';
import { serverSetupCommands } from '../../core/backends/aws/self-managed-servers';
import { checkLocalDependencies } from '../../core/backends/local/preflight';
import type { ServerInfo } from '../../core/backends/local/mariadb-server';
import { isAlive } from '../../core/backends/local/processes';
import { query } from '../../core/backends/local/sql-client';
import { ensureTemplate } from '../../core/backends/local/template';
import { awsCliPath, checkAwsCliReachesMoto } from '../../core/rehearsal/aws-cli';
import { CloudWatchPublisher } from '../../core/rehearsal/cloudwatch-publisher';
import { MOTO_CREDENTIALS } from '../../core/rehearsal/moto-server';
import { ProcessTracker } from '../../core/rehearsal/process-tracker';
import { MASTER_USER_PRIVILEGES, RdsEmulation, type ClusterMembers } from '../../core/rehearsal/rds-emulation';
import { catalogueCheck } from '../../core/rehearsal/catalogue-check';
import { SsmAgentEmulation } from '../../core/rehearsal/ssm-agent';
import type { MotoServer } from '../aws/moto';
import { rehearsalFile } from '../helpers/rehearsal-file';

const execFileAsync = promisify(execFile);
const REGION = 'us-east-1';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let moto: MotoServer;
let work: string;
let common: { region: string; endpoint: string; credentials: { accessKeyId: string; secretAccessKey: string } };

const file = rehearsalFile('abr-emu-');
beforeAll(() => {
  ({ moto, work } = file);
  common = { region: REGION, endpoint: moto.endpoint, credentials: { ...MOTO_CREDENTIALS } };
});

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(100);
  }
}

/** A [client] option file for a TCP login (the password quoted as the mariadb client reads it). */
function tcpLogin(
  name: string,
  port: number,
  user: string,
  password: string,
): { client: string; clientDefaultsFile: string } {
  const file = join(work, `${name}.cnf`);
  const quote = (v: string) => `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
  writeFileSync(
    file,
    `[client]\nhost=127.0.0.1\nport=${port}\nprotocol=tcp\nuser=${quote(user)}\npassword=${quote(password)}\n`,
    { mode: 0o600 },
  );
  return { client: 'mariadb', clientDefaultsFile: file };
}

describe('RDS emulation: a cluster created through the API is real MariaDB with only what the calls asked', () => {
  let rds: RDSClient;
  let secrets: SecretsManagerClient;
  let emulation: RdsEmulation;
  let tracker: ProcessTracker;
  const membersSeen: ClusterMembers[] = [];

  beforeAll(async () => {
    const versions = await checkLocalDependencies();
    const template = await ensureTemplate(versions.tools, versions.serverVersion, undefined, 'rds');
    secrets = new SecretsManagerClient(common);
    tracker = new ProcessTracker();
    emulation = new RdsEmulation({
      tools: versions.tools,
      template,
      serverVersion: versions.serverVersion,
      dir: join(work, 'db'),
      secrets,
      tracker,
      checkParameters: catalogueCheck,
      onMembersChanged: (m) => {
        membersSeen.push(m);
      },
    });
    rds = new RDSClient(common);
    emulation.install(rds);
  });
  afterAll(async () => {
    await emulation.shutdown();
    tracker.dispose();
    rds.destroy();
    secrets.destroy();
  });

  const instance = async (id: string): Promise<DBInstance> =>
    (await rds.send(new DescribeDBInstancesCommand({ DBInstanceIdentifier: id }))).DBInstances![0]!;

  it("takes each instance creating to available: secret's master user, DatabaseName, group, no sbtest", async () => {
    // Arrange
    await rds.send(
      new CreateDBClusterParameterGroupCommand({
        DBClusterParameterGroupName: 'emu-cpg',
        DBParameterGroupFamily: 'aurora-mysql8.0',
        Description: 'test',
      }),
    );
    await rds.send(
      new ModifyDBClusterParameterGroupCommand({
        DBClusterParameterGroupName: 'emu-cpg',
        Parameters: [
          { ParameterName: 'innodb_print_all_deadlocks', ParameterValue: '1', ApplyMethod: 'pending-reboot' },
        ],
      }),
    );
    await rds.send(
      new CreateDBParameterGroupCommand({
        DBParameterGroupName: 'emu-ipg',
        DBParameterGroupFamily: 'aurora-mysql8.0',
        Description: 'test',
      }),
    );
    await rds.send(
      new ModifyDBParameterGroupCommand({
        DBParameterGroupName: 'emu-ipg',
        Parameters: [
          { ParameterName: 'max_prepared_stmt_count', ParameterValue: '23456', ApplyMethod: 'pending-reboot' },
        ],
      }),
    );

    // Act
    const cluster = await rds.send(
      new CreateDBClusterCommand({
        DBClusterIdentifier: 'emu-c1',
        Engine: 'aurora-mysql',
        EngineVersion: '8.0.mysql_aurora.3.04.0',
        MasterUsername: 'benchadmin',
        ManageMasterUserPassword: true,
        DatabaseName: 'benchdata',
        DBClusterParameterGroupName: 'emu-cpg',
      }),
    );
    const created = await rds.send(
      new CreateDBInstanceCommand({
        DBInstanceIdentifier: 'emu-c1-w',
        DBClusterIdentifier: 'emu-c1',
        Engine: 'aurora-mysql',
        DBInstanceClass: 'db.r6g.large',
        DBParameterGroupName: 'emu-ipg',
      }),
    );
    await rds.send(
      new CreateDBInstanceCommand({
        DBInstanceIdentifier: 'emu-c1-r1',
        DBClusterIdentifier: 'emu-c1',
        Engine: 'aurora-mysql',
        DBInstanceClass: 'db.r6g.large',
        DBParameterGroupName: 'emu-ipg',
      }),
    );
    const writer = await until('writer available', async () =>
      (await instance('emu-c1-w')).DBInstanceStatus === 'available' ? instance('emu-c1-w') : undefined,
    );
    const reader = await until('reader available', async () =>
      (await instance('emu-c1-r1')).DBInstanceStatus === 'available' ? instance('emu-c1-r1') : undefined,
    );

    // Assert: the API as RDS answers it.
    expect(created.DBInstance?.DBInstanceStatus).toBe('creating');
    expect(created.DBInstance?.Endpoint).toBeUndefined();
    expect(writer.Endpoint?.Address).toBe('127.0.0.1');
    expect(reader.Endpoint?.Address).toBe('127.0.0.1');
    expect(reader.Endpoint?.Port).not.toBe(writer.Endpoint?.Port);
    const described = (await rds.send(new DescribeDBClustersCommand({ DBClusterIdentifier: 'emu-c1' })))
      .DBClusters![0]!;
    expect(described.Endpoint).toBe('127.0.0.1');
    expect(described.Port).toBe(writer.Endpoint?.Port);
    const secretArn = cluster.DBCluster!.MasterUserSecret!.SecretArn!;
    const secret = JSON.parse(
      (await secrets.send(new GetSecretValueCommand({ SecretId: secretArn }))).SecretString!,
    ) as { username: string; password: string };
    expect(secret.username).toBe('benchadmin');
    expect(secret.password).not.toBe('P@55w0rd!'); // moto's fixed value, replaced as RDS would generate one
    expect(secret.password).toMatch(/^[!#-.0-?A-~]{28}$/);

    // Assert: the servers, reached at those endpoints with the secret's credentials.
    const onWriter = tcpLogin('w', writer.Endpoint!.Port!, secret.username, secret.password);
    const onReader = tcpLogin('r', reader.Endpoint!.Port!, secret.username, secret.password);
    const databases = (await query(onWriter, 'SHOW DATABASES')).map((r) => r[0]);
    expect(databases).toContain('benchdata');
    expect(databases).not.toContain('sbtest');
    expect(await query(onWriter, "SELECT COUNT(*) FROM mysql.user WHERE User = 'sbtest'")).toEqual([['0']]);
    const grants = (await query(onWriter, 'SHOW GRANTS')).map((r) => r[0]).join('\n');
    for (const p of MASTER_USER_PRIVILEGES) expect(grants).toContain(p === 'REPLICATION CLIENT' ? 'BINLOG MONITOR' : p);
    expect(
      await query(onWriter, 'SELECT @@GLOBAL.max_prepared_stmt_count, @@GLOBAL.innodb_print_all_deadlocks'),
    ).toEqual([['23456', '1']]);
    expect(
      await query(
        onReader,
        'SELECT @@GLOBAL.max_prepared_stmt_count, @@GLOBAL.innodb_print_all_deadlocks, @@GLOBAL.read_only',
      ),
    ).toEqual([['23456', '1', '1']]);
    await query(onWriter, 'CREATE TABLE benchdata.t (id INT PRIMARY KEY); INSERT INTO benchdata.t VALUES (7)');
    expect(
      await until('row replicated', async () =>
        (await query(onReader, 'SELECT id FROM benchdata.t').catch(() => [])).length > 0
          ? query(onReader, 'SELECT id FROM benchdata.t')
          : undefined,
      ),
    ).toEqual([['7']]);
    expect(membersSeen.at(-1)).toMatchObject({
      clusterId: 'emu-c1',
      writer: { instanceId: 'emu-c1-w' },
      readers: [{ instanceId: 'emu-c1-r1' }],
    });
  });

  it('refuses a parameter group change RDS would refuse, naming the parameter; the group stays as it was', async () => {
    // Act
    const refused = rds.send(
      new ModifyDBClusterParameterGroupCommand({
        DBClusterParameterGroupName: 'emu-cpg',
        Parameters: [{ ParameterName: 'sync_binlog', ParameterValue: '1', ApplyMethod: 'pending-reboot' }],
      }),
    );
    const unknown = rds.send(
      new ModifyDBParameterGroupCommand({
        DBParameterGroupName: 'emu-ipg',
        Parameters: [{ ParameterName: 'no_such_parameter', ParameterValue: '1', ApplyMethod: 'pending-reboot' }],
      }),
    );

    // Assert
    await expect(refused).rejects.toMatchObject({
      name: 'InvalidParameterValue',
      message:
        'The parameter sync_binlog cannot be modified in an aurora-mysql8.0 cluster parameter group: not ' +
        'modifiable on Aurora MySQL 3 at the instance level',
    });
    await expect(unknown).rejects.toMatchObject({
      name: 'InvalidParameterValue',
      message: 'Could not find parameter with name: no_such_parameter',
    });
    const params = await rds.send(
      new DescribeDBClusterParametersCommand({ DBClusterParameterGroupName: 'emu-cpg', Source: 'user' }),
    );
    expect((params.Parameters ?? []).map((p) => p.ParameterName)).toEqual(['innodb_print_all_deadlocks']);
  });

  it('RebootDBInstance applies a pending-reboot parameter: the server restarts on its data and port', async () => {
    // Arrange: back_log is read only when the server starts (MariaDB: a read-only system variable;
    // Aurora MySQL 3: modifiable in a DB parameter group, core/aurora/aurora-mysql-parameters.json).
    const described = (await rds.send(new DescribeDBClustersCommand({ DBClusterIdentifier: 'emu-c1' })))
      .DBClusters![0]!;
    const secret = JSON.parse(
      (await secrets.send(new GetSecretValueCommand({ SecretId: described.MasterUserSecret!.SecretArn! })))
        .SecretString!,
    ) as {
      username: string;
      password: string;
    };
    const login = async (id: string) =>
      tcpLogin(`${id}-reboot`, (await instance(id)).Endpoint!.Port!, secret.username, secret.password);
    const backLog = async (id: string) =>
      (await query(await login(id), "SHOW GLOBAL VARIABLES LIKE 'back_log'"))[0]?.[1];
    const before = {
      port: (await instance('emu-c1-w')).Endpoint!.Port!,
      pid: emulation.runningServers().find((s) => s.instanceId === 'emu-c1-w')!.pid,
    };
    await rds.send(
      new ModifyDBParameterGroupCommand({
        DBParameterGroupName: 'emu-ipg',
        Parameters: [{ ParameterName: 'back_log', ParameterValue: '123', ApplyMethod: 'pending-reboot' }],
      }),
    );
    const pending = (await instance('emu-c1-w')).DBParameterGroups?.map((g) => g.ParameterApplyStatus);
    const runningBefore = await backLog('emu-c1-w');

    // Act
    const rebootOf = async (id: string) => {
      const answered = (await rds.send(new RebootDBInstanceCommand({ DBInstanceIdentifier: id }))).DBInstance
        ?.DBInstanceStatus;
      const seen = [answered];
      await until(`${id} available after its reboot`, async () => {
        const status = (await instance(id)).DBInstanceStatus;
        if (seen.at(-1) !== status) seen.push(status);
        return status === 'available' ? true : undefined;
      });
      return seen;
    };
    const writerStatuses = await rebootOf('emu-c1-w');
    const readerStatuses = await rebootOf('emu-c1-r1');

    // Assert
    expect(pending).toEqual(['pending-reboot']);
    expect(runningBefore).not.toBe('123');
    expect(writerStatuses).toEqual(['rebooting', 'available']);
    expect(readerStatuses).toEqual(['rebooting', 'available']);
    expect(await backLog('emu-c1-w')).toBe('123');
    expect(await backLog('emu-c1-r1')).toBe('123');
    const after = await instance('emu-c1-w');
    expect(after.Endpoint?.Port).toBe(before.port);
    expect(after.DBParameterGroups?.map((g) => g.ParameterApplyStatus)).not.toContain('pending-reboot');
    expect(isAlive(before.pid)).toBe(false);
    // The data outlived the restart, and the reader replicates again.
    const onWriter = await login('emu-c1-w');
    const onReader = await login('emu-c1-r1');
    expect(await query(onWriter, 'SELECT id FROM benchdata.t')).toEqual([['7']]);
    await query(onWriter, 'INSERT INTO benchdata.t VALUES (8)');
    expect(
      await until('row replicated after the reboots', async () => {
        const rows = await query(onReader, 'SELECT id FROM benchdata.t ORDER BY id').catch(() => []);
        return rows.length === 2 ? rows : undefined;
      }),
    ).toEqual([['7'], ['8']]);
    expect(membersSeen.at(-1)).toMatchObject({
      clusterId: 'emu-c1',
      writer: { instanceId: 'emu-c1-w' },
      readers: [{ instanceId: 'emu-c1-r1' }],
    });
  });

  it("stops an instance's server when it is deleted, and deleting the cluster deletes its secret", async () => {
    // Arrange
    const servers = emulation.runningServers();
    expect(servers.map((s) => s.instanceId).sort()).toEqual(['emu-c1-r1', 'emu-c1-w']);

    // Act
    await rds.send(new DeleteDBInstanceCommand({ DBInstanceIdentifier: 'emu-c1-r1', SkipFinalSnapshot: true }));
    await rds.send(new DeleteDBInstanceCommand({ DBInstanceIdentifier: 'emu-c1-w', SkipFinalSnapshot: true }));
    await rds.send(new DeleteDBClusterCommand({ DBClusterIdentifier: 'emu-c1', SkipFinalSnapshot: true }));

    // Assert
    expect(emulation.runningServers()).toEqual([]);
    for (const s of servers) expect(isAlive(s.pid)).toBe(false);
    expect(tracker.live()).toEqual([]);
    expect((await secrets.send(new ListSecretsCommand({}))).SecretList ?? []).toEqual([]);
    expect(membersSeen.at(-1)).toMatchObject({ clusterId: 'emu-c1', writer: undefined, readers: [] });
  });
});

describe('SSM agent emulation: commands sent to a client instance run with bash on this machine', () => {
  let ec2: EC2Client;
  let ssm: SSMClient;
  let s3: S3Client;
  let agent: SsmAgentEmulation;
  let tracker: ProcessTracker;
  let instanceId: string;
  const bucket = 'emu-bucket';

  beforeAll(async () => {
    ec2 = new EC2Client(common);
    ssm = new SSMClient(common);
    s3 = new S3Client({ ...common, forcePathStyle: true });
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    tracker = new ProcessTracker();
    agent = new SsmAgentEmulation({
      dir: join(work, 'clients'),
      region: REGION,
      motoEndpoint: moto.endpoint,
      credentials: MOTO_CREDENTIALS,
      s3,
      tracker,
      bootCommands: () => ['set -eu', 'echo "booted as $AURORA_BENCH_HOME" > "$AURORA_BENCH_HOME/ready"'],
    });
    agent.install({ ssm, ec2 });
    const run = await ec2.send(
      new RunInstancesCommand({ ImageId: 'ami-12c6146b', MinCount: 1, MaxCount: 1, InstanceType: 'c6g.large' }),
    );
    instanceId = run.Instances![0]!.InstanceId!;
  });
  afterAll(async () => {
    await agent.shutdown();
    tracker.dispose();
    for (const c of [ec2, ssm, s3]) c.destroy();
  });

  const send = async (commands: string[], extra: { executionTimeout?: string } = {}) =>
    (
      await ssm.send(
        new SendCommandCommand({
          DocumentName: 'AWS-RunShellScript',
          InstanceIds: [instanceId],
          Parameters: { commands, ...(extra.executionTimeout ? { executionTimeout: [extra.executionTimeout] } : {}) },
          OutputS3BucketName: bucket,
          OutputS3KeyPrefix: 'ssm-output/run-1/job-1',
        }),
      )
    ).Command!.CommandId!;
  const invocation = (commandId: string) =>
    ssm.send(new GetCommandInvocationCommand({ CommandId: commandId, InstanceId: instanceId }));
  const finished = (commandId: string) =>
    until<GetCommandInvocationCommandOutput>('invocation finished', async () => {
      const inv = await invocation(commandId);
      return inv.Status === 'InProgress' ? undefined : inv;
    });

  it('registers the instance, boots it in its own AURORA_BENCH_HOME, runs a command with AWS CLI on moto', async () => {
    // Arrange
    const info = await ssm.send(
      new DescribeInstanceInformationCommand({ Filters: [{ Key: 'InstanceIds', Values: [instanceId] }] }),
    );

    // Act: the script reads the boot's marker, calls S3 through the CLI, writes both streams, fails with 3.
    const commandId = await send([
      'set -u',
      'cat "$AURORA_BENCH_HOME/ready"',
      'echo hello > "$TMPDIR/x" && aws s3 cp --only-show-errors "$TMPDIR/x" s3://emu-bucket/from-the-client.txt',
      'echo "to stderr" >&2',
      'exit 3',
    ]);
    const running = await invocation(commandId);
    const done = await finished(commandId);

    // Assert
    expect(info.InstanceInformationList).toEqual([
      expect.objectContaining({ InstanceId: instanceId, PingStatus: 'Online' }),
    ]);
    expect(running.Status === 'InProgress' ? running.ResponseCode : -1).toBe(-1);
    expect(done).toMatchObject({ Status: 'Failed', ResponseCode: 3, StandardErrorContent: 'to stderr\n' });
    expect(done.StandardOutputContent).toMatch(/^booted as \/.+\/clients\/1\n$/);
    const object = async (key: string) =>
      (await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }))).Body!.transformToString();
    expect(await object('from-the-client.txt')).toBe('hello\n');
    const base = `ssm-output/run-1/job-1/${commandId}/${instanceId}/awsrunShellScript/0.awsrunShellScript/`;
    expect(await object(base + 'stdout')).toBe(done.StandardOutputContent);
    expect(await object(base + 'stderr')).toBe('to stderr\n');
  });

  it('kills the whole process group on CancelCommand and at executionTimeout, as the agent does', async () => {
    // Arrange: each command leaves a child that outlives the shell unless its group is killed.
    const cancelled = await send(['sleep 300 & echo $! > "$TMPDIR/cancel.pid"', 'wait']);
    const timedOut = await send(['sleep 300 & echo $! > "$TMPDIR/timeout.pid"', 'wait'], { executionTimeout: '5' });
    await until('cancel.pid written', () =>
      Promise.resolve(existsSync(join(work, 'clients', '1', 'tmp', 'cancel.pid')) ? true : undefined),
    );

    // Act
    await ssm.send(new CancelCommandCommand({ CommandId: cancelled, InstanceIds: [instanceId] }));
    const c = await finished(cancelled);
    const t = await finished(timedOut);

    // Assert
    expect(c).toMatchObject({ Status: 'Cancelled', ResponseCode: 137 });
    expect(t).toMatchObject({ Status: 'TimedOut', StatusDetails: 'ExecutionTimedOut', ResponseCode: 137 });
    const { stdout } = await execFileAsync('bash', ['-c', `cat ${join(work, 'clients', '1', 'tmp')}/*.pid`]);
    for (const pid of stdout.trim().split('\n').map(Number)) expect(isAlive(pid)).toBe(false);
  });

  it('removes the instance home and stops answering for it once it is terminated', async () => {
    // Act
    await ec2.send(new TerminateInstancesCommand({ InstanceIds: [instanceId] }));
    const info = await ssm.send(
      new DescribeInstanceInformationCommand({ Filters: [{ Key: 'InstanceIds', Values: [instanceId] }] }),
    );

    // Assert
    expect(existsSync(join(work, 'clients', '1'))).toBe(false);
    expect(info.InstanceInformationList).toEqual([]);
    await expect(send(['true'])).rejects.toMatchObject({ name: 'InvalidInstanceId' });
    expect(agent.leftovers()).toEqual([]);
    expect(tracker.live()).toEqual([]);
  });
});

describe('SSM agent emulation: a server instance (role=server) runs the real server-install/setup.sh', () => {
  it('boots it with the install, gives its commands their own port, stops its mariadbd on termination', async () => {
    // Arrange: a server instance as the backend launches one (instance tag <prefix>role=server),
    // its boot the install from the client bundle, its admin secret in moto's Secrets Manager.
    const ec2 = new EC2Client(common);
    const ssm = new SSMClient(common);
    const s3 = new S3Client({ ...common, forcePathStyle: true });
    const secrets = new SecretsManagerClient(common);
    const tracker = new ProcessTracker();
    const clientDir = join(__dirname, '..', '..', 'client');
    const agent = new SsmAgentEmulation({
      dir: join(work, 'servers'),
      region: REGION,
      motoEndpoint: moto.endpoint,
      credentials: MOTO_CREDENTIALS,
      s3,
      tracker,
      extraPath: awsCliPath(),
      bootCommands: (ctx) =>
        ctx.role === 'server'
          ? [
              'set -eu',
              `cp -r ${clientDir} "$AURORA_BENCH_HOME/client"`,
              '"$AURORA_BENCH_HOME/client/server-install.sh"',
            ]
          : ['false'],
    });
    agent.install({ ssm, ec2 });
    try {
      const run = await ec2.send(
        new RunInstancesCommand({
          ImageId: 'ami-12c6146b',
          MinCount: 1,
          MaxCount: 1,
          InstanceType: 'r6g.large',
          TagSpecifications: [{ ResourceType: 'instance', Tags: [{ Key: 'aurora-bench:role', Value: 'server' }] }],
        }),
      );
      const id = run.Instances![0]!.InstanceId!;
      const secret = await secrets.send(
        new CreateSecretCommand({
          Name: 'ab-sm-emu',
          SecretString: JSON.stringify({ username: 'bench', password: 'Emu#pw1' }),
        }),
      );
      const options = renderServerOptions(
        {
          name: 'sm',
          clusterParameters: {},
          instanceParameters: { thread_handling: 'pool-of-threads', innodb_buffer_pool_size: '32M' },
        },
        { memoryBytes: 2 * 1024 ** 3, vcpu: 2, maxConnections: 100 },
      );

      // Act: the backend's own command, sent as soon as the instance exists (it waits for the boot's
      // install marker: the agent is Online before the user data has copied client/).
      const commandId = (
        await ssm.send(
          new SendCommandCommand({
            DocumentName: 'AWS-RunShellScript',
            InstanceIds: [id],
            Parameters: {
              commands: serverSetupCommands({
                region: REGION,
                role: 'writer',
                serverId: 1,
                optionsB64: serverOptionsBase64(options.lines),
                secretArn: secret.ARN!,
              }),
            },
          }),
        )
      ).Command!.CommandId!;
      const done = await until<GetCommandInvocationCommandOutput>('server setup finished', async () => {
        const inv = await ssm.send(new GetCommandInvocationCommand({ CommandId: commandId, InstanceId: id }));
        return inv.Status === 'InProgress' ? undefined : inv;
      });
      // On failure the diff shows the script's stderr.
      expect({ status: done.Status, stderr: done.StandardErrorContent }).toMatchObject({ status: 'Success' });
      const ready = JSON.parse(done.StandardOutputContent!.trim().split('\n').pop()!) as {
        port: number;
        host: string;
        role: string;
      };
      const [row] = await query(tcpLogin('sm-emu', ready.port, 'bench', 'Emu#pw1'), 'SELECT @@thread_handling, @@port');
      const home = join(work, 'servers', '1');
      const { stdout: pid } = await execFileAsync('cat', [join(home, 'server', 'mariadbd.pid')]);
      await ec2.send(new TerminateInstancesCommand({ InstanceIds: [id] }));

      // Assert
      expect(done).toMatchObject({ Status: 'Success', ResponseCode: 0, StandardErrorContent: '' });
      expect(ready).toMatchObject({ ready: true, role: 'writer', host: '127.0.0.1' });
      expect(ready.port).not.toBe(3306);
      expect(row).toEqual(['pool-of-threads', String(ready.port)]);
      expect(isAlive(Number(pid.trim()))).toBe(false);
      expect(existsSync(home)).toBe(false);
      expect(agent.leftovers()).toEqual([]);
      expect(tracker.live()).toEqual([]);
    } finally {
      await agent.shutdown();
      tracker.dispose();
      for (const c of [ec2, ssm, s3, secrets]) c.destroy();
    }
  });
});

describe("the clients' AWS CLI", () => {
  it('is checked to reach moto through AWS_ENDPOINT_URL, and refused with the reason when it does not', async () => {
    // Arrange: the clients' environment (real AWS CLI), once with moto, once with a port nobody listens on.
    const s3 = new S3Client({ ...common, forcePathStyle: true });
    await s3.send(new CreateBucketCommand({ Bucket: 'cli-check-bucket' }));
    s3.destroy();
    const env = (endpoint: string) => ({
      PATH: [...awsCliPath(), process.env['PATH']].join(':'),
      HOME: work,
      AWS_ENDPOINT_URL: endpoint,
      AWS_ACCESS_KEY_ID: MOTO_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: MOTO_CREDENTIALS.secretAccessKey,
      AWS_DEFAULT_REGION: REGION,
      AWS_MAX_ATTEMPTS: '1',
      AWS_EC2_METADATA_DISABLED: 'true',
    });

    // Act / Assert
    await expect(checkAwsCliReachesMoto(env(moto.endpoint), 'cli-check-bucket')).resolves.toBeUndefined();
    await expect(checkAwsCliReachesMoto(env('http://127.0.0.1:9'), 'cli-check-bucket')).rejects.toMatchObject({
      name: 'MissingDependencyError',
      message: expect.stringContaining(
        "did not reach the rehearsal's moto through AWS_ENDPOINT_URL=http://127.0.0.1:9",
      ),
    });
  });
});

describe("CloudWatch publisher: the servers' datapoints become visible only after the lag", () => {
  it('publishes samples lagS late, volume I/O per closed interval; as EC2, AWS/EC2 and agent memory', async () => {
    // Arrange: a real single-instance cluster through the emulation, and a publisher with a 3 s lag.
    const versions = await checkLocalDependencies();
    const template = await ensureTemplate(versions.tools, versions.serverVersion, undefined, 'rds');
    const secrets = new SecretsManagerClient(common);
    const rds = new RDSClient(common);
    const cloudwatch = new CloudWatchClient(common);
    const tracker = new ProcessTracker();
    const lagS = 3;
    // The cluster volume's I/O: one datapoint per 2-s interval, lagS after the interval closed.
    const volumePeriodS = 2;
    const publisher = new CloudWatchPublisher({ cloudwatch, lagS, volumePeriodS });
    let writer: ServerInfo | undefined;
    const emulation = new RdsEmulation({
      tools: versions.tools,
      template,
      serverVersion: versions.serverVersion,
      dir: join(work, 'cw-db'),
      secrets,
      tracker,
      onMembersChanged: (m) => {
        writer = m.writer;
        return publisher.membersChanged(m);
      },
    });
    emulation.install(rds);
    const seen = new Map<number, number>();
    const volumeSeen = new Map<number, number>();
    const ec2Query = (id: string, namespace: string, metric: string) => ({
      Id: id,
      MetricStat: {
        Metric: { Namespace: namespace, MetricName: metric, Dimensions: [{ Name: 'InstanceId', Value: 'i-0cwemu' }] },
        Period: 1,
        Stat: 'Average',
      },
    });
    let memory: number[] = [];
    let ec2Cpu: number[] = [];
    try {
      await rds.send(
        new CreateDBClusterCommand({
          DBClusterIdentifier: 'cw-c1',
          Engine: 'aurora-mysql',
          MasterUsername: 'benchadmin',
          ManageMasterUserPassword: true,
        }),
      );
      await rds.send(
        new CreateDBInstanceCommand({
          DBInstanceIdentifier: 'cw-c1-w',
          DBClusterIdentifier: 'cw-c1',
          Engine: 'aurora-mysql',
          DBInstanceClass: 'db.r6g.large',
        }),
      );
      await until('writer available', async () =>
        (await rds.send(new DescribeDBInstancesCommand({ DBInstanceIdentifier: 'cw-c1-w' }))).DBInstances![0]!
          .DBInstanceStatus === 'available'
          ? true
          : undefined,
      );

      // Act: watch the raw datapoints (1 s period) as they appear, noting when each became visible;
      // the same mariadbd is also followed as a self-managed server's EC2 instance would be.
      await publisher.ec2ServerChanged('i-0cwemu', { ...writer!, instanceId: 'i-0cwemu' });
      publisher.start();
      const start = new Date(Date.now() - 60_000);
      await until(
        'five datapoints',
        async () => {
          const out = await cloudwatch.send(
            new GetMetricDataCommand({
              StartTime: start,
              EndTime: new Date(Date.now() + 60_000),
              MetricDataQueries: [
                {
                  Id: 'cpu',
                  MetricStat: {
                    Metric: {
                      Namespace: 'AWS/RDS',
                      MetricName: 'CommitThroughput',
                      Dimensions: [{ Name: 'DBInstanceIdentifier', Value: 'cw-c1-w' }],
                    },
                    Period: 1,
                    Stat: 'Average',
                  },
                },
                ec2Query('mem', 'CWAgent', 'mem_available'),
                ec2Query('ec2cpu', 'AWS/EC2', 'CPUUtilization'),
                {
                  Id: 'volume',
                  MetricStat: {
                    Metric: {
                      Namespace: 'AWS/RDS',
                      MetricName: 'VolumeWriteIOPs',
                      Dimensions: [{ Name: 'DBClusterIdentifier', Value: 'cw-c1' }],
                    },
                    Period: 1,
                    Stat: 'Sum',
                  },
                },
              ],
            }),
          );
          const now = Date.now();
          const of = (id: string) => out.MetricDataResults?.find((r) => r.Id === id);
          for (const ts of of('cpu')?.Timestamps ?? []) if (!seen.has(ts.getTime())) seen.set(ts.getTime(), now);
          for (const ts of of('volume')?.Timestamps ?? [])
            if (!volumeSeen.has(ts.getTime())) volumeSeen.set(ts.getTime(), now);
          memory = of('mem')?.Values ?? [];
          ec2Cpu = of('ec2cpu')?.Values ?? [];
          return seen.size >= 5 && volumeSeen.size >= 2 && memory.length > 0 && ec2Cpu.length > 0 ? true : undefined;
        },
        60_000,
      );
    } finally {
      await publisher.stop();
      await emulation.shutdown();
      tracker.dispose();
      for (const c of [secrets, rds, cloudwatch]) c.destroy();
    }

    // Assert: no datapoint was visible before its sample was lagS old (whole seconds: CloudWatch truncates).
    for (const [ts, visibleAt] of seen) expect(visibleAt - ts).toBeGreaterThanOrEqual(lagS * 1000 - 1000);
    // A volume datapoint is stamped with its interval's start and shows only once the interval has
    // closed and lagS more have passed, as Aurora's 5-minute ones come after their interval.
    for (const [ts, visibleAt] of volumeSeen) {
      expect(ts % (volumePeriodS * 1000)).toBe(0);
      expect(visibleAt - ts).toBeGreaterThanOrEqual((volumePeriodS + lagS) * 1000);
    }
    expect(publisher.errors).toEqual([]);
    // The emulated instance shares this machine's memory: its mem_available is this machine's
    // MemAvailable, in bytes (more than 1 MiB, no more than MemTotal).
    const memTotalBytes = Number(/^MemTotal:\s+(\d+) kB$/m.exec(readFileSync('/proc/meminfo', 'utf8'))![1]) * 1024;
    for (const v of memory) {
      expect(v).toBeGreaterThan(1024 * 1024);
      expect(v).toBeLessThanOrEqual(memTotalBytes);
    }
    for (const v of ec2Cpu) expect(v).toBeGreaterThanOrEqual(0);
  });
});
