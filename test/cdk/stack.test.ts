/**
 * Per-construct assertions on the synthesized template (bundling skipped): what matters for each
 * concern (encryption, projection properties, runtime, IAM scopes, schedule target and input).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Match } from 'aws-cdk-lib/assertions';
import { AWS_CONFIG_ENV } from '../../core/backends/aws/config';
import { cellNames } from '../../core/backends/aws/names';
import { runnerBundleDigest } from '../../core/backends/aws/runner-command';
import { LAKE_COLUMNS, LAKE_TABLES } from '../../core/lake/schema';
import {
  athenaViewSql,
  jsonTableName,
  parquetDataColumns,
  STEP_TABLES,
  type StepTable,
} from '../../core/lake/athena-storage';
import { TASK_NAMES, type TaskName } from '../../core/workflow/task-names';
import { REGRESSIONS_METRIC, VERDICT_METRIC_NAMESPACE } from '../../core/backends/aws/verdict-alerts';
import { EXPIRES_AT_TAG, RDS_NAME_PREFIX, RUN_ID_TAG } from '../../lib/handler-environment';
import { renderedBootUserData } from '../../lib/client-user-data';
import {
  actionsOf,
  nightlyOnConfig,
  PROJECT_ROOT,
  render,
  repoContextConfig,
  resourcesOf,
  statementsOfRole,
  synthTestApp,
  type TestApp,
} from './cdk-fixture';

let t: TestApp;
beforeAll(() => {
  t = synthTestApp(nightlyOnConfig());
});
afterAll(() => t.dispose());

function logicalIdOf(path: string): string {
  const child = t.stack.node.findAll().find((c) => c.node.path === `${t.stack.stackName}/${path}`);
  if (!child) throw new Error(`no construct at ${path}`);
  return t.stack.getLogicalId(child as never);
}

/**
 * The statements of one Task function's role (each function has
 * its own: lib/backend-permissions.ts grantTaskPermissions).
 */
function taskRoleStatements(task: TaskName) {
  return statementsOfRole(t.template, logicalIdOf(`TaskRole-${task}/Resource`));
}

describe('Network', () => {
  test('a VPC with private subnets in two AZs and the SSM, Secrets Manager and S3 endpoints', () => {
    const { template } = t;
    template.resourceCountIs('AWS::EC2::VPC', 1);
    const privateSubnets = resourcesOf(template, 'AWS::EC2::Subnet').filter(
      ([, s]) => s.Properties['MapPublicIpOnLaunch'] === false,
    );
    expect(privateSubnets).toHaveLength(2);
    const azs = privateSubnets.map(([, s]) => JSON.stringify(s.Properties['AvailabilityZone']));
    expect(new Set(azs).size).toBe(2);

    const services = resourcesOf(template, 'AWS::EC2::VPCEndpoint').map(
      ([, e]) => `${render(e.Properties['VpcEndpointType'])}:${render(e.Properties['ServiceName'])}`,
    );
    for (const svc of ['ssm', 'ssmmessages', 'ec2messages', 'secretsmanager']) {
      expect(services).toContainEqual(expect.stringMatching(new RegExp(`^Interface:com\\.amazonaws\\..*\\.${svc}$`)));
    }
    expect(services).toContainEqual(expect.stringMatching(/^Gateway:.*s3/));
  });

  test('only the client security group reaches the databases, on the MySQL port', () => {
    const { template } = t;
    const dbSg = logicalIdOf('Network/DatabaseSecurityGroup/Resource');
    const clientSg = logicalIdOf('Network/ClientSecurityGroup/Resource');
    const dbGroup = template.toJSON().Resources[dbSg];
    expect(dbGroup.Properties.SecurityGroupIngress ?? []).toEqual([]);
    const ingress = resourcesOf(template, 'AWS::EC2::SecurityGroupIngress').filter(([, r]) =>
      JSON.stringify(r.Properties['GroupId']).includes(dbSg),
    );
    expect(ingress).toHaveLength(1);
    expect(ingress[0]![1].Properties).toMatchObject({
      IpProtocol: 'tcp',
      FromPort: 3306,
      ToPort: 3306,
      SourceSecurityGroupId: { 'Fn::GetAtt': [clientSg, 'GroupId'] },
    });
  });

  test('the DB subnet group spans the private subnets', () => {
    t.template.hasResourceProperties('AWS::RDS::DBSubnetGroup', {
      DBSubnetGroupName: 'aurora-bench-db',
      SubnetIds: [
        { Ref: logicalIdOf('Network/Vpc/privateSubnet1/Subnet') },
        { Ref: logicalIdOf('Network/Vpc/privateSubnet2/Subnet') },
      ],
    });
  });

  test('VPC flow logs are on', () => {
    t.template.resourceCountIs('AWS::EC2::FlowLog', 1);
  });
});

describe('Network with an existing VPC', () => {
  let existing: TestApp;
  beforeAll(() => {
    existing = synthTestApp({
      ...repoContextConfig(),
      network: {
        existingVpc: {
          vpcId: 'vpc-0a1b2c3d4e5f60718',
          availabilityZones: ['eu-central-1a', 'eu-central-1b'],
          privateSubnetIds: ['subnet-0a1b2c3d4e5f6aaaa', 'subnet-0a1b2c3d4e5f6bbbb'],
          privateRouteTableIds: ['rtb-0a1b2c3d4e5f6aaaa', 'rtb-0a1b2c3d4e5f6bbbb'],
        },
      },
    });
  });
  afterAll(() => existing.dispose());

  test('creates no VPC and hands the given subnets per AZ to the handlers', () => {
    existing.template.resourceCountIs('AWS::EC2::VPC', 0);
    existing.template.hasResourceProperties('AWS::RDS::DBSubnetGroup', {
      SubnetIds: ['subnet-0a1b2c3d4e5f6aaaa', 'subnet-0a1b2c3d4e5f6bbbb'],
    });
    const fn = resourcesOf(existing.template, 'AWS::Lambda::Function').find(([id]) => id.includes('Taskplanrun'))!;
    const env = (fn[1].Properties['Environment'] as { Variables: Record<string, unknown> }).Variables;
    expect(JSON.parse(render(env[AWS_CONFIG_ENV.subnetIdsByAz]))).toEqual({
      'eu-central-1a': 'subnet-0a1b2c3d4e5f6aaaa',
      'eu-central-1b': 'subnet-0a1b2c3d4e5f6bbbb',
    });
  });
});

