/**
 * The account preflight (core/backends/aws/preflight*.ts), one function for `aurora-bench preflight`,
 * `run --aws` and the workflow's PlanRun, checked refusal class by refusal class and all-OK.
 *
 * moto plays what it implements: EC2 (subnets, route tables, NAT gateways, VPC endpoints, prefix
 * lists, instance types and their AZ offerings, running instances), S3 HeadObject and IAM GetRole.
 * aws-sdk-client-mock plays what moto has nothing for: RDS DescribeDBEngineVersions and
 * DescribeEngineDefaultClusterParameters / DescribeEngineDefaultParameters (moto 5.2 answers HTTP 500),
 * DescribeOrderableDBInstanceOptions (moto lists no aurora-mysql options), and Service Quotas for the
 * ec2 service code (moto knows only "vpc"). The mocked answers have the shapes of botocore's
 * rds/2014-10-31 and service-quotas/2019-06-24 models; parameter rules are those the Aurora User
 * Guide shows (aurora_binlog_read_buffer_size "8192-536870912", booleans "0,1").
 * Every test records the operations made and asserts they only read (Describe, Get, List, Head).
 */
import {
  CreateSubnetCommand,
  CreateVpcCommand,
  DescribeInstancesCommand,
  RunInstancesCommand,
  TerminateInstancesCommand,
} from '@aws-sdk/client-ec2';
import { CreateRoleCommand, DeleteRoleCommand, IAMClient } from '@aws-sdk/client-iam';
import {
  DescribeDBEngineVersionsCommand,
  DescribeEngineDefaultClusterParametersCommand,
  DescribeEngineDefaultParametersCommand,
  DescribeOrderableDBInstanceOptionsCommand,
  type Parameter,
  type RDSClient,
} from '@aws-sdk/client-rds';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import {
  GetAWSDefaultServiceQuotaCommand,
  GetServiceQuotaCommand,
  type ServiceQuotasClient,
} from '@aws-sdk/client-service-quotas';
import { mockClient, type AwsClientStub } from 'aws-sdk-client-mock';
import { destroyAwsClients, makeAwsClients, type AwsClients } from '../../core/backends/aws/clients';
import { awsConfigToEnv, type AwsBackendConfig } from '../../core/backends/aws/config';
import {
  preflightNotes,
  runAwsPreflight,
  type AwsDeployment,
  type PreflightReport,
} from '../../core/backends/aws/preflight';
import { planRun } from '../../core/plan/plan';
import { bundledPrices } from '../../core/plan/cost';
import type { SpecInput } from '../../core/experiment/schema';
import { validateSpec } from '../../core/experiment/validate';
import { planRunTask } from '../../core/workflow/tasks/plan-run';
import { buildAwsTaskDeps } from '../helpers/aws-task-deps';
import { tracer } from '../../lambdas/runtime/aws-runtime';
import type { ClientNetworkOptions } from '../../core/rehearsal/standing-infrastructure';
import {
  addClientNetwork,
  createStandingInfrastructure,
  CREDENTIALS,
  destroyRawClients,
  rawClients,
  REGION,
  type RawClients,
} from './fixtures';
import { startMoto, type MotoServer } from './moto';

const VERSION = '8.0.mysql_aurora.3.08.0';
const SLR = { RoleName: 'AWSServiceRoleForRDS', Path: '/aws-service-role/rds.amazonaws.com/' };

let moto: MotoServer;
let raw: RawClients;
let iam: IAMClient;
let base: AwsBackendConfig;
/** A VPC whose subnets (a, b) route to a NAT gateway and have the S3, SSM and Secrets Manager endpoints. */
let connected: AwsBackendConfig;
let vpcCount = 0;

beforeAll(async () => {
  moto = startMoto();
  raw = rawClients(moto.endpoint);
  iam = new IAMClient({ region: REGION, endpoint: moto.endpoint, credentials: CREDENTIALS });
  base = await createStandingInfrastructure(moto.endpoint, raw, { bucket: 'ab-preflight' });
  connected = await networkConfig({ nat: true, s3Endpoint: true, ssmEndpoints: true });
  // The service-linked role as RDS creates it (moto's CreateServiceLinkedRole names it "AWSServiceRoleForrds").
  await iam.send(
    new CreateRoleCommand({
      ...SLR,
      AssumeRolePolicyDocument: JSON.stringify({
        Version: '2012-10-17',
        Statement: [{ Effect: 'Allow', Principal: { Service: 'rds.amazonaws.com' }, Action: 'sts:AssumeRole' }],
      }),
    }),
  );
}, 300_000);

afterAll(() => {
  iam.destroy();
  destroyRawClients(raw);
  moto.stop();
});

/** A fresh VPC with subnets in us-east-1a and -b (and -e when asked), wired as told. */
async function networkConfig(network: ClientNetworkOptions, extraAz?: string): Promise<AwsBackendConfig> {
  const octet = 30 + ++vpcCount;
  const vpc = await raw.ec2.send(new CreateVpcCommand({ CidrBlock: `10.${octet}.0.0/16` }));
  const subnetIdsByAz: Record<string, string> = {};
  for (const [i, az] of ['us-east-1a', 'us-east-1b', ...(extraAz ? [extraAz] : [])].entries()) {
    const subnet = await raw.ec2.send(
      new CreateSubnetCommand({ VpcId: vpc.Vpc!.VpcId!, CidrBlock: `10.${octet}.${i + 1}.0/24`, AvailabilityZone: az }),
    );
    subnetIdsByAz[az] = subnet.Subnet!.SubnetId!;
  }
  const config = { ...base, subnetIdsByAz };
  await addClientNetwork(raw, config, network);
  return config;
}

// ------------------------------------------------------------------ what RDS answers (mocked)

const p = (
  ParameterName: string,
  DataType: string,
  AllowedValues: string | undefined,
  IsModifiable = true,
  extra: Partial<Parameter> = {},
): Parameter => ({
  ParameterName,
  DataType,
  ...(AllowedValues !== undefined ? { AllowedValues } : {}),
  IsModifiable,
  ApplyType: 'dynamic',
  Source: 'engine-default',
  SupportedEngineModes: ['provisioned'],
  ...extra,
});

