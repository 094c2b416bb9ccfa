/**
 * client/runner.js the way an EC2 client runs it: password from a Secrets Manager secret (the
 * RDS-managed JSON), custom workload downloaded from S3, output uploaded to S3 (result.json last).
 * AWS is moto (test/aws/moto.ts); the database is a throwaway mariadbd; the AWS CLI is the real one.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateBucketCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { CreateSecretCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { parseSysbenchOutput } from '../../core/sysbench/parser';
import type { RunnerResult } from '../../core/sysbench/types';
import { startMoto, type MotoServer } from '../aws/moto';
import { RUNNER_JS, RUNNER_NODE } from '../helpers/runner-bundle';
import { sqlString, startMariadb, type ThrowawayMariadb } from '../helpers/sysbench-mariadb';

const ROOT = join(__dirname, '..', '..');
const PASSWORD = 'Rds#Managed=pw!1';
const BUCKET = 'runner-test-lake';

describe('client/runner.js with Secrets Manager and S3 (moto)', () => {
  let moto: MotoServer;
  let db: ThrowawayMariadb;
  let work: string;
  let s3: S3Client;
  let secretArn: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'runner-s3-test-'));
    moto = startMoto();
    const clientConfig = {
      endpoint: moto.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    };
    s3 = new S3Client(clientConfig);
    await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
    await s3.send(
      new PutObjectCommand({
        Bucket: BUCKET,
        Key: 'scripts/run-1/fullscan_1kb.lua',
        Body: readFileSync(join(ROOT, 'client', 'workloads', 'fullscan_1kb.lua')),
      }),
    );
    const secrets = new SecretsManagerClient(clientConfig);
    const secret = await secrets.send(
      new CreateSecretCommand({
        Name: 'rds!cluster-test',
        SecretString: JSON.stringify({ username: 'sbtest', password: PASSWORD }),
      }),
    );
    secrets.destroy();
    secretArn = secret.ARN!;
    const { AWS_REGION: _r, AWS_DEFAULT_REGION: _d, AWS_PROFILE: _p, ...base } = process.env as Record<string, string>;
    // No region anywhere: the runner must take it from the secret's ARN, as on a bare EC2 client.
    env = {
      ...base,
      AWS_ENDPOINT_URL: moto.endpoint,
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
      AWS_CONFIG_FILE: join(work, 'no-aws-config'),
      AWS_SHARED_CREDENTIALS_FILE: join(work, 'no-aws-credentials'),
    };
    db = await startMariadb({ password: PASSWORD });
  });
  afterAll(async () => {
    s3.destroy();
    await db.stop();
    moto.stop();
    rmSync(work, { recursive: true, force: true });
  });

  const runner = (args: string[]) =>
    new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(RUNNER_NODE, [RUNNER_JS, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.once('close', (code) => resolve({ code, stderr }));
    });
  const keys = async (prefix: string) =>
    ((await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix }))).Contents ?? [])
      .map((o) => o.Key!)
      .sort();
  const object = async (key: string) =>
    (await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }))).Body!.transformToString();

  it("prepares and runs fullscan_1kb.lua fetched from S3 with the secret's password; uploads its files", async () => {
    const common = [
      '--workload',
      'fullscan_1kb.lua',
      '--host',
      '127.0.0.1',
      '--port',
      String(db.port),
      '--user',
      'sbtest',
      '--password-secret',
      secretArn,
      '--script-uri',
      `s3://${BUCKET}/scripts/run-1`,
    ];

    const prep = await runner([
      '--phase',
      'prepare',
      '--out',
      `s3://${BUCKET}/raw/c1/s1/prepare/client-1/`,
      ...common,
      '--',
      '--tables=1',
      '--table-size=200',
      '--threads=2',
    ]);
    const run = await runner([
      '--phase',
      'run',
      '--out',
      `s3://${BUCKET}/raw/c1/s1/run/client-1/`,
      ...common,
      '--',
      '--tables=1',
      '--table-size=200',
      '--threads=1',
      '--time=2',
      '--report-interval=1',
    ]);

    expect([prep.code, prep.stderr, run.code, run.stderr]).toEqual([0, '', 0, '']);
    const files = [
      'raw/c1/s1/run/client-1/client_cpu.jsonl',
      'raw/c1/s1/run/client-1/output.log',
      'raw/c1/s1/run/client-1/result.json',
    ];
    expect(await keys('raw/c1/s1/run/')).toEqual(files);
    const result = JSON.parse(await object('raw/c1/s1/run/client-1/result.json')) as RunnerResult;
    expect(result.exitCode).toBe(0);
    expect(result.phase).toBe('run');
    for (const key of files) expect(await object(key)).not.toContain(PASSWORD);
    const parsed = parseSysbenchOutput(await object('raw/c1/s1/run/client-1/output.log'), {
      exitCode: result.exitCode,
    });
    expect(parsed.status).toBe('ok');
    expect(parsed.summary!.reads).toBe(parsed.summary!.transactions);
    expect(JSON.parse(await object('raw/c1/s1/prepare/client-1/result.json')).exitCode).toBe(0);
    expect(db.sql('SELECT COUNT(*) FROM sbtest.fullscan1').trim()).toBe('200');
  });

  it('takes the password from the secret exactly, trailing space and both quote characters included', async () => {
    // Arrange: a secret whose password only MYSQL_PWD can carry to sysbench (both quote characters),
    // ending in a space that a $(...) capture or a shell read would keep or lose by accident.
    const odd = `it's "odd" \\ #,= `;
    db.sql(
      ['%', 'localhost', '127.0.0.1']
        .map((h) => `CREATE USER 'odd'@'${h}' IDENTIFIED BY ${sqlString(odd)}; GRANT ALL ON *.* TO 'odd'@'${h}';`)
        .join(' '),
    );
    const clientConfig = {
      endpoint: moto.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    };
    const secrets = new SecretsManagerClient(clientConfig);
    const oddArn = (
      await secrets.send(
        new CreateSecretCommand({
          Name: 'rds!cluster-odd',
          SecretString: JSON.stringify({ username: 'odd', password: odd }),
        }),
      )
    ).ARN!;
    secrets.destroy();

    // Act
    const r = await runner([
      '--phase',
      'prepare',
      '--workload',
      'oltp_read_only',
      '--out',
      `s3://${BUCKET}/raw/c1/s3/prepare/client-1/`,
      '--host',
      '127.0.0.1',
      '--port',
      String(db.port),
      '--user',
      'odd',
      '--password-secret',
      oddArn,
      '--',
      '--tables=1',
      '--table-size=30',
    ]);

    // Assert
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(JSON.parse(await object('raw/c1/s3/prepare/client-1/result.json')).exitCode).toBe(0);
    for (const f of ['output.log', 'result.json'])
      expect(await object(`raw/c1/s3/prepare/client-1/${f}`)).not.toContain(odd.trim());
    expect(db.sql('SELECT COUNT(*) FROM sbtest.sbtest1').trim()).toBe('30');
  });

  it('--prepare-out and --await-prepare through S3: the prepare uploaded before the runs start on it', async () => {
    const common = [
      '--workload',
      'oltp_read_only',
      '--host',
      '127.0.0.1',
      '--port',
      String(db.port),
      '--user',
      'sbtest',
      '--password-secret',
      secretArn,
    ];
    const prepareOut = `s3://${BUCKET}/raw/c1/s4/prepare/client-1/`;
    const runOpts = ['--', '--tables=1', '--table-size=50', '--threads=1', '--time=1'];

    const [first, second] = await Promise.all([
      runner([
        '--phase',
        'run',
        '--out',
        `s3://${BUCKET}/raw/c1/s4/run/client-1/`,
        ...common,
        '--prepare-out',
        prepareOut,
        '--prepare-option=--tables=1',
        '--prepare-option=--table-size=50',
        ...runOpts,
      ]),
      runner([
        '--phase',
        'run',
        '--out',
        `s3://${BUCKET}/raw/c1/s4/run/client-2/`,
        ...common,
        '--await-prepare',
        prepareOut,
        ...runOpts,
      ]),
    ]);

    expect([first.code, first.stderr, second.code, second.stderr]).toEqual([0, '', 0, '']);
    const prepared = JSON.parse(await object('raw/c1/s4/prepare/client-1/result.json')) as RunnerResult;
    expect([prepared.phase, prepared.exitCode]).toEqual(['prepare', 0]);
    expect(await keys('raw/c1/s4/prepare/')).toEqual(
      ['client_cpu.jsonl', 'output.log', 'result.json', 'server_variables.jsonl'].map(
        (f) => `raw/c1/s4/prepare/client-1/${f}`,
      ),
    );
    for (const client of ['client-1', 'client-2']) {
      const result = JSON.parse(await object(`raw/c1/s4/run/${client}/result.json`)) as RunnerResult;
      expect([result.phase, result.exitCode]).toEqual(['run', 0]);
      expect(Date.parse(result.startedAt)).toBeGreaterThanOrEqual(Date.parse(prepared.endedAt));
      expect(
        parseSysbenchOutput(await object(`raw/c1/s4/run/${client}/output.log`), { exitCode: result.exitCode }).status,
      ).toBe('ok');
    }
    expect(db.sql('SELECT COUNT(*) FROM sbtest.sbtest1').trim()).toBe('50');
  });

  it('an unreadable secret: exit 3, reason in output.log, no result.json; its owed prepare ends so too', async () => {
    const missing = secretArn.replace('rds!cluster-test', 'rds!cluster-gone');

    const r = await runner([
      '--phase',
      'run',
      '--workload',
      'oltp_read_only',
      '--out',
      `s3://${BUCKET}/raw/c1/s2/run/client-1/`,
      '--prepare-out',
      `s3://${BUCKET}/raw/c1/s2/prepare/client-1/`,
      '--host',
      '127.0.0.1',
      '--port',
      String(db.port),
      '--user',
      'sbtest',
      '--password-secret',
      missing,
      '--',
      '--time=1',
    ]);

    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`could not read secret ${missing}`);
    expect(await keys('raw/c1/s2/')).toEqual([
      'raw/c1/s2/prepare/client-1/client_cpu.jsonl',
      'raw/c1/s2/prepare/client-1/output.log',
      'raw/c1/s2/prepare/client-1/result.json',
      'raw/c1/s2/run/client-1/client_cpu.jsonl',
      'raw/c1/s2/run/client-1/output.log',
    ]);
    const parsed = parseSysbenchOutput(await object('raw/c1/s2/run/client-1/output.log'));
    expect(parsed.status).toBe('failed');
    expect(parsed.error).toContain(`could not read secret ${missing}: `);
    expect(parsed.error).toContain('ResourceNotFoundException');
    // A client awaiting this prepare stops waiting; the workflow reports the prepare as failed, with the reason.
    const prepared = JSON.parse(await object('raw/c1/s2/prepare/client-1/result.json')) as RunnerResult;
    expect([prepared.phase, prepared.exitCode]).toEqual(['prepare', 3]);
    const prepareParsed = parseSysbenchOutput(await object('raw/c1/s2/prepare/client-1/output.log'), {
      exitCode: prepared.exitCode,
    });
    expect(prepareParsed.error).toContain(`could not read secret ${missing}: `);
  });
});