describe('ResultsLake', () => {
  test('the bucket is encrypted, private, TLS-only and expires raw output', () => {
    const { template } = t;
    const bucketId = logicalIdOf('Lake/Bucket/Resource');
    const bucket = template.toJSON().Resources[bucketId].Properties;
    expect(
      bucket.BucketEncryption.ServerSideEncryptionConfiguration[0].ServerSideEncryptionByDefault.SSEAlgorithm,
    ).toBe('AES256');
    expect(bucket.PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    expect(bucket.LifecycleConfiguration.Rules).toContainEqual(
      expect.objectContaining({ Prefix: 'raw/', ExpirationInDays: 90, Status: 'Enabled' }),
    );
    expect(bucket.LoggingConfiguration.DestinationBucketName).toEqual({ Ref: logicalIdOf('Lake/AccessLogs/Resource') });
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: bucketId },
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
  });

  test.each(LAKE_TABLES)('table %s: the row columns, JSON SerDe, dt projected as a date', (table) => {
    const tables = resourcesOf(t.template, 'AWS::Glue::Table').map(
      ([, r]) => r.Properties['TableInput'] as Record<string, any>,
    );
    // A step table's JSON Lines table is <table>_json: <table> is the view over it and its Parquet table.
    const name = (STEP_TABLES as readonly string[]).includes(table) ? jsonTableName(table as StepTable) : table;
    const input = tables.find((i) => i['Name'] === name)!;
    expect(input).toBeDefined();
    const sd = input['StorageDescriptor'];
    expect(sd.Columns.map((c: { Name: string }) => c.Name)).toEqual(Object.keys(LAKE_COLUMNS[table]));
    expect(sd.Columns.map((c: { Name: string }) => c.Name)).not.toContain('dt');
    expect(sd.SerdeInfo.SerializationLibrary).toBe('org.openx.data.jsonserde.JsonSerDe');
    expect(input['PartitionKeys']).toEqual([{ Name: 'dt', Type: 'string' }]);
    expect(input['Parameters']).toMatchObject({
      'projection.enabled': 'true',
      'projection.dt.type': 'date',
      'projection.dt.format': 'yyyy-MM-dd',
      'projection.dt.range': '2024-01-01,NOW',
    });
    const bucketId = logicalIdOf('Lake/Bucket/Resource');
    expect(render(input['Parameters']['storage.location.template'])).toBe(
      `s3://<${bucketId}>/tables/${table}/dt=\${dt}/`,
    );
    expect(render(sd.Location)).toBe(`s3://<${bucketId}>/tables/${table}/`);
  });

  test.each(STEP_TABLES)(
    'table %s_parquet: the row columns but run_id, Parquet SerDe, partitions (dt, run_id) registered per run, ' +
      'not projected',
    (table) => {
      const tables = resourcesOf(t.template, 'AWS::Glue::Table').map(
        ([, r]) => r.Properties['TableInput'] as Record<string, any>,
      );
      const input = tables.find((i) => i['Name'] === `${table}_parquet`)!;
      expect(input).toBeDefined();
      const sd = input['StorageDescriptor'];
      expect(sd.Columns.map((c: { Name: string }) => c.Name)).toEqual(
        Object.keys(LAKE_COLUMNS[table]).filter((c) => c !== 'run_id'),
      );
      expect(sd.Columns.map((c: { Name: string }) => c.Name)).toEqual(parquetDataColumns(table));
      expect(sd.Columns.map((c: { Type: string }) => c.Type)).toEqual(
        parquetDataColumns(table).map((c) => LAKE_COLUMNS[table][c]),
      );
      expect(sd.SerdeInfo.SerializationLibrary).toBe('org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe');
      expect(sd.InputFormat).toBe('org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat');
      expect(input['PartitionKeys']).toEqual([
        { Name: 'dt', Type: 'string' },
        { Name: 'run_id', Type: 'string' },
      ]);
      expect(input['Parameters']['projection.enabled']).toBeUndefined();
      expect(render(sd.Location)).toBe(`s3://<${logicalIdOf('Lake/Bucket/Resource')}>/compacted/${table}/`);
    },
  );

  test('the Athena workgroup enforces its result location, encryption and bytes-scanned cutoff', () => {
    const wg = resourcesOf(t.template, 'AWS::Athena::WorkGroup')[0]![1].Properties as Record<string, any>;
    const cfg = wg['WorkGroupConfiguration'];
    expect(wg['Name']).toBe('aurora-bench');
    expect(cfg.EnforceWorkGroupConfiguration).toBe(true);
    expect(cfg.BytesScannedCutoffPerQuery).toBe(10240 * 1024 * 1024);
    expect(cfg.ResultConfiguration.EncryptionConfiguration).toEqual({ EncryptionOption: 'SSE_S3' });
    expect(render(cfg.ResultConfiguration.OutputLocation)).toBe(
      `s3://<${logicalIdOf('Lake/Bucket/Resource')}>/athena-results/`,
    );
  });

  test(
    'one named query per view (the step tables over both formats, then the shared views), in creation ' +
      'order, with the view SQL',
    () => {
      const views = athenaViewSql(join(PROJECT_ROOT, 'core', 'lake', 'sql'));
      const queries = resourcesOf(t.template, 'AWS::Athena::NamedQuery')
        .map(([, q]) => q.Properties as { Name: string; QueryString: string; Database: string; WorkGroup: string })
        .sort((a, b) => a.Name.localeCompare(b.Name));
      expect(queries.map((q) => q.QueryString)).toEqual(views.map((v) => v.sql));
      expect(queries.every((q) => q.Database === 'aurora_bench' && q.WorkGroup === 'aurora-bench')).toBe(true);
    },
  );
});