/** Instance-level parameters: in the DB parameter group family, and (as defaults) in the cluster one. */
const INSTANCE_PARAMETERS: Parameter[] = [
  p('max_connections', 'integer', '1-16000'),
  p('performance_schema', 'boolean', '0,1', true, { ApplyType: 'static' }),
  p('innodb_buffer_pool_size', 'integer', '5242880-18446744073709551615', true, { ApplyType: 'static' }),
  p('long_query_time', 'float', '0-31536000'),
];
/**
 * Cluster-level only. Where this account's answers differ from the offline catalogue (the plan has
 * already refused what the catalogue knows RDS refuses), the account decides: auto_increment_increment
 * not modifiable, aurora_parallel_query listed at the cluster level, aurora_enable_zdr from a later
 * version, innodb_default_row_format without REDUNDANT, aurora_jemalloc_tcache_enabled not listed.
 */
const CLUSTER_PARAMETERS: Parameter[] = [
  p('aurora_binlog_replication_max_yield_seconds', 'integer', '0-36000'),
  p('binlog_format', 'string', 'ROW,STATEMENT,MIXED,OFF', true, { ApplyType: 'static' }),
  p('character_set_server', 'string', 'big5,dec8,cp850,hp8,koi8r,latin1,latin2,swe7,ascii,utf8mb3,utf8mb4'),
  p('auto_increment_increment', 'integer', '1-65535', false),
  p('aurora_parallel_query', 'boolean', '0,1'),
  p('aurora_enable_zdr', 'boolean', '0,1', true, { MinimumEngineVersion: '8.0.mysql_aurora.3.10.0' }),
  p('innodb_default_row_format', 'string', 'DYNAMIC,COMPACT'),
  p('aurora_replica_read_consistency', 'string', 'EVENTUAL,SESSION,GLOBAL'),
  p('aurora_fwd_writer_max_connections_pct', 'integer', '0-90'),
  p('aurora_fwd_writer_idle_timeout', 'integer', '1-86400'),
];

/** Two pages per list (EngineDefaults.Marker), so a parameter on the second page must be found. */
function pagedDefaults(list: Parameter[], marker: string | undefined) {
  const half = Math.ceil(list.length / 2);
  return marker === undefined
    ? {
        EngineDefaults: {
          DBParameterGroupFamily: 'aurora-mysql8.0',
          Parameters: list.slice(0, half),
          Marker: 'page-2',
        },
      }
    : { EngineDefaults: { DBParameterGroupFamily: 'aurora-mysql8.0', Parameters: list.slice(half) } };
}

/** Classes orderable for 3.08.0, with their AZs (OrderableDBInstanceOption.AvailabilityZones). */
const ORDERABLE: Record<string, string[]> = {
  'db.r6g.large': ['us-east-1a', 'us-east-1b', 'us-east-1c'],
  'db.r6g.xlarge': ['us-east-1a', 'us-east-1b'],
  'db.r5.large': ['us-east-1a'],
};

interface Mocks {
  readonly clients: AwsClients;
  readonly rds: AwsClientStub<RDSClient>;
  readonly quotas: AwsClientStub<ServiceQuotasClient>;
  /** Every operation made, mocked or sent to moto. */
  readonly operations: () => string[];
}

function setup(options: { quota?: number; engineVersions?: string[] } = {}): Mocks {
  const clients = makeAwsClients({ region: REGION, endpoint: moto.endpoint, credentials: CREDENTIALS, maxAttempts: 1 });
  const sent: string[] = [];
  const record =
    (next: (a: unknown) => Promise<unknown>, context: { commandName?: string }) => async (args: unknown) => {
      sent.push(context.commandName ?? 'unknown');
      return next(args);
    };
  for (const c of [clients.ec2, clients.s3, clients.iam])
    (c.middlewareStack as { add(m: unknown, o: object): void }).add(record, {
      step: 'initialize',
      name: 'recordOperations',
    });
  const rds = mockClient(clients.rds);
  const offered = options.engineVersions ?? [VERSION];
  rds.on(DescribeDBEngineVersionsCommand).callsFake((input: { EngineVersion?: string }) => ({
    DBEngineVersions: offered
      .filter((v) => v === input.EngineVersion)
      .map((v) => ({
        Engine: 'aurora-mysql',
        EngineVersion: v,
        DBParameterGroupFamily: 'aurora-mysql8.0',
        Status: 'available',
        // RDS is the authority: 3.04.1 stands for a version `validate` accepts (3.04 or higher) that RDS says lacks it.
        SupportsLocalWriteForwarding: !v.includes('3.02') && !v.endsWith('3.04.1'),
      })),
  }));
  rds
    .on(DescribeOrderableDBInstanceOptionsCommand)
    .callsFake((input: { DBInstanceClass?: string; Marker?: string }) => {
      const classes = input.DBInstanceClass !== undefined ? [input.DBInstanceClass] : Object.keys(ORDERABLE);
      const options = classes
        .filter((c) => ORDERABLE[c])
        .map((c) => ({
          Engine: 'aurora-mysql',
          EngineVersion: VERSION,
          DBInstanceClass: c,
          Vpc: true,
          AvailabilityZones: ORDERABLE[c]!.map((Name) => ({ Name })),
        }));
      return { OrderableDBInstanceOptions: options };
    });
  rds
    .on(DescribeEngineDefaultClusterParametersCommand)
    .callsFake((input: { Marker?: string }) =>
      pagedDefaults([...CLUSTER_PARAMETERS, ...INSTANCE_PARAMETERS], input.Marker),
    );
  rds
    .on(DescribeEngineDefaultParametersCommand)
    .callsFake((input: { Marker?: string }) => pagedDefaults(INSTANCE_PARAMETERS, input.Marker));
  const quotas = mockClient(clients.serviceQuotas);
  quotas.on(GetServiceQuotaCommand).resolves({
    Quota: {
      ServiceCode: 'ec2',
      QuotaCode: 'L-1216C47A',
      QuotaName: 'Running On-Demand Standard (A, C, D, H, I, M, R, T, Z) instances',
      Value: options.quota ?? 64,
      Unit: 'None',
    },
  });
  const operations = () => [
    ...sent,
    ...rds.calls().map((c) => (c.args[0] as { constructor: { name: string } }).constructor.name),
    ...quotas.calls().map((c) => (c.args[0] as { constructor: { name: string } }).constructor.name),
  ];
  return { clients, rds, quotas, operations };
}

