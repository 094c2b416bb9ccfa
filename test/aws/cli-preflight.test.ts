/**
 * `aurora-bench preflight SPEC --aws` as a user runs it: the built CLI (dist/bin/aurora-bench.js,
 * built by scripts/setup.sh) with its AWS SDK clients sent to a moto server through
 * AWS_ENDPOINT_URL, against a stack in moto's CloudFormation whose BackendConfig output names the
 * standing infrastructure made there. moto does not implement the RDS engine APIs or the ec2 Service
 * Quotas, so those checks warn here (test/aws/preflight.test.ts plays their answers); the exit code,
 * the report and that nothing is created are what this file checks.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CloudFormationClient, CreateStackCommand, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { DescribeInstancesCommand } from '@aws-sdk/client-ec2';
import { DescribeDBClustersCommand, DescribeDBClusterParameterGroupsCommand } from '@aws-sdk/client-rds';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { awsConfigToEnv } from '../../core/backends/aws/config';
import { BACKEND_CONFIG_OUTPUT } from '../../core/backends/aws/stack-outputs';
import type { SpecInput } from '../../core/experiment/schema';
import {
  createStandingInfrastructure,
  CREDENTIALS,
  destroyRawClients,
  rawClients,
  REGION,
  type RawClients,
} from './fixtures';
import { startMoto, type MotoServer } from './moto';

const REPO = join(__dirname, '..', '..');
const CLI = join(REPO, 'dist', 'bin', 'aurora-bench.js');
const STACK = 'AuroraBenchMoto';

let moto: MotoServer;
let raw: RawClients;
let cfn: CloudFormationClient;
let work: string;

beforeAll(async () => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: build first: npm run build:dist`);
  moto = startMoto();
  raw = rawClients(moto.endpoint);
  cfn = new CloudFormationClient({ region: REGION, endpoint: moto.endpoint, credentials: CREDENTIALS });
  work = mkdtempSync(join(tmpdir(), 'ab-cli-preflight-'));
  const config = await createStandingInfrastructure(moto.endpoint, raw, { bucket: 'ab-cli-preflight' });
  const template = {
    Resources: { Queue: { Type: 'AWS::SQS::Queue' } },
    Outputs: { [BACKEND_CONFIG_OUTPUT]: { Value: JSON.stringify(awsConfigToEnv(config)) } },
  };
  await cfn.send(new CreateStackCommand({ StackName: STACK, TemplateBody: JSON.stringify(template) }));
}, 300_000);

afterAll(() => {
  cfn.destroy();
  destroyRawClients(raw);
  if (work) rmSync(work, { recursive: true, force: true });
  moto.stop();
});

function writeSpec(name: string, over: Partial<SpecInput> = {}): string {
  const spec: SpecInput = {
    name,
    engine: { version: '3.10.4' },
    region: REGION,
    variants: [
      {
        name: 'r6g',
        instanceClass: 'db.r6g.large',
        az: 'a',
        clients: { count: 1, instanceType: 'c6g.large', placement: 'same-az' },
      },
    ],
    data: { tables: 2, tableSize: 1000 },
    workloads: [{ name: 'rw', test: 'oltp_read_write', threads: [2] }],
    ...over,
  };
  const file = join(work, `${name}.json`);
  writeFileSync(file, JSON.stringify(spec, null, 2));
  return file;
}

function cli(args: string[]) {
  const env = {
    PATH: process.env['PATH'] ?? '',
    HOME: work,
    AWS_ENDPOINT_URL: moto.endpoint,
    AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
    AWS_REGION: REGION,
    AWS_CONFIG_FILE: join(work, 'no-config'),
    AWS_SHARED_CREDENTIALS_FILE: join(work, 'no-credentials'),
  };
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: work, env, encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** What moto holds that a run would create: instances, clusters, parameter groups, lake objects, stacks. */
async function accountState(): Promise<string> {
  const [instances, clusters, groups, objects, stacks] = await Promise.all([
    raw.ec2.send(new DescribeInstancesCommand({})),
    raw.rds.send(new DescribeDBClustersCommand({})),
    raw.rds.send(new DescribeDBClusterParameterGroupsCommand({})),
    raw.s3.send(new ListObjectsV2Command({ Bucket: 'ab-cli-preflight' })),
    cfn.send(new DescribeStacksCommand({})),
  ]);
  return JSON.stringify({
    instances: (instances.Reservations ?? []).flatMap((r) => r.Instances ?? []).map((i) => i.InstanceId),
    clusters: (clusters.DBClusters ?? []).map((c) => c.DBClusterIdentifier),
    groups: (groups.DBClusterParameterGroups ?? []).map((g) => g.DBClusterParameterGroupName),
    objects: (objects.Contents ?? []).map((o) => o.Key),
    stacks: (stacks.Stacks ?? []).map((s) => s.StackName),
  });
}