describe('Workflow', () => {
  const taskFunctions = () =>
    resourcesOf(t.template, 'AWS::Lambda::Function').filter(([id]) => id.startsWith('WorkflowTask'));

  test('one NodejsFunction per Task on Node.js 22 with tracing, Powertools and the backend environment', () => {
    const fns = taskFunctions();
    expect(fns).toHaveLength(TASK_NAMES.length);
    for (const [, fn] of fns) {
      const p = fn.Properties as Record<string, any>;
      expect(p['Runtime']).toBe('nodejs22.x');
      expect(p['Handler']).toBe('index.handler');
      expect(p['TracingConfig']).toEqual({ Mode: 'Active' });
      const vars = p['Environment'].Variables as Record<string, unknown>;
      expect(vars['POWERTOOLS_SERVICE_NAME']).toBe('aurora-bench');
      expect(vars['POWERTOOLS_METRICS_NAMESPACE']).toBe('AuroraBench');
      for (const name of Object.values(AWS_CONFIG_ENV)) {
        if (name === AWS_CONFIG_ENV.launchTemplateIdX86 || name === AWS_CONFIG_ENV.launchTemplateIdArm) continue;
        // Left unset by the stack: RDS's 5-minute wait after a
        // parameter group change applies (the rehearsal shortens it).
        if (name === AWS_CONFIG_ENV.parameterGroupSettleS) continue;
        // Left unset too: Aurora's 5-minute volume I/O datapoints apply (the rehearsal shortens them).
        if (name === AWS_CONFIG_ENV.volumeMetricsPeriodS) continue;
        // And CloudWatch's 1-minute periods for the other metrics (the rehearsal shortens them).
        if (name === AWS_CONFIG_ENV.metricsPeriodS) continue;
        expect(vars).toHaveProperty([name]);
      }
      expect(vars).toHaveProperty([AWS_CONFIG_ENV.launchTemplateIdX86]);
      expect(vars).toHaveProperty([AWS_CONFIG_ENV.launchTemplateIdArm]);
      expect(render(vars[AWS_CONFIG_ENV.runnerS3Uri])).toMatch(/^s3:\/\/<Lake.*>\/runner\/$/);
      // The digest of what RunnerDeployment uploads: a job copies the runner only when the client's differs.
      expect(vars[AWS_CONFIG_ENV.runnerDigest]).toBe(runnerBundleDigest(join(PROJECT_ROOT, 'client')));
    }
  });

  test('the state machine inlines the ASL, placeholders replaced by function ARNs, logging ALL, tracing on', () => {
    const [, sm] = resourcesOf(t.template, 'AWS::StepFunctions::StateMachine')[0]!;
    const p = sm.Properties as Record<string, any>;
    expect(p['DefinitionS3Location']).toBeUndefined();
    expect(p['LoggingConfiguration']).toMatchObject({ Level: 'ALL', IncludeExecutionData: true });
    expect(p['TracingConfiguration']).toEqual({ Enabled: true });
    const definition = render(p['DefinitionString']);
    expect(definition).not.toMatch(/\$\{[A-Za-z_][A-Za-z0-9_]*\}/);
    const parsed = JSON.parse(
      definition.replace(/<([A-Za-z0-9]+)\.Arn>/g, 'arn:aws:lambda:us-east-1:123456789012:function:$1'),
    );
    expect(parsed.StartAt).toBe('PlanRun');
    for (const [id] of taskFunctions()) expect(definition).toContain(`<${id}.Arn>`);
  });

  test('every Lambda times out before the Task state that calls it', () => {
    const asl = JSON.parse(readFileSync(join(PROJECT_ROOT, 'state-machines', 'benchmark.asl.json'), 'utf8'));
    const taskTimeouts: number[] = [];
    const walk = (states: Record<string, any>) => {
      for (const state of Object.values(states)) {
        if (state.Type === 'Task') taskTimeouts.push(state.TimeoutSeconds ?? 99999999);
        if (state.ItemProcessor) walk(state.ItemProcessor.States);
        if (state.Iterator) walk(state.Iterator.States);
        for (const branch of state.Branches ?? []) walk(branch.States);
      }
    };
    walk(asl.States);
    expect(taskTimeouts.length).toBeGreaterThan(0);

    const lambdaTimeouts = taskFunctions().map(([, fn]) => fn.Properties['Timeout'] as number);

    expect(Math.max(...lambdaTimeouts)).toBeLessThan(Math.min(...taskTimeouts));
  });

  test('the state machine role invokes exactly the Task functions and runs its own child executions', () => {
    const [roleId] = resourcesOf(t.template, 'AWS::IAM::Role').find(([id]) =>
      id.startsWith('WorkflowStateMachineRole'),
    )!;
    const statements = statementsOfRole(t.template, roleId);
    const invoke = statements.find((s) => actionsOf(s).includes('lambda:InvokeFunction'))!;
    const invoked = (invoke.Resource as unknown[]).map(render).sort();
    expect(invoked).toEqual(
      taskFunctions()
        .map(([id]) => `<${id}.Arn>`)
        .sort(),
    );
    const start = statements.find((s) => actionsOf(s).includes('states:StartExecution'))!;
    expect(render(start.Resource)).toMatch(/:stateMachine:aurora-bench-benchmark$/);
    const follow = statements.find((s) => actionsOf(s).includes('states:DescribeExecution'))!;
    expect((follow.Resource as unknown[]).map(render)).toContainEqual(
      expect.stringMatching(/:execution:aurora-bench-benchmark\/\*$/),
    );
  });

  test('the Task roles are scoped by the names and tags of what a run creates', () => {
    // Creation and launches: ProvisionCell's role (databases, self-managed servers) and StartClients' (clients).
    const provision = taskRoleStatements('provision-cell');
    const start = taskRoleStatements('start-clients');
    const statements = [
      ...provision,
      ...start,
      ...taskRoleStatements('run-step'),
      ...taskRoleStatements('teardown-cell'),
      ...taskRoleStatements('plan-run'),
    ];
    const bySid = (sid: string) => statements.find((s) => s.Sid === sid)!;

    // The RDS name prefix is the backend's.
    expect(cellNames('run-1', 'cell-1').clusterId.startsWith(RDS_NAME_PREFIX)).toBe(true);
    const create = bySid('CreateRunDatabases');
    expect((create.Resource as unknown[]).map(render).every((r) => r.includes(`:${RDS_NAME_PREFIX}*`))).toBe(true);
    expect(create.Condition).toEqual({ Null: { [`aws:RequestTag/${RUN_ID_TAG}`]: 'false' } });

    const run = bySid('RunTaggedClients');
    expect(actionsOf(run)).toEqual(['ec2:RunInstances']);
    expect(run.Condition).toEqual({ Null: { [`aws:RequestTag/${RUN_ID_TAG}`]: 'false' } });
    expect(bySid('TerminateRunClients').Condition).toEqual({ Null: { [`aws:ResourceTag/${RUN_ID_TAG}`]: 'false' } });
    expect(bySid('RunCommandOnRunClients').Condition).toEqual({ Null: { [`ssm:resourceTag/${RUN_ID_TAG}`]: 'false' } });
    // SendCommand lists bucket among its resource types: the commands' output goes to the lake.
    expect(render(bySid('RunCommandOutputToLake').Resource)).toBe(`<${logicalIdOf('Lake/Bucket/Resource')}.Arn>`);
    expect((bySid('ResolveClientAmiParameter').Resource as unknown[]).map(render).sort()).toEqual([
      'arn:<AWS::Partition>:ssm:<AWS::Region>::parameter/aws/service/debian/release/bookworm/latest/amd64',
      'arn:<AWS::Partition>:ssm:<AWS::Region>::parameter/aws/service/debian/release/bookworm/latest/arm64',
    ]);
    expect(bySid('TagClientsAtLaunch').Condition).toEqual({ StringEquals: { 'ec2:CreateAction': 'RunInstances' } });
    // Each launching role passes only the instance role of what it launches.
    const pass = bySid('PassClientRole');
    expect(render(pass.Resource)).toBe(`<${logicalIdOf('Clients/Role/Resource')}.Arn>`);
    expect(render(bySid('PassServerRole').Resource)).toBe(`<${logicalIdOf('Servers/Role/Resource')}.Arn>`);
    expect(start.map((s) => s.Sid)).not.toContain('PassServerRole');
    expect(provision.map((s) => s.Sid)).not.toContain('PassClientRole');
    // A self-managed cell's secret: created with the run tag on the request, deleted only with it on the secret.
    expect(actionsOf(bySid('CreateRunSecrets'))).toEqual(['secretsmanager:CreateSecret', 'secretsmanager:TagResource']);
    expect(render(bySid('CreateRunSecrets').Resource)).toMatch(
      /:secretsmanager:<AWS::Region>:<AWS::AccountId>:secret:ab-\*$/,
    );
    expect(bySid('CreateRunSecrets').Condition).toEqual({ Null: { [`aws:RequestTag/${RUN_ID_TAG}`]: 'false' } });
    expect(bySid('DeleteRunSecrets').Condition).toEqual({ Null: { [`aws:ResourceTag/${RUN_ID_TAG}`]: 'false' } });
    expect(pass.Condition).toEqual({ StringEquals: { 'iam:PassedToService': 'ec2.amazonaws.com' } });

    // The preflight asks RDS whether the engine version is offered.
    expect(
      taskRoleStatements('plan-run')
        .filter((s) => s.Sid === 'DescribeRds')
        .flatMap(actionsOf),
    ).toContain('rds:DescribeDBEngineVersions');

    // A new account's first cluster makes RDS create its service-linked role with this role's permission.
    const slr = bySid('CreateRdsServiceLinkedRole');
    expect(actionsOf(slr)).toEqual(['iam:CreateServiceLinkedRole']);
    expect(render(slr.Resource)).toBe(
      'arn:<AWS::Partition>:iam::<AWS::AccountId>:role/aws-service-role/rds.amazonaws.com/AWSServiceRoleForRDS',
    );
    expect(slr.Condition).toEqual({ StringEquals: { 'iam:AWSServiceName': 'rds.amazonaws.com' } });
    // ManageMasterUserPassword's kms:DescribeKey: this account's keys in this Region, no alias condition.
    const describeKey = bySid('DescribeSecretsManagerKey');
    expect(actionsOf(describeKey)).toEqual(['kms:DescribeKey']);
    expect(render(describeKey.Resource)).toBe('arn:<AWS::Partition>:kms:<AWS::Region>:<AWS::AccountId>:key/*');
    expect(describeKey.Condition).toBeUndefined();

    // Modifying and deleting the run's databases require the run tag on them.
    for (const a of [
      'rds:ModifyDBClusterParameterGroup',
      'rds:ModifyDBParameterGroup',
      'rds:DeleteDBCluster',
      'rds:DeleteDBInstance',
      'rds:DeleteDBClusterParameterGroup',
      'rds:DeleteDBParameterGroup',
    ]) {
      const granting = statements.filter((s) => actionsOf(s).includes(a));
      expect(granting.length).toBeGreaterThan(0);
      for (const s of granting)
        expect({ a, condition: s.Condition }).toEqual({
          a,
          condition: { Null: { [`aws:ResourceTag/${RUN_ID_TAG}`]: 'false' } },
        });
    }

    // Every mutating statement names its resources; only describe-style calls take "*", and
    // PutMetricData (no resource-level permission) only under its namespace condition.
    const unscoped = statements.filter((s) => s.Resource === '*' && s.Condition === undefined).flatMap(actionsOf);
    expect(unscoped.filter((a) => !/:(Describe|Get|List)|xray:Put|ssm:CancelCommand/.test(a))).toEqual([]);
    const s3 = statements.filter((s) => actionsOf(s).some((a) => a.startsWith('s3:')));
    for (const s of s3) expect(render(s.Resource)).toContain(logicalIdOf('Lake/Bucket/Resource'));
  });
});