// ------------------------------------------------------------------ specs and runs

function spec(over: Partial<SpecInput> = {}) {
  return validateSpec({
    name: 'preflight',
    engine: { version: '3.08.0' },
    region: REGION,
    variants: [
      {
        name: 'graviton',
        instanceClass: 'db.r6g.large',
        az: 'a',
        clients: { count: 2, instanceType: 'c6g.large', placement: 'same-az' },
      },
      {
        name: 'bigger',
        instanceClass: 'db.r6g.xlarge',
        az: 'b',
        readers: 1,
        clients: { count: 1, instanceType: 'c6i.large', placement: 'same-az' },
      },
    ],
    data: { tables: 2, tableSize: 1000 },
    defaults: { durationS: 60, warmupS: 0, reportIntervalS: 1, percentile: 95 },
    workloads: [{ name: 'rw', test: 'oltp_read_write', threads: [8] }],
    repeats: 2,
    maxConcurrency: 2,
    budget: { maxUsd: 500 },
    ttlHours: 4,
    ...over,
  });
}

async function preflight(
  s: ReturnType<typeof spec>,
  mocks: Mocks,
  deployment: AwsDeployment = { stackName: 'AuroraBench', config: connected },
): Promise<PreflightReport> {
  const plan = planRun(s, { backend: 'aws', now: new Date('2026-11-21T10:00:00Z'), runId: 'preflight-1' });
  return runAwsPreflight({ plan, spec: s, clients: mocks.clients, deployment, prices: bundledPrices() });
}

function verdicts(report: PreflightReport): Record<string, string> {
  return Object.fromEntries(report.checks.map((c) => [c.id, c.verdict]));
}

function refusals(report: PreflightReport): { path: string; message: string }[] {
  return preflightNotes(report)
    .filter((n) => n.level === 'refused')
    .map(({ path, message }) => ({ path, message }));
}

/** Nothing was created or changed: every operation only reads. */
function expectReadOnly(mocks: Mocks): void {
  const ops = mocks.operations();
  expect(ops.length).toBeGreaterThan(0);
  expect(ops.filter((o) => !/^(Describe|Get|List|Head)[A-Za-z0-9]*Command$/.test(o))).toEqual([]);
}

// ------------------------------------------------------------------ tests