describe('aurora-bench preflight --aws (the built CLI against moto)', () => {
  it('prints one line per check and exits 0 when nothing is refused', async () => {
    // Arrange
    const spec = writeSpec('preflight-ok', { budget: { maxUsd: 50 } });
    const before = await accountState();

    // Act
    const r = cli(['preflight', spec, '--aws', '--stack', STACK]);

    // Assert
    expect(r.stderr).not.toMatch(/aurora-bench:/);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(
      `Preflight of "preflight-ok" on AWS (us-east-1, stack ${STACK}): read-only checks, nothing is created`,
    );
    for (const title of [
      'deployed stack',
      'engine version',
      'DB instance classes',
      'parameters',
      'RDS service-linked role',
      'client instances',
      'EC2 vCPU quota',
      'network and client downloads',
      'budget',
    ]) {
      expect(lines.some((l) => new RegExp(`^  (ok|warn) +${title} `).test(l))).toBe(true);
    }
    expect(lines.at(-1)).toMatch(/^0 refused, \d+ with warnings, \d+ ok: the account can run this experiment$/);
    expect(await accountState()).toBe(before);
  });

  it('prints every refusal at once with its JSON path or account setting, exits 1 and creates nothing', async () => {
    // Arrange: an AZ without a subnet, an instance type that does not exist (so it has no price for the budget either).
    const spec = writeSpec('preflight-refused', {
      variants: [
        {
          name: 'nowhere',
          instanceClass: 'db.r6g.large',
          az: 'd',
          clients: { count: 1, instanceType: 'cc2.8xlarge', placement: 'same-az' },
        },
      ],
      budget: { maxUsd: 0.01 },
    });
    const before = await accountState();

    // Act
    const r = cli(['preflight', spec, '--aws', '--stack', STACK]);

    // Assert
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      new RegExp(
        /REFUSE {2}client instances .*\n {10}- refused: variants\[0\]\.clients\.instanceType: EC2/.source +
          / instance type cc2\.8xlarge does not exist in us-east-1/.source,
      ),
    );
    expect(r.stdout).toMatch(
      new RegExp(
        /REFUSE {2}network and client downloads .*\n {10}- refused: variants\[0\]\.az: AZ us-east-1d/.source +
          / has no subnet of stack AuroraBenchMoto \(configured: us-east-1a, us-east-1b\): use one of/.source +
          / those AZs/.source,
      ),
    );
    expect(r.stdout).toMatch(
      new RegExp(
        /REFUSE {2}budget .*\n {10}- refused: budget\.maxUsd: cannot check budget\.maxUsd \$0\.01: no/.source +
          / price for cc2\.8xlarge in us-east-1 \(add them with --prices\)/.source,
      ),
    );
    expect(r.stdout.trimEnd().split('\n').at(-1)).toMatch(
      /^3 refused, \d+ with warnings, \d+ ok: fix what is refused above; nothing was created$/,
    );
    expect(await accountState()).toBe(before);
  });

  it('refuses a stack that does not exist, naming it and how to deploy', () => {
    // Arrange
    const spec = writeSpec('preflight-no-stack');

    // Act
    const r = cli(['preflight', spec, '--aws', '--stack', 'NoSuchStack']);

    // Assert
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      new RegExp(
        /REFUSE {2}deployed stack +not usable\n {10}- refused: stack NoSuchStack: stack "NoSuchStack"/.source +
          / not found \(.*\): deploy it with `npx cdk deploy` or pass --stack NAME \(and --region\)/.source,
      ),
    );
  });

  it('says that preflight needs --aws', () => {
    // Act
    const r = cli(['preflight', writeSpec('preflight-usage')]);

    // Assert
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      'aurora-bench: preflight checks an AWS account: pass --aws (a local run checks its own tools when it starts)\n',
    );
  });
});