describe('Alerts', () => {
  test('the regression topic: e-mail subscriptions from the context, AWS managed key, TLS only; Tasks know it', () => {
    // Arrange: the repository's context with two addresses
    const withEmails = synthTestApp({ ...repoContextConfig(), alerts: { emails: ['a@example.com', 'b@example.org'] } });
    try {
      const topicId = withEmails.stack.getLogicalId(withEmails.stack.alerts.topic.node.defaultChild as never);

      // Act
      const subscriptions = resourcesOf(withEmails.template, 'AWS::SNS::Subscription').map(([, s]) => [
        s.Properties['Protocol'],
        s.Properties['Endpoint'],
        render(s.Properties['TopicArn']),
      ]);
      const topic = withEmails.template.toJSON().Resources[topicId];
      const policies = resourcesOf(withEmails.template, 'AWS::SNS::TopicPolicy').map(([, p]) =>
        JSON.stringify(p.Properties['PolicyDocument']),
      );
      const env = resourcesOf(withEmails.template, 'AWS::Lambda::Function').map(
        ([, f]) =>
          (f.Properties['Environment'] as { Variables?: Record<string, unknown> } | undefined)?.Variables?.[
            AWS_CONFIG_ENV.alertTopicArn
          ],
      );

      // Assert
      expect(subscriptions).toEqual([
        ['email', 'a@example.com', `<${topicId}>`],
        ['email', 'b@example.org', `<${topicId}>`],
      ]);
      expect(render(topic.Properties.KmsMasterKeyId)).toMatch(/alias\/aws\/sns$/);
      expect(policies.some((p) => p.includes('aws:SecureTransport'))).toBe(true);
      // Every Task function and the sweeper share the backend environment.
      expect(env.filter((v) => v !== undefined).map((v) => render(v))).toEqual(
        [...TASK_NAMES, 'sweeper'].map(() => `<${topicId}>`),
      );
    } finally {
      withEmails.dispose();
    }
    // Without addresses (the repository's cdk.json) the topic has no subscription.
    t.template.resourceCountIs('AWS::SNS::Subscription', 0);
  });

  test("an alarm on the latest run's regressions that keeps its state between runs", () => {
    const alarms = resourcesOf(t.template, 'AWS::CloudWatch::Alarm').filter(
      ([, a]) => a.Properties['Namespace'] === VERDICT_METRIC_NAMESPACE,
    );

    expect(alarms).toHaveLength(1);
    expect(alarms[0]![1].Properties).toMatchObject({
      MetricName: REGRESSIONS_METRIC,
      Statistic: 'Maximum',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 1,
      TreatMissingData: 'ignore',
    });
    // The Task publishes the count without dimensions (verdict-alerts.ts): the alarm names none.
    expect(alarms[0]![1].Properties['Dimensions']).toBeUndefined();
  });

  test(
    "ComputeVerdicts' role may put events on the default bus, publish to the topic only, and put metrics in " +
      'the verdicts namespace only',
    () => {
      const statements = taskRoleStatements('compute-verdicts');
      const topicId = t.stack.getLogicalId(t.stack.alerts.topic.node.defaultChild as never);
      const granting = (action: string) => statements.filter((s) => actionsOf(s).includes(action));

      expect(granting('events:PutEvents').map((s) => render(s.Resource))).toEqual([
        expect.stringMatching(/:events:<AWS::Region>:<AWS::AccountId>:event-bus\/default$/),
      ]);
      expect(granting('sns:Publish').map((s) => render(s.Resource))).toEqual([`<${topicId}>`]);
      expect(granting('cloudwatch:PutMetricData').map((s) => s.Condition)).toEqual([
        { StringEquals: { 'cloudwatch:namespace': VERDICT_METRIC_NAMESPACE } },
      ]);
      expect(granting('athena:StartQueryExecution').map((s) => render(s.Resource))).toEqual([
        expect.stringMatching(/:athena:<AWS::Region>:<AWS::AccountId>:workgroup\/aurora-bench$/),
      ]);
    },
  );
});

