/**
 * A client's readiness and its first job, as shell the stack and the backend generate, run with
 * bash on this machine: client/client-ready.sh (real sysbench through the report hook), the SSM
 * job commands of core/backends/aws/runner-command.ts (the runner fetched from S3, the password
 * from Secrets Manager, sysbench against a throwaway MariaDB, output uploaded to S3) and the user
 * data's failure report. Each "client" has its own AURORA_BENCH_HOME under a temp dir; S3 and
 * Secrets Manager are moto (test/aws/moto.ts); the AWS CLI is the real one.
 */
import { spawn } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { CreateSecretCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import {
  clientReadyKey,
  runnerBundleDigest,
  ssmRunnerCommands,
  type ClientReadyMarker,
} from '../../core/backends/aws/runner-command';
import type { RunnerJob } from '../../core/backend';
import { runnerArgs } from '../../core/sysbench/command';
import type { RunnerResult } from '../../core/sysbench/types';
import { clientInstallCommands } from '../../lib/client-user-data';
import { startMoto, type MotoServer } from '../aws/moto';
import { awsCliDir } from '../helpers/aws-cli';
import { startMariadb, type ThrowawayMariadb } from '../helpers/sysbench-mariadb';

const ROOT = join(__dirname, '..', '..');
const CLIENT_DIR = join(ROOT, 'client');
const BUCKET = 'ready-test-bucket';
const REGION = 'us-east-1';
const PASSWORD = 'Ready#Check=pw1';

interface Exit {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function bash(args: string[], env: Record<string, string>): Promise<Exit> {
  return new Promise((resolve) => {
    const child = spawn('bash', args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

describe('client readiness and SSM job commands, bash under AURORA_BENCH_HOME (moto S3, MariaDB, sysbench)', () => {
  let moto: MotoServer;
  let db: ThrowawayMariadb;
  let s3: S3Client;
  let work: string;
  let secretArn: string;
  let env: Record<string, string>;
  let imds: Server;
  let imdsUrl: string;

  const homeOf = (name: string) => join(work, name);
  const clientEnv = (home: string) => ({ ...env, AURORA_BENCH_HOME: home });
  const marker = async (instanceId: string): Promise<ClientReadyMarker | undefined> => {
    try {
      const out = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: clientReadyKey(instanceId) }));
      return JSON.parse(await out.Body!.transformToString()) as ClientReadyMarker;
    } catch (e) {
      if ((e as Error).name === 'NoSuchKey') return undefined;
      throw e;
    }
  };
  const object = async (key: string) =>
    (await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }))).Body!.transformToString();

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'client-ready-test-'));
    moto = startMoto();
    const clientConfig = {
      endpoint: moto.endpoint,
      region: REGION,
      forcePathStyle: true,
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    };
    s3 = new S3Client(clientConfig);
    await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
    // What the stack's BucketDeployment puts under runner/: the client/ directory.
    for (const file of filesUnder(CLIENT_DIR)) {
      await s3.send(
        new PutObjectCommand({ Bucket: BUCKET, Key: `runner/${relative(CLIENT_DIR, file)}`, Body: readFileSync(file) }),
      );
    }
    const secrets = new SecretsManagerClient(clientConfig);
    secretArn = (
      await secrets.send(
        new CreateSecretCommand({
          Name: 'rds!cluster-ready-test',
          SecretString: JSON.stringify({ username: 'sbtest', password: PASSWORD }),
        }),
      )
    ).ARN!;
    secrets.destroy();
    const {
      AWS_REGION: _r,
      AWS_DEFAULT_REGION: _d,
      AWS_PROFILE: _p,
      AURORA_BENCH_HOME: _h,
      ...base
    } = process.env as Record<string, string>;
    env = {
      ...base,
      PATH: `${awsCliDir()}:${process.env['PATH']}`,
      AWS_ENDPOINT_URL: moto.endpoint,
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
      AWS_DEFAULT_REGION: REGION,
      AWS_CONFIG_FILE: join(work, 'no-aws-config'),
      AWS_SHARED_CREDENTIALS_FILE: join(work, 'no-aws-credentials'),
      TMPDIR: work,
    };
    db = await startMariadb({ password: PASSWORD });
    // Instance metadata (IMDSv2) for the user data: a token, then the instance id.
    imds = createServer((req, res) => {
      if (req.method === 'PUT' && req.url === '/latest/api/token') return void res.end('tok-ready');
      if (
        req.method === 'GET' &&
        req.url === '/latest/meta-data/instance-id' &&
        req.headers['x-aws-ec2-metadata-token'] === 'tok-ready'
      )
        return void res.end('i-0badbadbadbad0001');
      res.statusCode = 404;
      res.end();
    });
    await new Promise<void>((resolve) => imds.listen(0, '127.0.0.1', resolve));
    imdsUrl = `http://127.0.0.1:${(imds.address() as AddressInfo).port}/latest`;
  }, 300_000);

  afterAll(async () => {
    s3.destroy();
    await db.stop();
    moto.stop();
    await new Promise((resolve) => imds.close(resolve));
    rmSync(work, { recursive: true, force: true });
  });

  it('client-ready.sh runs sysbench through the report hook, then writes the marker locally and to S3', async () => {
    // Arrange
    const home = homeOf('i-0ready0000000001');

    // Act
    const r = await bash(
      [join(CLIENT_DIR, 'client-ready.sh'), '--marker-uri', `s3://${BUCKET}/${clientReadyKey('i-0ready0000000001')}`],
      clientEnv(home),
    );

    // Assert
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      new RegExp(
        /client-ready\.sh: ready: sysbench 1\.0\.20 \(using (system|bundled) LuaJIT [^)]+\) on \w+,/.source +
          / drivers mysql,pgsql; smoke run: [1-9]\d* interval\(s\), [1-9]\d* events/.source,
      ),
    );
    const uploaded = await marker('i-0ready0000000001');
    // Debian's sysbench 1.0.20 is built with both drivers (`sysbench --help`: Compiled-in database drivers).
    expect(uploaded).toMatchObject({ ready: true, sysbenchVersion: '1.0.20', drivers: ['mysql', 'pgsql'] });
    expect(uploaded!.sysbench).toMatch(/^sysbench 1\.0\.20 \(using .*LuaJIT/);
    expect(JSON.parse(readFileSync(join(home, 'ready'), 'utf8'))).toEqual(uploaded);
  });

  it('a smoke run that fails leaves no local marker and uploads a not-ready marker with the reason', async () => {
    // Arrange: the shipped client/ with a readiness workload that fails in sysbench.
    const brokenClient = join(work, 'broken-client');
    cpSync(CLIENT_DIR, brokenClient, { recursive: true });
    writeFileSync(join(brokenClient, 'lua', 'ready_check.lua'), 'function event() error("lua state is broken") end\n');
    const home = homeOf('i-0broken000000001');

    // Act
    const r = await bash(
      [join(brokenClient, 'client-ready.sh'), '--marker-uri', `s3://${BUCKET}/${clientReadyKey('i-0broken000000001')}`],
      clientEnv(home),
    );

    // Assert
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      'client-ready.sh: client not ready: the sysbench smoke run through the report hook failed (exit',
    );
    expect(existsSync(join(home, 'ready'))).toBe(false);
    const uploaded = await marker('i-0broken000000001');
    expect(uploaded!.ready).toBe(false);
    expect(uploaded!.reason).toContain('lua state is broken');
  });

  it('the SSM job commands refuse a client that has not passed, and run the runner from S3 once it has', async () => {
    // Arrange: a prepare job with the argv the backend builds, the secret's ARN as the only credential.
    const job: RunnerJob = {
      jobId: 'c1/s1/prepare/i-0ready0000000001',
      phase: 'prepare',
      clientId: 'i-0ready0000000001',
      endpoint: { instanceId: 'w', role: 'writer', host: '127.0.0.1', port: db.port },
      workload: 'oltp_read_only',
      sysbenchArgs: ['--tables=1', '--table-size=50', '--threads=1'],
      outputPrefix: 'raw/c1/s1/prepare/i-0ready0000000001/',
    };
    const argv = runnerArgs(job, {
      user: 'sbtest',
      passwordSecret: secretArn,
      outLocation: `s3://${BUCKET}/raw/c1/s1/prepare/i-0ready0000000001/`,
    });
    const script = ssmRunnerCommands(REGION, `s3://${BUCKET}/runner/`, '', argv).join('\n');
    const freshHome = homeOf('i-0fresh000000001');

    // Act
    const refused = await bash(['-c', script], clientEnv(freshHome));
    const ran = await bash(['-c', script], clientEnv(homeOf('i-0ready0000000001')));

    // Assert
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain(`client not ready: ${freshHome}/ready is missing`);
    expect(existsSync(join(freshHome, 'client'))).toBe(false);
    expect([ran.code, ran.stderr]).toEqual([0, '']);
    expect(existsSync(join(homeOf('i-0ready0000000001'), 'client', 'runner.js'))).toBe(true);
    const result = JSON.parse(await object('raw/c1/s1/prepare/i-0ready0000000001/result.json')) as RunnerResult;
    expect(result).toMatchObject({ phase: 'prepare', exitCode: 0, sysbenchVersion: '1.0.20' });
    expect(await object('raw/c1/s1/prepare/i-0ready0000000001/output.log')).not.toContain(PASSWORD);
    expect(db.sql('SELECT COUNT(*) FROM sbtest.sbtest1').trim()).toBe('50');
  });

  it("a job copies the runner only when the client's differs from the stack's digest of client/", async () => {
    // Arrange: a ready client without the runner; the digest the stack computes of what it deploys.
    const home = homeOf('i-0digest000000001');
    mkdirSync(home);
    writeFileSync(join(home, 'ready'), '{"ready":true}\n');
    const digest = runnerBundleDigest(CLIENT_DIR);
    // A bucket that does not exist: a job that tries to copy from it fails.
    const jobFrom = (bucket: string) =>
      ssmRunnerCommands(REGION, `s3://${bucket}/runner/`, digest, ['--help']).join('\n');
    const installed = join(home, 'client', 'lua', 'ready_check.lua');

    // Act
    const first = await bash(['-c', jobFrom(BUCKET)], clientEnv(home));
    const unchanged = await bash(['-c', jobFrom('no-such-bucket-here')], clientEnv(home));
    writeFileSync(installed, '-- changed on the client\n', { flag: 'a' });
    const changed = await bash(['-c', jobFrom('no-such-bucket-here')], clientEnv(home));
    const restored = await bash(['-c', jobFrom(BUCKET)], clientEnv(home));

    // Assert: the first job copied the runner; the next found the same digest and copied nothing; a
    // changed file made the job copy again (from the missing bucket: it failed), then from the stack's.
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('--phase');
    expect([unchanged.code, unchanged.stderr]).toEqual([0, '']);
    expect(changed.code).not.toBe(0);
    expect(changed.stderr).toContain('NoSuchBucket');
    expect(restored.code).toBe(0);
    expect(readFileSync(installed, 'utf8')).toBe(readFileSync(join(CLIENT_DIR, 'lua', 'ready_check.lua'), 'utf8'));
  });

  it('the user data reports an install that failed as a not-ready marker under its instance id', async () => {
    // Arrange: the user data's install part; the SSM agent's package is not in this S3 (moto), as
    // when the region's bucket cannot be reached.
    const home = homeOf('i-0badbadbadbad0001');
    const script = [
      'set -euo pipefail',
      `IMDS='${imdsUrl}'`,
      `export AWS_DEFAULT_REGION='${REGION}'`,
      ...clientInstallCommands({ runnerS3Uri: `s3://${BUCKET}/runner/`, bucketS3Uri: `s3://${BUCKET}/` }),
    ].join('\n');

    // Act
    const r = await bash(['-c', script], clientEnv(home));

    // Assert
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/latest\/debian_(amd64|arm64)\/amazon-ssm-agent\.deb/);
    const uploaded = await marker('i-0badbadbadbad0001');
    expect(uploaded!.ready).toBe(false);
    expect(uploaded!.reason).toMatch(/^user data failed \(exit 1\)/);
    // The runner was in place before the agent's install started: the failure could be reported with it.
    expect(existsSync(join(home, 'client', 'client-ready.sh'))).toBe(true);
    expect(existsSync(join(home, 'ready'))).toBe(false);
  });
});