describe('account preflight: all OK', () => {
  it("counts a duet's clients together: its variants run at once in one Map item", async () => {
    // Arrange: maxConcurrency 1, but a duet runs "graviton" (2 x c6g.large) and "bigger" (1 x c6i.large) together.
    const mocks = setup();

    // Act
    const report = await preflight(spec({ order: 'duet', maxConcurrency: 1 }), mocks);

    // Assert
    const summary = Object.fromEntries(report.checks.map((c) => [c.id, c.summary]));
    expect(summary['vcpu-quota']).toBe(
      '6 vCPUs of clients at once (the largest 2 cells, maxConcurrency 1); 0 already running (counted from ' +
        'DescribeInstances); quota 64',
    );
    expectReadOnly(mocks);
    destroyAwsClients(mocks.clients);
  });

  it('says ok for every check of a runnable experiment, and only reads', async () => {
    // Arrange
    const mocks = setup();

    // Act
    const report = await preflight(spec(), mocks);

    // Assert
    expect(verdicts(report)).toEqual({
      stack: 'ok',
      'engine-version': 'ok',
      'instance-classes': 'ok',
      parameters: 'ok',
      'service-linked-role': 'ok',
      'client-instances': 'ok',
      'server-instances': 'ok',
      'vcpu-quota': 'ok',
      network: 'ok',
      budget: 'ok',
    });
    expect(preflightNotes(report)).toEqual([]);
    const summary = Object.fromEntries(report.checks.map((c) => [c.id, c.summary]));
    expect(summary['engine-version']).toBe(
      `aurora-mysql ${VERSION} is offered in ${REGION} (parameter family aurora-mysql8.0)`,
    );
    expect(summary['instance-classes']).toBe('orderable: db.r6g.large in us-east-1a, db.r6g.xlarge in us-east-1b');
    expect(summary['service-linked-role']).toMatch(
      /role\/aws-service-role\/rds\.amazonaws\.com\/AWSServiceRoleForRDS exists$/,
    );
    // c6g.large has 2 vCPUs (DescribeInstanceTypes): at maxConcurrency
    // 2 both repeats of "graviton" (2 clients each) may run together.
    expect(summary['vcpu-quota']).toBe(
      '8 vCPUs of clients at once (the largest 2 cells, maxConcurrency 2); 0 already running (counted from ' +
        'DescribeInstances); quota 64',
    );
    expect(summary['network']).toMatch(
      new RegExp(
        /us-east-1a subnet-\S+: NAT gateway, S3 gateway endpoint, SSM and Secrets Manager endpoints;/.source +
          / us-east-1b .*; debian from https:\/\/deb\.debian\.org\/debian$/.source,
      ),
    );
    expect(summary['budget']).toMatch(/^estimated \$[\d.]+ within budget.maxUsd \$500\.00/);
    expectReadOnly(mocks);
    destroyAwsClients(mocks.clients);
  });

  it('checks every parameter the parameter groups would get, across both pages of the engine defaults', async () => {
    // Arrange: a template, a variant's own values, formulas and the write-forwarding parameters the backend adds.
    const mocks = setup();
    const s = spec({
      parameterTemplates: {
        tuned: { clusterParameters: { binlog_format: 'ROW' }, instanceParameters: { performance_schema: true } },
      },
      variants: [
        {
          name: 'wf',
          instanceClass: 'db.r6g.large',
          az: 'a',
          readers: 1,
          parameterTemplate: 'tuned',
          clusterParameters: { aurora_binlog_replication_max_yield_seconds: 36000 },
          instanceParameters: {
            innodb_buffer_pool_size: '{DBInstanceClassMemory*3/4}',
            max_connections: 16000,
            long_query_time: 0.5,
          },
          writeForwarding: { enabled: true, consistency: 'SESSION', maxConnectionsPct: 50, idleTimeoutS: 60 },
          clients: { count: 1, instanceType: 'c6g.large', placement: 'same-az' },
        },
      ],
    });

    // Act
    const report = await preflight(s, mocks);

    // Assert
    expect(report.checks.find((c) => c.id === 'parameters')).toMatchObject({
      verdict: 'ok',
      notes: [],
      summary: expect.stringMatching(/^9 parameters checked against aurora-mysql8\.0's engine defaults/),
    });
    const markers = mocks.rds.commandCalls(DescribeEngineDefaultClusterParametersCommand).map((c) => c.args[0].input);
    expect(markers).toEqual([
      { DBParameterGroupFamily: 'aurora-mysql8.0', MaxRecords: 100 },
      { DBParameterGroupFamily: 'aurora-mysql8.0', MaxRecords: 100, Marker: 'page-2' },
    ]);
    destroyAwsClients(mocks.clients);
  });
});

describe('account preflight: refusals', () => {
  it('refuses an engine version RDS does not offer on engine.version; checks nothing else against it', async () => {
    // Arrange: without IncludeAll, DescribeDBEngineVersions lists only available versions.
    const mocks = setup({ engineVersions: [] });

    // Act
    const report = await preflight(spec({ engine: { version: '3.01.0' } }), mocks);

    // Assert
    expect(refusals(report)).toEqual([
      {
        path: 'engine.version',
        message: expect.stringMatching(
          new RegExp(
            /^aurora-mysql 8\.0\.mysql_aurora\.3\.01\.0 \(spec 3\.01\.0\) is not offered in/.source +
              / us-east-1: .*describe-db-engine-versions/.source,
          ),
        ),
      },
    ]);
    expect(verdicts(report)).toMatchObject({
      'engine-version': 'refuse',
      'instance-classes': 'warn',
      parameters: 'ok',
    });
    expect(mocks.rds.commandCalls(DescribeOrderableDBInstanceOptionsCommand)).toEqual([]);
    expectReadOnly(mocks);
    destroyAwsClients(mocks.clients);
  });

  it('refuses write forwarding on a version RDS says does not support it', async () => {
    // Arrange
    const mocks = setup({ engineVersions: ['8.0.mysql_aurora.3.04.1'] });
    const s = spec({
      engine: { version: '3.04.1' },
      variants: [
        { name: 'wf', instanceClass: 'db.r6g.large', az: 'a', readers: 1, writeForwarding: { enabled: true } },
      ],
    });

    // Act
    const report = await preflight(s, mocks);

    // Assert
    expect(refusals(report)).toContainEqual({
      path: 'variants[0].writeForwarding.enabled',
      message: expect.stringContaining('SupportsLocalWriteForwarding false'),
    });
    destroyAwsClients(mocks.clients);
  });

  it('refuses an instance class that is not orderable, or not in the AZ its cell uses', async () => {
    // Arrange
    const mocks = setup();
    const s = spec({
      variants: [
        { name: 'old', instanceClass: 'db.x2g.large', az: 'a' },
        { name: 'wrong-az', instanceClass: 'db.r5.large', az: 'b' },
        { name: 'fine', instanceClass: 'db.r6g.large', az: 'b' },
      ],
      // No price for db.x2g.large: a budget would be refused too.
      budget: undefined,
    });

    // Act
    const report = await preflight(s, mocks);

    // Assert
    expect(refusals(report)).toEqual([
      {
        path: 'variants[0].instanceClass',
        message: expect.stringMatching(
          /^db\.x2g\.large is not orderable for aurora-mysql 8\.0\.mysql_aurora\.3\.08\.0 in us-east-1/,
        ),
      },
      {
        path: 'variants[1].instanceClass',
        message:
          'db.r5.large is orderable for aurora-mysql 8.0.mysql_aurora.3.08.0 in us-east-1a but not in ' +
          'us-east-1b, where variants[1] runs: choose another class, or set variants[1].az to one of those AZs',
      },
    ]);
    expect(
      mocks.rds
        .commandCalls(DescribeOrderableDBInstanceOptionsCommand)
        .map((c) => c.args[0].input)
        .find((i) => i.DBInstanceClass === 'db.r5.large'),
    ).toEqual({
      Engine: 'aurora-mysql',
      EngineVersion: VERSION,
      DBInstanceClass: 'db.r5.large',
      Vpc: true,
      MaxRecords: 100,
    });
    destroyAwsClients(mocks.clients);
  });

  it(
    'refuses unknown, non-modifiable, wrong-level, too-new and out-of-range parameters at the JSON path they ' +
      'were written',
    async () => {
      // Arrange: all of them pass the offline catalogue (planRun), this account's RDS refuses them.
      const mocks = setup();
      const s = spec({
        parameterTemplates: { shared: { clusterParameters: { auto_increment_increment: 2 }, instanceParameters: {} } },
        variants: [
          {
            name: 'tuned',
            instanceClass: 'db.r6g.large',
            az: 'a',
            parameterTemplate: 'shared',
            clusterParameters: {
              aurora_jemalloc_tcache_enabled: 1,
              aurora_binlog_replication_max_yield_seconds: 99999,
              character_set_server: 'klingon',
              aurora_enable_zdr: true,
            },
            instanceParameters: { aurora_parallel_query: true, max_connections: 'lots', performance_schema: 2 },
          },
        ],
      });

      // Act
      const report = await preflight(s, mocks);

      // Assert
      expect(refusals(report)).toEqual([
        {
          path: 'parameterTemplates.shared.clusterParameters.auto_increment_increment',
          message:
            'auto_increment_increment is not modifiable on Aurora (aurora-mysql8.0: IsModifiable false): remove ' +
            'it; Aurora sets it itself',
        },
        {
          path: 'variants[0].clusterParameters.aurora_jemalloc_tcache_enabled',
          message:
            'aurora_jemalloc_tcache_enabled is not a parameter of aurora-mysql8.0 (RDS does not list it among ' +
            'the engine defaults of the family): remove it or correct its name',
        },
        {
          path: 'variants[0].clusterParameters.aurora_binlog_replication_max_yield_seconds',
          message: 'aurora_binlog_replication_max_yield_seconds: "99999" is not allowed (allowed: 0 to 36000)',
        },
        {
          path: 'variants[0].clusterParameters.character_set_server',
          message: expect.stringMatching(
            /^character_set_server: "klingon" is not allowed \(allowed: "big5", .*"utf8mb4"\)$/,
          ),
        },
        {
          path: 'variants[0].clusterParameters.aurora_enable_zdr',
          message:
            'aurora_enable_zdr needs engine 8.0.mysql_aurora.3.10.0 or later; the spec asks for ' +
            '8.0.mysql_aurora.3.08.0: remove it or raise engine.version',
        },
        {
          path: 'variants[0].instanceParameters.aurora_parallel_query',
          message:
            'aurora_parallel_query is a cluster-level parameter of aurora-mysql8.0: move it to clusterParameters',
        },
        {
          path: 'variants[0].instanceParameters.max_connections',
          message: 'max_connections: "lots" is not an integer (DataType integer)',
        },
        {
          path: 'variants[0].instanceParameters.performance_schema',
          message: 'performance_schema: "2" is not allowed (allowed: "0", "1")',
        },
      ]);
      // Where the catalogue accepted what the account refuses, an info note says the account decides.
      const infos = preflightNotes(report).filter((n) => n.level === 'info');
      expect(infos.map((n) => n.path)).toEqual([
        'parameterTemplates.shared.clusterParameters.auto_increment_increment',
        'variants[0].clusterParameters.aurora_jemalloc_tcache_enabled',
        'variants[0].clusterParameters.aurora_binlog_replication_max_yield_seconds',
        'variants[0].clusterParameters.character_set_server',
        'variants[0].clusterParameters.aurora_enable_zdr',
        'variants[0].instanceParameters.aurora_parallel_query',
        'variants[0].instanceParameters.max_connections',
        'variants[0].instanceParameters.performance_schema',
      ]);
      expect(infos[0]!.message).toBe(
        "the offline parameter catalogue (AWS's published reference) accepts auto_increment_increment at the " +
          'cluster level; RDS in this account does not, and it decides',
      );
      expect(report.checks.find((c) => c.id === 'parameters')!.verdict).toBe('refuse');
      destroyAwsClients(mocks.clients);
    },
  );

  it('says where the account allows other values than the offline catalogue, without refusing', async () => {
    // Arrange: the catalogue allows DYNAMIC, COMPACT, REDUNDANT; this account's RDS only the first two.
    const mocks = setup();
    const s = spec({
      variants: [
        {
          name: 'rows',
          instanceClass: 'db.r6g.large',
          az: 'a',
          clusterParameters: { innodb_default_row_format: 'DYNAMIC' },
        },
      ],
    });

    // Act
    const report = await preflight(s, mocks);

    // Assert
    expect(report.checks.find((c) => c.id === 'parameters')).toMatchObject({
      verdict: 'ok',
      notes: [
        {
          level: 'info',
          path: 'variants[0].clusterParameters.innodb_default_row_format',
          message:
            'innodb_default_row_format: the catalogue allows DYNAMIC, COMPACT, REDUNDANT, RDS allows ' +
            'DYNAMIC,COMPACT (RDS in this account decides)',
        },
      ],
    });
    destroyAwsClients(mocks.clients);
  });

  it('refuses client instance types that do not exist, are not in the AZ, or have no launch template', async () => {
    // Arrange: a subnet in us-east-1e, where EC2 does not offer c6i.large (moto's offerings data).
    const mocks = setup();
    const withE = {
      ...(await networkConfig({ nat: true, s3Endpoint: true, ssmEndpoints: true }, 'us-east-1e')),
      launchTemplateIds: { x86_64: base.launchTemplateIds.x86_64! },
    };
    const s = spec({
      variants: [
        {
          name: 'typo',
          instanceClass: 'db.r6g.large',
          az: 'a',
          clients: { count: 1, instanceType: 'cc2.8xlarge', placement: 'same-az' },
        },
        {
          name: 'graviton',
          instanceClass: 'db.r6g.large',
          az: 'a',
          clients: { count: 1, instanceType: 'c6g.large', placement: 'same-az' },
        },
        {
          name: 'east-e',
          instanceClass: 'db.r6g.large',
          az: 'e',
          clients: { count: 1, instanceType: 'c6i.large', placement: 'same-az' },
        },
      ],
    });
    ORDERABLE['db.r6g.large']!.push('us-east-1e');

    // Act
    let report: PreflightReport;
    try {
      report = await preflight(s, mocks, { stackName: 'AuroraBench', config: withE });
    } finally {
      ORDERABLE['db.r6g.large']!.pop();
    }

    // Assert
    expect(refusals(report).filter((r) => r.path.endsWith('clients.instanceType'))).toEqual([
      {
        path: 'variants[0].clients.instanceType',
        message:
          'EC2 instance type cc2.8xlarge does not exist in us-east-1: choose another client type (e.g. c6i.large)',
      },
      {
        path: 'variants[1].clients.instanceType',
        message: expect.stringMatching(
          new RegExp(
            /^c6g\.large is arm64 but stack AuroraBench has no launch template for arm64 clients: add/.source +
              / "arm64" to aurora-bench\.clients\.architectures/.source,
          ),
        ),
      },
      {
        path: 'variants[2].clients.instanceType',
        message:
          'EC2 does not offer c6i.large in us-east-1e (DescribeInstanceTypeOfferings): choose another client ' +
          'type, or another AZ with variants[2].az',
      },
    ]);
    destroyAwsClients(mocks.clients);
  });

  it('refuses when the clients the plan runs at once do not fit the vCPU quota next to what already runs', async () => {
    // Arrange: 2 running m5.xlarge (4 vCPUs each); quota 20; 2 cells at once of 1 x c6i.2xlarge (8 vCPUs).
    const mocks = setup({ quota: 20 });
    const running = await raw.ec2.send(
      new RunInstancesCommand({ ImageId: 'ami-12c6146b', MinCount: 2, MaxCount: 2, InstanceType: 'm5.xlarge' }),
    );
    const ids = running.Instances!.map((i) => i.InstanceId!);
    const s = spec({
      variants: [
        {
          name: 'one',
          instanceClass: 'db.r6g.large',
          az: 'a',
          clients: { count: 1, instanceType: 'c6i.2xlarge', placement: 'same-az' },
        },
        {
          name: 'two',
          instanceClass: 'db.r6g.large',
          az: 'b',
          clients: { count: 1, instanceType: 'c6i.2xlarge', placement: 'same-az' },
        },
      ],
    });

    // Act
    let report: PreflightReport;
    try {
      report = await preflight(s, mocks);
    } finally {
      await raw.ec2.send(new TerminateInstancesCommand({ InstanceIds: ids }));
    }

    // Assert
    expect(refusals(report)).toEqual([
      {
        path: 'account: EC2 quota L-1216C47A (Running On-Demand Standard (A, C, D, H, I, M, R, T, Z) instances)',
        message:
          'the run needs 16 vCPUs of clients at once (the largest 2 cells, maxConcurrency 2), 8 vCPUs already ' +
          'run on 2 On-Demand Standard instances, and the quota is 20: ' +
          'request an increase to at least 24 (Service Quotas console, Amazon EC2, "Running On-Demand Standard ' +
          '(A, C, D, H, I, M, R, T, Z) instances"), stop other instances, or lower maxConcurrency or ' +
          'clients.count',
      },
    ]);
    expect(mocks.quotas.commandCalls(GetServiceQuotaCommand).map((c) => c.args[0].input)).toEqual([
      { ServiceCode: 'ec2', QuotaCode: 'L-1216C47A' },
    ]);
    destroyAwsClients(mocks.clients);
  });

  it('falls back to the default quota when none is applied; warns about quotas it does not check', async () => {
    // Arrange: GetServiceQuota "NoSuchResourceException" (no applied value); a G-family client.
    const mocks = setup();
    mocks.quotas.on(GetServiceQuotaCommand).rejects(
      Object.assign(new Error('no applied value'), {
        name: 'NoSuchResourceException',
        $metadata: { httpStatusCode: 400 },
      }),
    );
    mocks.quotas.on(GetAWSDefaultServiceQuotaCommand).resolves({ Quota: { QuotaCode: 'L-1216C47A', Value: 5 } });
    const s = spec({
      variants: [
        {
          name: 'std',
          instanceClass: 'db.r6g.large',
          az: 'a',
          clients: { count: 4, instanceType: 'c6i.large', placement: 'same-az' },
        },
        {
          name: 'gpu',
          instanceClass: 'db.r6g.large',
          az: 'b',
          clients: { count: 1, instanceType: 'g5.xlarge', placement: 'same-az' },
        },
      ],
    });

    // Act
    const report = await preflight(s, mocks);

    // Assert
    const quota = report.checks.find((c) => c.id === 'vcpu-quota')!;
    expect(quota.verdict).toBe('refuse');
    expect(quota.notes).toEqual([
      {
        level: 'warning',
        path: 'variants[1].clients.instanceType',
        message: expect.stringContaining('g5.xlarge draws on the "G and VT" On-Demand vCPU quota'),
      },
      {
        level: 'refused',
        path: expect.stringContaining('L-1216C47A'),
        message: expect.stringContaining(
          'the run needs 16 vCPUs of clients at once (the largest 2 cells, maxConcurrency 2), 0 vCPUs already run',
        ),
      },
    ]);
    destroyAwsClients(mocks.clients);
  });

  it('refuses an https download from subnets without a NAT route, and clients that cannot reach SSM', async () => {
    // Arrange: S3 gateway endpoint only.
    const mocks = setup();
    const isolated = await networkConfig({ nat: false, s3Endpoint: true, ssmEndpoints: false });

    // Act
    const report = await preflight(spec(), mocks, { stackName: 'AuroraBench', config: isolated });

    // Assert
    const subnetA = `stack AuroraBench: subnet ${isolated.subnetIdsByAz['us-east-1a']} (us-east-1a)`;
    const network = refusals(report).filter((r) => r.path.startsWith(subnetA));
    expect(network).toEqual([
      {
        path: subnetA,
        message: expect.stringMatching(
          new RegExp(
            /^clients there cannot reach Systems Manager .* or Secrets Manager .*no interface/.source +
              / endpoint for com\.amazonaws\.us-east-1\.ssm, com\.amazonaws\.us-east-1\.ssmmessages,/.source +
              / com\.amazonaws\.us-east-1\.ec2messages, com\.amazonaws\.us-east-1\.secretsmanager .*/.source +
              / has no default route/.source,
          ),
        ),
      },
      {
        path: `${subnetA}: aurora-bench.network.natGateways`,
        message: expect.stringMatching(
          new RegExp(
            /^clients download https:\/\/deb\.debian\.org\/debian at boot, but its route table/.source +
              / rtb-\S+ has no default route \(0\.0\.0\.0\/0\): give the VPC a NAT gateway/.source +
              / \(aurora-bench\.network\.natGateways 1, or a NAT route in existingVpc\): clients and/.source +
              / servers install their packages from it at boot$/.source,
          ),
        ),
      },
    ]);
    expect(report.checks.find((c) => c.id === 'network')!.verdict).toBe('refuse');
    destroyAwsClients(mocks.clients);
  });

  it('refuses subnets that reach neither S3 nor the internet', async () => {
    // Arrange: the SSM and Secrets Manager endpoints only.
    const mocks = setup();
    const noS3 = await networkConfig({ nat: false, s3Endpoint: false, ssmEndpoints: true });

    // Act
    const report = await preflight(spec(), mocks, { stackName: 'AuroraBench', config: noS3 });

    // Assert
    const subnetB = `stack AuroraBench: subnet ${noS3.subnetIdsByAz['us-east-1b']} (us-east-1b)`;
    expect(refusals(report).filter((r) => r.path === subnetB)).toEqual([
      {
        path: subnetB,
        message: expect.stringMatching(
          new RegExp(
            /^clients there cannot reach S3 \(the runner, their output, their ready marker\): no S3/.source +
              / gateway endpoint route or S3 interface endpoint, and its route table rtb-\S+ has no/.source +
              / default route/.source,
          ),
        ),
      },
    ]);
    destroyAwsClients(mocks.clients);
  });

  it('accepts an s3:// download through the S3 gateway endpoint only when the object exists', async () => {
    // Arrange: no NAT, the S3 and SSM endpoints; one mirrored tarball uploaded, one not.
    const mocks = setup();
    const endpointsOnly = await networkConfig({ nat: false, s3Endpoint: true, ssmEndpoints: true });
    await raw.s3.send(
      new PutObjectCommand({ Bucket: 'ab-preflight', Key: 'mirror/sysbench-1.0.20.tar.gz', Body: 'tarball' }),
    );
    const mirrored = {
      ...endpointsOnly,
      clientSourceUrls: { sysbench: 's3://ab-preflight/mirror/sysbench-1.0.20.tar.gz' },
    };
    const missing = { ...endpointsOnly, clientSourceUrls: { sysbench: 's3://ab-preflight/mirror/nope.tar.gz' } };

    // Act
    const ok = await preflight(spec(), mocks, { stackName: 'AuroraBench', config: mirrored });
    const refused = await preflight(spec(), mocks, { stackName: 'AuroraBench', config: missing });

    // Assert
    expect(ok.checks.find((c) => c.id === 'network')).toMatchObject({ verdict: 'ok', notes: [] });
    expect(refusals(refused)).toEqual([
      {
        path: 'stack AuroraBench: aurora-bench.clients.sysbenchSourceUrl',
        message:
          's3://ab-preflight/mirror/nope.tar.gz does not exist: upload the file there (aws s3 cp FILE ' +
          's3://ab-preflight/mirror/nope.tar.gz) or point aurora-bench.clients.sysbenchSourceUrl at it and redeploy',
      },
    ]);
    expect(mocks.operations()).toContain('HeadObjectCommand');
    expectReadOnly(mocks);
    destroyAwsClients(mocks.clients);
  });

  it('refuses a variant AZ without a subnet and a subnet that is not where the stack says', async () => {
    // Arrange: the stack lists us-east-1b's subnet under us-east-1c.
    const mocks = setup();
    const misfiled = {
      ...connected,
      subnetIdsByAz: {
        'us-east-1a': connected.subnetIdsByAz['us-east-1a']!,
        'us-east-1c': connected.subnetIdsByAz['us-east-1b']!,
      },
    };
    const s = spec({
      variants: [
        { name: 'a', instanceClass: 'db.r6g.large', az: 'a' },
        { name: 'd', instanceClass: 'db.r6g.large', az: 'd' },
      ],
    });

    // Act
    const report = await preflight(s, mocks, { stackName: 'AuroraBench', config: misfiled });

    // Assert
    expect(refusals(report).filter((r) => r.path.includes('subnet') || r.path.endsWith('.az'))).toEqual([
      {
        path: `stack AuroraBench: subnet ${connected.subnetIdsByAz['us-east-1b']} (us-east-1c)`,
        message: expect.stringMatching(/is in us-east-1b, not us-east-1c: fix aurora-bench\.network\.existingVpc/),
      },
      {
        path: 'variants[1].az',
        message:
          'AZ us-east-1d has no subnet of stack AuroraBench (configured: us-east-1a, us-east-1c): use one of those AZs',
      },
    ]);
    destroyAwsClients(mocks.clients);
  });

  it('refuses a missing stack and a spec for another region, and still runs every other check', async () => {
    // Arrange
    const mocks = setup();

    // Act
    const missing = await preflight(spec(), mocks, {
      stackName: 'Nope',
      problem: 'stack "Nope" not found (Stack with id Nope does not exist): deploy it with `npx cdk deploy`',
    });
    const otherRegion = await preflight(spec(), mocks, {
      stackName: 'AuroraBench',
      config: { ...connected, region: 'eu-west-1' },
    });

    // Assert
    expect(refusals(missing)).toEqual([
      { path: 'stack Nope', message: expect.stringContaining('deploy it with `npx cdk deploy`') },
    ]);
    expect(verdicts(missing)).toMatchObject({
      stack: 'refuse',
      'engine-version': 'ok',
      parameters: 'ok',
      network: 'warn',
      budget: 'ok',
    });
    expect(refusals(otherRegion)).toContainEqual({
      path: 'region',
      message:
        'the spec asks for region us-east-1 but stack AuroraBench is deployed in eu-west-1: set region to ' +
        'eu-west-1, or deploy the stack in us-east-1',
    });
    destroyAwsClients(mocks.clients);
  });

  it('refuses a run whose estimate exceeds budget.maxUsd', async () => {
    // Arrange
    const mocks = setup();

    // Act
    const report = await preflight(spec({ budget: { maxUsd: 0.01 } }), mocks);

    // Assert
    expect(refusals(report)).toEqual([
      {
        path: 'budget.maxUsd',
        message: expect.stringMatching(/^estimated cost \$[\d.]+ exceeds budget\.maxUsd \$0\.01/),
      },
    ]);
    destroyAwsClients(mocks.clients);
  });
});

describe('account preflight: what it cannot tell', () => {
  it('says the service-linked role will be created when it does not exist yet', async () => {
    // Arrange
    const mocks = setup();
    await iam.send(new DeleteRoleCommand({ RoleName: SLR.RoleName }));

    // Act
    let report: PreflightReport;
    try {
      report = await preflight(spec(), mocks);
    } finally {
      await iam.send(
        new CreateRoleCommand({
          ...SLR,
          AssumeRolePolicyDocument: JSON.stringify({ Version: '2012-10-17', Statement: [] }),
        }),
      );
    }

    // Assert
    expect(report.checks.find((c) => c.id === 'service-linked-role')).toMatchObject({
      verdict: 'ok',
      summary:
        'AWSServiceRoleForRDS does not exist yet: RDS creates it with the first cluster, through the workflow ' +
        "Task role's iam:CreateServiceLinkedRole (rds.amazonaws.com) that the stack grants",
    });
    destroyAwsClients(mocks.clients);
  });

  it('warns, naming the IAM action, when a read is denied, and does not take it for "not implemented"', async () => {
    // Arrange
    const mocks = setup();
    mocks.rds
      .on(DescribeDBEngineVersionsCommand)
      .rejects(
        Object.assign(new Error('not authorized'), { name: 'AccessDenied', $metadata: { httpStatusCode: 403 } }),
      );

    // Act
    const report = await preflight(spec(), mocks);

    // Assert
    expect(report.checks.find((c) => c.id === 'engine-version')).toMatchObject({
      verdict: 'warn',
      notes: [
        {
          level: 'warning',
          path: 'engine.version',
          message:
            'not checked: rds:DescribeDBEngineVersions was denied (AccessDenied): allow it to the caller to ' +
            'have this checked',
        },
      ],
    });
    destroyAwsClients(mocks.clients);
  });

  it('on moto alone (nothing mocked) warns for what moto does not implement and refuses nothing', async () => {
    // Arrange
    const clients = makeAwsClients({
      region: REGION,
      endpoint: moto.endpoint,
      credentials: CREDENTIALS,
      maxAttempts: 1,
    });
    const before = (await raw.ec2.send(new DescribeInstancesCommand({}))).Reservations?.length ?? 0;
    const s = spec({
      variants: [
        { name: 'tuned', instanceClass: 'db.r6g.large', az: 'a', clusterParameters: { binlog_format: 'ROW' } },
      ],
    });

    // Act
    const report = await runAwsPreflight({
      plan: planRun(s, { backend: 'aws' }),
      spec: s,
      clients,
      deployment: { stackName: 'AuroraBench', config: connected },
      prices: bundledPrices(),
    });

    // Assert
    expect(verdicts(report)).toMatchObject({
      'engine-version': 'warn',
      'instance-classes': 'warn',
      parameters: 'warn',
      'vcpu-quota': 'warn',
      network: 'ok',
      'client-instances': 'ok',
    });
    expect(refusals(report)).toEqual([]);
    expect(preflightNotes(report).find((n) => n.path === 'engine.version')!.message).toBe(
      'not checked: rds:DescribeDBEngineVersions is not implemented by this endpoint',
    );
    expect(preflightNotes(report)).toContainEqual({
      level: 'warning',
      path: 'account: RDS engine defaults of aurora-mysql8.0',
      message: expect.stringMatching(
        /^not checked: rds:DescribeEngineDefault(Cluster)?Parameters is not implemented by this endpoint$/,
      ),
    });
    expect((await raw.ec2.send(new DescribeInstancesCommand({}))).Reservations?.length ?? 0).toBe(before);
    destroyAwsClients(clients);
  });
});

describe('PlanRun (an execution started from the console) runs the same preflight', () => {
  it("refuses the execution with every refusal, from the Lambda's configuration; writes no lake row", async () => {
    // Arrange: the Task Lambda's deps as lambdas/plan-run builds them, from the stack's environment.
    const mocks = setup({ engineVersions: [] });
    const deps = await buildAwsTaskDeps(awsConfigToEnv(connected), tracer, { clients: mocks.clients });
    const input = spec({ variants: [{ name: 'nowhere', instanceClass: 'db.r6g.large', az: 'd' }] });

    // Act
    const attempt = planRunTask(deps, { spec: input, runId: 'console-start-1' });

    // Assert
    await expect(attempt).rejects.toMatchObject({
      name: 'InvalidSpecError',
      message: expect.stringMatching(
        new RegExp(
          /engine\.version: aurora-mysql 8\.0\.mysql_aurora\.3\.08\.0 .* is not/.source +
            / offered[\s\S]*variants\[0\]\.az: AZ us-east-1d has no subnet of the workflow stack/.source,
        ),
      ),
    });
    const lake = await raw.s3.send(
      new ListObjectsV2Command({ Bucket: connected.bucket, Prefix: connected.lakePrefix }),
    );
    expect((lake.Contents ?? []).filter((o) => o.Key!.includes('console-start-1'))).toEqual([]);
    expectReadOnly(mocks);
    destroyAwsClients(mocks.clients);
  });

  it('starts a run the preflight does not refuse, and keeps what it could not check in the run manifest', async () => {
    // Arrange: only moto, which implements neither DescribeDBEngineVersions nor the ec2 quotas.
    const clients = makeAwsClients({
      region: REGION,
      endpoint: moto.endpoint,
      credentials: CREDENTIALS,
      maxAttempts: 1,
    });
    const deps = await buildAwsTaskDeps(awsConfigToEnv(connected), tracer, { clients });

    // Act
    const out = await planRunTask(deps, { spec: spec({ budget: undefined }), runId: 'console-start-2' });

    // Assert
    const listed = await raw.s3.send(
      new ListObjectsV2Command({ Bucket: connected.bucket, Prefix: `${connected.lakePrefix}tables/runs/` }),
    );
    const key = (listed.Contents ?? []).map((o) => o.Key!).find((k) => k.includes('console-start-2'))!;
    const row = JSON.parse(
      (
        await (
          await raw.s3.send(new GetObjectCommand({ Bucket: connected.bucket, Key: key }))
        ).Body!.transformToString()
      ).trim(),
    ) as { notes: string };
    expect(out.run.runId).toBe('console-start-2');
    expect(JSON.parse(row.notes)).toEqual(
      expect.arrayContaining([
        {
          level: 'warning',
          path: 'engine.version',
          message: 'not checked: rds:DescribeDBEngineVersions is not implemented by this endpoint',
        },
        {
          level: 'warning',
          path: expect.stringContaining('L-1216C47A'),
          message: expect.stringMatching(/^not checked: /),
        },
      ]),
    );
    destroyAwsClients(clients);
  });
});