describe('Clients', () => {
  test("a launch template per architecture from Debian's public SSM parameter, IMDSv2, encrypted root volume", () => {
    const lts = resourcesOf(t.template, 'AWS::EC2::LaunchTemplate')
      .map(([, lt]) => lt.Properties as Record<string, any>)
      .filter((lt) => String(lt['LaunchTemplateName']).includes('-client-'));
    expect(lts.map((lt) => lt['LaunchTemplateName']).sort()).toEqual([
      'aurora-bench-client-arm64',
      'aurora-bench-client-x86_64',
    ]);
    for (const lt of lts) {
      const data = lt['LaunchTemplateData'];
      const arch = lt['LaunchTemplateName'].endsWith('arm64') ? 'arm64' : 'x86_64';
      expect(data.ImageId).toBe(
        `resolve:ssm:/aws/service/debian/release/bookworm/latest/${arch === 'arm64' ? 'arm64' : 'amd64'}`,
      );
      expect(data.MetadataOptions.HttpTokens).toBe('required');
      // The dead-man's switch: expires-at readable from the metadata, and a shutdown terminates.
      expect(data.MetadataOptions.InstanceMetadataTags).toBe('enabled');
      expect(data.InstanceInitiatedShutdownBehavior).toBe('terminate');
      const script = render(data.UserData['Fn::Base64']);
      expect(script).toContain(`/meta-data/tags/instance/${EXPIRES_AT_TAG}`);
      expect(script.indexOf('shutdown -h')).toBeGreaterThan(-1);
      expect(script.indexOf('shutdown -h')).toBeLessThan(
        script.indexOf('apt-get -q -o DPkg::Lock::Timeout=900 -o Acquire::Retries=5 install'),
      );
      expect(data.BlockDeviceMappings[0].Ebs).toMatchObject({ Encrypted: true, VolumeType: 'gp3' });
      expect(render(data.IamInstanceProfile.Arn)).toBe(`<${logicalIdOf('Clients/InstanceProfile/Resource')}.Arn>`);
      expect(render(data.SecurityGroupIds)).toBe(`<${logicalIdOf('Network/ClientSecurityGroup/Resource')}.GroupId>`);
      const userData = render(data.UserData['Fn::Base64']);
      // Debian's packages, then the runner (it carries the readiness script), then the SSM agent, then the proof.
      expect(userData).toMatch(/RUNNER_S3_URI='s3:\/\/<Lake.*>\/runner\/'/);
      const order = [
        'Acquire::Retries=5 install -y --no-install-recommends sysbench awscli nodejs',
        'aws s3 cp --only-show-errors --recursive "$RUNNER_S3_URI"',
        'dpkg -i /tmp/amazon-ssm-agent.deb',
        '/client/client-ready.sh" --marker-uri "$ready_marker_uri"',
      ].map((s) => userData.lastIndexOf(s));
      expect(order.every((at, i) => at > (order[i - 1] ?? -1))).toBe(true);
      expect(userData).not.toMatch(/\bdnf\b|install-sysbench/);
      expect(userData).toMatch(/ready_marker_uri="s3:\/\/<Lake.*>\/clients\/\$\{instance_id\}\/ready\.json"/);
      // Every client path under the client home (contract with the SSM commands).
      expect(userData.split('/opt/aurora-bench').length - 1).toBe(
        userData.split('${AURORA_BENCH_HOME:-/opt/aurora-bench}').length - 1,
      );
    }
  });

  test("self-managed servers: a launch template per architecture running server-install.sh, servers' group", () => {
    const lts = resourcesOf(t.template, 'AWS::EC2::LaunchTemplate')
      .map(([, lt]) => lt.Properties as Record<string, any>)
      .filter((lt) => String(lt['LaunchTemplateName']).includes('-server-'));
    expect(lts.map((lt) => lt['LaunchTemplateName']).sort()).toEqual([
      'aurora-bench-server-arm64',
      'aurora-bench-server-x86_64',
    ]);
    for (const lt of lts) {
      const data = lt['LaunchTemplateData'];
      const arch = lt['LaunchTemplateName'].endsWith('arm64') ? 'arm64' : 'x86_64';
      expect(data.ImageId).toBe(
        `resolve:ssm:/aws/service/debian/release/bookworm/latest/${arch === 'arm64' ? 'arm64' : 'amd64'}`,
      );
      expect(data.MetadataOptions).toMatchObject({ HttpTokens: 'required', InstanceMetadataTags: 'enabled' });
      expect(data.InstanceInitiatedShutdownBehavior).toBe('terminate');
      expect(data.BlockDeviceMappings[0]).toMatchObject({
        DeviceName: '/dev/xvda',
        Ebs: { Encrypted: true, VolumeType: 'gp3', DeleteOnTermination: true },
      });
      expect(render(data.IamInstanceProfile.Arn)).toBe(`<${logicalIdOf('Servers/InstanceProfile/Resource')}.Arn>`);
      expect(render(data.SecurityGroupIds)).toBe(`<${logicalIdOf('Network/ServerSecurityGroup/Resource')}.GroupId>`);
      const userData = render(data.UserData['Fn::Base64']);
      const order = [
        'shutdown -h',
        'apt-get -q -o DPkg::Lock::Timeout=900 -o Acquire::Retries=5 install -y --no-install-recommends awscli jq',
        'aws s3 cp --only-show-errors --recursive "$RUNNER_S3_URI" "${AURORA_BENCH_HOME:-/opt/aurora-bench}/client/"',
        'dpkg -i /tmp/amazon-ssm-agent.deb',
        '/client/server-install.sh"',
        // The CloudWatch agent after the server's install, so its marker is not delayed by it.
        '/client/server-metrics-agent.sh"',
      ].map((x) => userData.indexOf(x));
      expect(order.every((at, i) => at > (order[i - 1] ?? -1))).toBe(true);
      expect(userData).not.toContain('install-sysbench.sh');
    }
    // The DB port from the clients and between servers (replication).
    const ingress = resourcesOf(t.template, 'AWS::EC2::SecurityGroupIngress')
      .map(([, r]) => r.Properties as Record<string, any>)
      .filter((r) => render(r['GroupId']) === `<${logicalIdOf('Network/ServerSecurityGroup/Resource')}.GroupId>`);
    expect(ingress.map((r) => [render(r['SourceSecurityGroupId']), r['FromPort'], r['ToPort']]).sort()).toEqual(
      [
        [`<${logicalIdOf('Network/ClientSecurityGroup/Resource')}.GroupId>`, 3306, 3306],
        [`<${logicalIdOf('Network/ServerSecurityGroup/Resource')}.GroupId>`, 3306, 3306],
      ].sort(),
    );
  });

  test("the instance profile writes only raw, SSM output, markers; reads runner, scripts, prepares' results", () => {
    const roleId = logicalIdOf('Clients/Role/Resource');
    const statements = statementsOfRole(t.template, roleId);
    const writes = statements
      .filter((s) => actionsOf(s).includes('s3:PutObject'))
      .flatMap((s) => [s.Resource].flat().map(render));
    expect(writes.map((r) => r.replace(/^<[^>]+>/, '<bucket>')).sort()).toEqual([
      '<bucket>/clients/*',
      '<bucket>/raw/*',
      '<bucket>/ssm-output/*',
    ]);
    const reads = statements
      .filter((s) => actionsOf(s).includes('s3:GetObject'))
      .flatMap((s) => [s.Resource].flat().map(render));
    expect(reads.map((r) => r.replace(/^<[^>]+>/, '<bucket>')).sort()).toEqual([
      '<bucket>/raw/*/prepare/*/result.json',
      '<bucket>/runner/*',
      '<bucket>/scripts/*',
    ]);
    const secret = statements.find((s) => actionsOf(s).includes('secretsmanager:GetSecretValue'))!;
    expect(render(secret.Condition!['StringLike']!['secretsmanager:ResourceTag/aws:rds:primaryDBClusterArn'])).toMatch(
      /:cluster:ab-\*$/,
    );
    const role = t.template.toJSON().Resources[roleId].Properties;
    expect(render(role.ManagedPolicyArns)).toMatch(/AmazonSSMManagedInstanceCore$/);
    // Run Command writes its output to the (SSE-S3 encrypted) bucket: the agent reads its encryption configuration.
    const encryption = statements.filter((s) => actionsOf(s).includes('s3:GetEncryptionConfiguration'));
    expect(encryption.map((s) => render(s.Resource))).toEqual([`<${logicalIdOf('Lake/Bucket/Resource')}.Arn>`]);
  });

  test(
    "the user data the AWS rehearsal boots is the launch templates' own, with the bucket name and region " +
      'filled in as CloudFormation does',
    () => {
      // Arrange: the launch templates' Fn::Join, with the lake bucket's Ref and AWS::Region resolved.
      const bucketId = logicalIdOf('Lake/Bucket/Resource');
      const resolve = (v: unknown): string => {
        if (typeof v === 'string') return v;
        const o = v as Record<string, unknown>;
        if (o['Ref'] === bucketId) return 'the-lake';
        if (o['Ref'] === 'AWS::Region') return 'eu-west-1';
        const join = o['Fn::Join'] as [string, unknown[]] | undefined;
        if (join) return join[1].map(resolve).join(join[0]);
        throw new Error(`unexpected token in the user data: ${JSON.stringify(v)}`);
      };
      const userDataOf = (name: string) => {
        const lt = resourcesOf(t.template, 'AWS::EC2::LaunchTemplate')
          .map(([, r]) => r.Properties as Record<string, any>)
          .find((p) => p['LaunchTemplateName'] === name)!;
        return resolve(lt['LaunchTemplateData'].UserData['Fn::Base64']);
      };

      // Act
      const rendered = renderedBootUserData({ bucket: 'the-lake', region: 'eu-west-1' });

      // Assert
      for (const arch of ['x86_64', 'arm64']) {
        expect(rendered.client.userData).toBe(userDataOf(`aurora-bench-client-${arch}`));
        expect(rendered.server.userData).toBe(userDataOf(`aurora-bench-server-${arch}`));
      }
      expect(rendered.client.userData.startsWith('#!/bin/bash\n')).toBe(true);
    },
  );

  test('client/ is deployed under runner/ of the lake bucket', () => {
    t.template.hasResourceProperties('Custom::CDKBucketDeployment', {
      DestinationBucketName: { Ref: logicalIdOf('Lake/Bucket/Resource') },
      DestinationBucketKeyPrefix: 'runner/',
    });
  });
});

describe('Nightly', () => {
  test('the schedule starts the state machine in the configured time zone with {"spec": <experiment>}', () => {
    const [, schedule] = resourcesOf(t.template, 'AWS::Scheduler::Schedule').find(([id]) => id.startsWith('Nightly'))!;
    const p = schedule.Properties as Record<string, any>;
    expect(p['ScheduleExpression']).toBe('cron(0 2 * * ? *)');
    expect(p['ScheduleExpressionTimezone']).toBe('Europe/Berlin');
    expect(p['FlexibleTimeWindow']).toEqual({ Mode: 'OFF' });
    const smId = resourcesOf(t.template, 'AWS::StepFunctions::StateMachine')[0]![0];
    expect(p['Target'].Arn).toEqual({ Ref: smId });
    const experiment = JSON.parse(readFileSync(join(PROJECT_ROOT, 'experiments', 'nightly-regression.json'), 'utf8'));
    // The spec runs in the stack's region (resolved by CloudFormation), whatever the file pins.
    expect(experiment.region).toBe('us-east-1');
    expect(JSON.parse(render(p['Target'].Input))).toEqual({ spec: { ...experiment, region: '<AWS::Region>' } });

    const roleId = (p['Target'].RoleArn as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0]!;
    const statements = statementsOfRole(t.template, roleId);
    expect(statements.flatMap(actionsOf)).toEqual(['states:StartExecution']);
    expect(statements[0]!.Resource).toEqual({ Ref: smId });
  });

  test('a stack deployed to an explicit region sends that region in the nightly spec', () => {
    const regional = synthTestApp({ ...nightlyOnConfig(), account: '123456789012', region: 'eu-central-1' });
    try {
      const [, schedule] = resourcesOf(regional.template, 'AWS::Scheduler::Schedule').find(([id]) =>
        id.startsWith('Nightly'),
      )!;

      const input = JSON.parse(render((schedule.Properties as Record<string, any>)['Target'].Input));

      expect(input.spec.region).toBe('eu-central-1');
    } finally {
      regional.dispose();
    }
  });

  test('no schedule when the nightly run is disabled', () => {
    const off = synthTestApp({ ...repoContextConfig(), nightly: { enabled: false } });
    try {
      expect(
        resourcesOf(off.template, 'AWS::Scheduler::Schedule')
          .map(([id]) => id)
          .filter((id) => id.startsWith('Nightly')),
      ).toEqual([]);
    } finally {
      off.dispose();
    }
  });
});

describe('SafetyNet', () => {
  test('aborted, timed-out and failed executions of the benchmark state machine go to the sweeper', () => {
    const smId = resourcesOf(t.template, 'AWS::StepFunctions::StateMachine')[0]![0];
    const sweeperId = resourcesOf(t.template, 'AWS::Lambda::Function').find(([id]) =>
      id.startsWith('SafetyNetSweeper'),
    )![0];
    t.template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: {
        source: ['aws.states'],
        'detail-type': ['Step Functions Execution Status Change'],
        detail: { status: ['ABORTED', 'TIMED_OUT', 'FAILED'], stateMachineArn: [{ Ref: smId }] },
      },
      Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [sweeperId, 'Arn'] }, DeadLetterConfig: Match.anyValue() })],
    });
  });

  test('the sweeper runs on a schedule to delete runs past their time to live', () => {
    const sweeperId = resourcesOf(t.template, 'AWS::Lambda::Function').find(([id]) =>
      id.startsWith('SafetyNetSweeper'),
    )![0];
    const [, schedule] = resourcesOf(t.template, 'AWS::Scheduler::Schedule').find(([id]) =>
      id.startsWith('SafetyNetSweepSchedule'),
    )!;
    const p = schedule.Properties as Record<string, any>;
    expect(p['ScheduleExpression']).toBe('rate(1 hour)');
    expect(p['Target'].Arn).toEqual({ 'Fn::GetAtt': [sweeperId, 'Arn'] });
    expect(JSON.parse(p['Target'].Input)).toEqual({ action: 'sweep-expired' });
    const smId = resourcesOf(t.template, 'AWS::StepFunctions::StateMachine')[0]![0];
    const sweeper = t.template.toJSON().Resources[sweeperId].Properties;
    expect(sweeper.Runtime).toBe('nodejs22.x');
    expect(sweeper.Environment.Variables.AURORA_BENCH_STATE_MACHINE_ARN).toEqual({ Ref: smId });
  });

  test('the sweeper lists, deletes, terminates and re-tags, nothing else', () => {
    const [roleId] = resourcesOf(t.template, 'AWS::IAM::Role').find(([id]) => id.startsWith('SweeperRole'))!;
    const statements = statementsOfRole(t.template, roleId);

    const actions = [...new Set(statements.flatMap(actionsOf))];

    const allowed = new RegExp(
      '^(' +
        [
          /rds:(Describe\w+|ListTagsForResource|Delete(DBCluster|DBInstance|DBClusterParameterGroup|DBParameterGroup))/,
          /rds:AddTagsToResource/,
          /ec2:(DescribeInstances|TerminateInstances|CreateTags)/,
          /secretsmanager:(ListSecrets|DescribeSecret|DeleteSecret|TagResource)/,
          /states:(GetExecutionHistory|DescribeExecution)/,
          /xray:Put\w+/,
          /logs:(CreateLogStream|PutLogEvents)/,
        ]
          .map((r) => r.source)
          .join('|') +
        ')$',
    );
    expect(actions.filter((a) => !allowed.test(a))).toEqual([]);
    for (const forbidden of [
      'ec2:RunInstances',
      'rds:CreateDBCluster',
      'ssm:SendCommand',
      'iam:PassRole',
      's3:PutObject',
      's3:GetObject',
    ])
      expect(actions).not.toContain(forbidden);
    const mutating = statements.filter((s) =>
      actionsOf(s).some((a) => /:(Delete|Terminate|AddTags|CreateTags|TagResource)/.test(a)),
    );
    expect(mutating.length).toBeGreaterThan(0);
    for (const s of mutating)
      expect({ sid: s.Sid, runTag: s.Condition?.['Null']?.[`aws:ResourceTag/${RUN_ID_TAG}`] }).toEqual({
        sid: s.Sid,
        runTag: 'false',
      });
  });

  test('the sweeper may re-tag only expires-at, only on resources that carry the run tag; no Task role may', () => {
    const roleId = (prefix: string) =>
      resourcesOf(t.template, 'AWS::IAM::Role').find(([id]) => id.startsWith(prefix))![0];
    const sweeper = statementsOfRole(t.template, roleId('SweeperRole'));
    const onlyExpiresAt = {
      Null: { [`aws:ResourceTag/${RUN_ID_TAG}`]: 'false' },
      'ForAllValues:StringEquals': { 'aws:TagKeys': [EXPIRES_AT_TAG] },
    };

    const rds = sweeper.find((s) => s.Sid === 'MarkRunDatabasesForSweep')!;
    const ec2 = sweeper.find((s) => s.Sid === 'MarkRunClientsForSweep')!;

    expect(actionsOf(rds)).toEqual(['rds:AddTagsToResource']);
    expect(
      (rds.Resource as unknown[])
        .map(render)
        .map((r) => r.replace(/^.*:rds:<AWS::Region>:<AWS::AccountId>:/, ''))
        .sort(),
    ).toEqual(['cluster-pg:ab-*', 'cluster:ab-*', 'db:ab-*', 'pg:ab-*']);
    expect(rds.Condition).toEqual(onlyExpiresAt);
    expect(actionsOf(ec2)).toEqual(['ec2:CreateTags']);
    expect(render(ec2.Resource)).toMatch(/:instance\/\*$/);
    expect(ec2.Condition).toEqual(onlyExpiresAt);
    for (const task of TASK_NAMES)
      expect(taskRoleStatements(task).map((s) => s.Sid)).not.toContain('MarkRunDatabasesForSweep');
  });
});

describe('Outputs', () => {
  test('the CLI finds the state machine, bucket, workgroup and database by output key', () => {
    const outputs = t.template.toJSON().Outputs as Record<string, { Value: unknown }>;
    expect(Object.keys(outputs)).toEqual(
      expect.arrayContaining(['StateMachineArn', 'ResultsBucketName', 'AthenaWorkGroupName', 'GlueDatabaseName']),
    );
    expect(outputs['AthenaWorkGroupName']!.Value).toBe('aurora-bench');
    expect(outputs['GlueDatabaseName']!.Value).toBe('aurora_bench');
  });
});
