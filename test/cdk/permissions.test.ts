/**
 * Every AWS action the code can call, checked against the synthesized IAM policies of the role that
 * runs it, so a missing permission fails here and not on a first AWS run:
 *  - each Lambda (the workflow's Tasks, the sweeper): the SDK operations its bundle reaches
 *    (test/helpers/iam-check.ts: esbuild, tree-shaken, @aws-sdk external as NodejsFunction bundles
 *    it) plus what services do with its permissions (DEPENDENT_ACTIONS);
 *  - the self-managed servers: the `aws` CLI calls of client/server-*.sh and of their user data;
 *  - the clients: the `aws` CLI calls of client/*.sh, of the launch template's user data and of the
 *    SSM commands the backend sends, on the objects and secrets the code names; and what the SSM
 *    agent needs to run commands and upload their output (Systems Manager User Guide, "Create an IAM
 *    instance profile for Systems Manager": AmazonSSMManagedInstanceCore, and for output to a bucket
 *    of your own s3:PutObject on it and s3:GetEncryptionConfiguration on the bucket when it is
 *    encrypted);
 *  - the state machine: lambda:InvokeFunction on every function a Task state names.
 * And the other way round, per Lambda: its role allows nothing its own bundle does not call (beyond
 * what Lambda does with the role: logs, X-Ray). Each function has a role of its own, and bundles
 * only its own Task's code (test/bundles/task-bundles.test.ts), so each role is as wide as its
 * Task's calls: RunStep's cannot create a database, ProvisionCell's cannot send a runner job.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CfnElement } from 'aws-cdk-lib';
import { AWS_CONFIG_DEFAULTS } from '../../core/backends/aws/config';
import { cellNames } from '../../core/backends/aws/names';
import { clientReadyKey, ssmRunnerCommands } from '../../core/backends/aws/runner-command';
import { lakeKeys } from '../../core/lake/rows';
import { TASK_NAMES } from '../../core/workflow/task-names';
import { RUNNER_PREFIX, SSM_OUTPUT_PREFIX } from '../../lib/handler-environment';
import {
  cliCallsOf,
  missingPermissions,
  sdkCallsOfEntry,
  type CodeCall,
  type PolicyStatementJson,
} from '../helpers/iam-check';
import {
  actionsOf,
  PROJECT_ROOT,
  render,
  resourcesOf,
  statementsOfRole,
  synthTestApp,
  type TestApp,
} from './cdk-fixture';

let t: TestApp;
beforeAll(() => {
  t = synthTestApp();
});
afterAll(() => t.dispose());

const renderResource = (r: unknown): string[] => (Array.isArray(r) ? r.map(render) : [render(r)]);

/**
 * What Lambda itself does with a function's execution role, which no code of the function calls:
 * write its logs (logs:CreateLogStream, logs:PutLogEvents: Lambda Developer Guide, "Sending Lambda
 * function logs to CloudWatch Logs") and, with active tracing, send its trace segments
 * (xray:PutTraceSegments, xray:PutTelemetryRecords: Lambda Developer Guide, "Visualize Lambda
 * function invocations using AWS X-Ray", execution role permissions).
 */
const LAMBDA_SERVICE_ACTIONS: readonly string[] = [
  'logs:CreateLogStream',
  'logs:PutLogEvents',
  'xray:PutTraceSegments',
  'xray:PutTelemetryRecords',
];
const logicalId = (c: { node: { defaultChild?: unknown } }) => t.stack.getLogicalId(c.node.defaultChild as CfnElement);
const statementsOf = (roleId: string) => statementsOfRole(t.template, roleId) as PolicyStatementJson[];

/** The user data of the client or server launch templates (lib/clients.ts, lib/servers.ts), by logical id. */
function launchTemplateUserData(kind: 'client' | 'server'): (readonly [string, string])[] {
  return resourcesOf(t.template, 'AWS::EC2::LaunchTemplate')
    .filter(([, lt]) => String(lt.Properties['LaunchTemplateName']).includes(`-${kind}-`))
    .map(
      ([id, lt]) =>
        [
          id,
          render(
            (lt.Properties['LaunchTemplateData'] as { UserData: { 'Fn::Base64': unknown } }).UserData['Fn::Base64'],
          ),
        ] as const,
    );
}

/** Each Lambda of the stack with its entry (as lib/workflow.ts and lib/safety-net.ts build them) and role. */
function lambdas(): { name: string; entry: string; roleId: string }[] {
  const { stack } = t;
  return [
    ...TASK_NAMES.map((task) => ({
      name: task,
      entry: join(PROJECT_ROOT, 'lambdas', task, 'handler.ts'),
      roleId: logicalId(stack.workflow.functions[task].role!),
    })),
    {
      name: 'sweeper',
      entry: join(PROJECT_ROOT, 'lambdas', 'sweeper', 'handler.ts'),
      roleId: logicalId(stack.safetyNet.sweeper.role!),
    },
  ];
}

describe('every AWS action the code can call is allowed to the role that calls it', () => {
  test('the stack has no Lambda this check does not know', () => {
    const functions = resourcesOf(t.template, 'AWS::Lambda::Function').filter(([, f]) =>
      String(f.Properties['Runtime']).startsWith('nodejs22'),
    );
    expect(functions.map(([id]) => id).sort()).toEqual(
      lambdas()
        .map((l) =>
          logicalId(
            l.name === 'sweeper'
              ? t.stack.safetyNet.sweeper
              : t.stack.workflow.functions[l.name as (typeof TASK_NAMES)[number]],
          ),
        )
        .sort(),
    );
  });

  test.each([...TASK_NAMES, 'sweeper'].map((name) => [name]))(
    'Lambda %s: every SDK operation its bundle reaches',
    async (name) => {
      // Arrange
      const lambda = lambdas().find((l) => l.name === name)!;

      // Act
      const calls = await sdkCallsOfEntry(lambda.entry);

      // Assert: every Lambda talks to AWS (at least the lake), and each call is allowed.
      expect(calls.length).toBeGreaterThan(0);
      expect(missingPermissions(statementsOf(lambda.roleId), calls, renderResource)).toEqual([]);
    },
    60_000,
  );

  test.each([...TASK_NAMES, 'sweeper'].map((name) => [name]))(
    'Lambda %s: its role allows no action its own bundle does not call',
    async (name) => {
      // Arrange
      const lambda = lambdas().find((l) => l.name === name)!;
      const called = new Set((await sdkCallsOfEntry(lambda.entry)).map((c) => c.action));

      // Act
      const granted = [...new Set(statementsOf(lambda.roleId).flatMap(actionsOf))];
      const unused = granted.filter((a) => !called.has(a) && !LAMBDA_SERVICE_ACTIONS.includes(a));

      // Assert: a role shared by several functions passes only while each of them calls all of it.
      expect(unused).toEqual([]);
    },
    60_000,
  );

  test('each Lambda has a role of its own', () => {
    const roles = lambdas().map((l) => l.roleId);
    expect(new Set(roles).size).toBe(roles.length);
  });

  test("the derivation finds what each function's code calls, and not what other Tasks' code calls", async () => {
    const actions = async (name: string) =>
      (await sdkCallsOfEntry(join(PROJECT_ROOT, 'lambdas', name, 'handler.ts'))).map((c) => c.action);
    const [provision, runStep, finish, verdicts, sweeper] = (await Promise.all(
      ['provision-cell', 'run-step', 'finish-run', 'compute-verdicts', 'sweeper'].map(actions),
    )) as [string[], string[], string[], string[], string[]];

    expect(provision).toEqual(
      expect.arrayContaining([
        'rds:CreateDBCluster',
        'iam:CreateServiceLinkedRole',
        'kms:DescribeKey',
        'ec2:RunInstances',
        'iam:PassRole',
        'ssm:SendCommand',
        's3:ListBucket',
      ]),
    );
    expect(runStep).toEqual(
      expect.arrayContaining([
        'ssm:SendCommand',
        'ssm:CancelCommand',
        'pi:GetResourceMetrics',
        'cloudwatch:GetMetricData',
        's3:PutObject',
      ]),
    );
    // Tree-shaken per function: RunStep creates, launches and deletes
    // nothing; ProvisionCell reads no metrics and cancels no job.
    expect(runStep.filter((a) => /:(Create|Run|Delete|Terminate|Modify|PassRole)/.test(a))).toEqual([]);
    expect(
      provision.filter((a) => /^(pi|cloudwatch|athena|glue):|ssm:CancelCommand|:Delete|:Terminate/.test(a)),
    ).toEqual([]);
    // Athena's own needs follow the SQL each bundle runs: partitions for FinishRun's compaction, views for the judging.
    expect(finish).toEqual(
      expect.arrayContaining(['glue:CreatePartition', 'glue:BatchCreatePartition', 's3:DeleteObject']),
    );
    expect(finish).not.toContain('glue:CreateTable');
    expect(verdicts).toEqual(
      expect.arrayContaining(['glue:CreateTable', 'glue:UpdateTable', 'sns:Publish', 'events:PutEvents']),
    );
    expect(verdicts).not.toContain('glue:CreatePartition');
    expect(sweeper).toEqual(
      expect.arrayContaining([
        'rds:DeleteDBCluster',
        'ec2:TerminateInstances',
        'states:GetExecutionHistory',
        'rds:AddTagsToResource',
      ]),
    );
    // The sweeper's bundle creates nothing.
    expect(sweeper.filter((a) => /:(Create|Run|Send)/.test(a) && a !== 'ec2:CreateTags')).toEqual([]);
  }, 120_000);

  test("the clients: their scripts', commands' and runner's aws calls on what code names; SSM agent's", async () => {
    // Arrange
    const runnerCalls = await sdkCallsOfEntry(join(PROJECT_ROOT, 'core', 'runner', 'cli.ts'));
    const roleId = logicalId(t.stack.clients.role);
    const statements = statementsOf(roleId);
    const bucket = `<${logicalId(t.stack.lake.bucket)}.Arn>`;
    const lake = (key: string) => `${bucket}/${AWS_CONFIG_DEFAULTS.lakePrefix}${key}`;
    // The self-managed servers' scripts and launch templates have a role of their own (the next test).
    const scripts = readdirSync(join(PROJECT_ROOT, 'client')).filter(
      (f) => f.endsWith('.sh') && !f.startsWith('server-'),
    );
    const userData = launchTemplateUserData('client');
    const ssmCommands = ssmRunnerCommands('eu-west-1', `s3://bucket/${RUNNER_PREFIX}`, '', ['--phase', 'run']).join(
      '\n',
    );
    const calls: CodeCall[] = [
      ...scripts.flatMap((f) => cliCallsOf(`client/${f}`, readFileSync(join(PROJECT_ROOT, 'client', f), 'utf8'))),
      ...userData.flatMap(([id, text]) => cliCallsOf(`user data of ${id}`, text)),
      ...cliCallsOf('ssmRunnerCommands (core/backends/aws/runner-command.ts)', ssmCommands),
      // The runner (client/runner.js): the SDK operations its bundle can send.
      ...runnerCalls,
      // Where those calls go, by the code's own keys and names:
      {
        action: 's3:ListBucket',
        resource: bucket,
        via: 'aws s3 cp --recursive of the runner (user data, SSM commands)',
      },
      {
        action: 's3:GetObject',
        resource: `${bucket}/${RUNNER_PREFIX}runner.js`,
        via: 'the runner (user data, SSM commands)',
      },
      { action: 's3:GetObject', resource: lake(lakeKeys.script('run-1', 'scan.lua')), via: 'runner.js --script-uri' },
      {
        action: 's3:PutObject',
        resource: lake(
          `${lakeKeys.raw('2026-11-21', 'run-1', 'cell-1', 'step-1', 'run', 'i-0123456789abcdef0')}output.log`,
        ),
        via: 'runner.js --out',
      },
      // data.reuse "step": a client waits for the prepare another
      // client of its cell, or of another member of its duet, runs.
      {
        action: 's3:GetObject',
        resource: lake(
          `${lakeKeys.raw('2026-11-21', 'run-1', 'v-b-r1', 'step-1', 'prepare', 'i-0fedcba9876543210')}result.json`,
        ),
        via: 'runner.js --await-prepare',
      },
      {
        action: 's3:PutObject',
        resource: `${bucket}/${clientReadyKey('i-0123456789abcdef0')}`,
        via: 'client-ready.sh',
      },
      {
        action: 'secretsmanager:GetSecretValue',
        resource:
          'arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:' +
          'secret:rds!cluster-0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b-AbCdEf',
        via: 'runner.js --password-secret (the RDS-managed master secret)',
      },
      // The SSM agent: Run Command output under OutputS3KeyPrefix (core/backends/aws/jobs.ts), the bucket's encryption.
      {
        action: 's3:PutObject',
        resource:
          `${bucket}/${SSM_OUTPUT_PREFIX}run-1/cell-1/step-1/run/i-0123456789abcdef0/cmd-1/` +
          'i-0123456789abcdef0/awsrunShellScript/0.awsrunShellScript/stdout',
        via: 'SSM agent: command output',
      },
      { action: 's3:GetEncryptionConfiguration', resource: bucket, via: 'SSM agent: output to an encrypted bucket' },
    ];

    // Act
    const missing = missingPermissions(statements, calls, renderResource);

    // Assert
    expect(calls.map((c) => c.action)).toEqual(
      expect.arrayContaining(['s3:GetObject', 's3:PutObject', 'secretsmanager:GetSecretValue']),
    );
    expect(runnerCalls.map((c) => c.action).sort()).toEqual([
      's3:GetObject',
      's3:PutObject',
      'secretsmanager:GetSecretValue',
    ]);
    expect(missing).toEqual([]);
    expect(render(t.template.toJSON().Resources[roleId].Properties.ManagedPolicyArns)).toMatch(
      /:iam::aws:policy\/AmazonSSMManagedInstanceCore$/,
    );
  });

  test("the self-managed servers: their scripts' and user data's aws calls on the bundle, output and secret", () => {
    // Arrange
    const statements = statementsOf(logicalId(t.stack.servers.role));
    const bucket = `<${logicalId(t.stack.lake.bucket)}.Arn>`;
    const scripts = readdirSync(join(PROJECT_ROOT, 'client')).filter(
      (f) => f.startsWith('server-') && f.endsWith('.sh'),
    );
    const calls: CodeCall[] = [
      ...scripts.flatMap((f) => cliCallsOf(`client/${f}`, readFileSync(join(PROJECT_ROOT, 'client', f), 'utf8'))),
      ...launchTemplateUserData('server').flatMap(([id, text]) => cliCallsOf(`user data of ${id}`, text)),
      { action: 's3:ListBucket', resource: bucket, via: 'aws s3 cp --recursive of the bundle (user data)' },
      {
        action: 's3:GetObject',
        resource: `${bucket}/${RUNNER_PREFIX}server-install.sh`,
        via: 'the bundle (user data)',
      },
      {
        action: 'secretsmanager:GetSecretValue',
        resource:
          `arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:secret:` +
          cellNames('run-1', 'cell-1').serverSecretName +
          `-AbCdEf`,
        via: 'server-setup.sh --secret-arn (the cell secret self-managed-servers.ts creates)',
      },
      {
        action: 's3:PutObject',
        resource:
          `${bucket}/${SSM_OUTPUT_PREFIX}run-1/cell-1/server-setup-0/cmd-1/` +
          'i-0123456789abcdef0/awsrunShellScript/0.awsrunShellScript/stdout',
        via: 'SSM agent: setup command output',
      },
      { action: 's3:GetEncryptionConfiguration', resource: bucket, via: 'SSM agent: output to an encrypted bucket' },
      // PutMetricData has no resource type: "*" (Service Authorization Reference, Amazon CloudWatch).
      {
        action: 'cloudwatch:PutMetricData',
        resource: '*',
        via: 'the CloudWatch agent server-metrics-agent.sh starts (client/cloudwatch-agent.json)',
      },
    ];
    const agentConfig = JSON.parse(readFileSync(join(PROJECT_ROOT, 'client', 'cloudwatch-agent.json'), 'utf8')) as {
      metrics: { namespace: string };
    };

    // Act
    const missing = missingPermissions(statements, calls, renderResource);
    const publish = statements.filter((st) => [st.Action].flat().includes('cloudwatch:PutMetricData'));

    // Assert
    expect(scripts.sort()).toEqual(['server-install.sh', 'server-metrics-agent.sh', 'server-setup.sh']);
    expect(calls.map((c) => c.action)).toEqual(
      expect.arrayContaining(['secretsmanager:GetSecretValue', 's3:GetObject']),
    );
    expect(missing).toEqual([]);
    // The agent publishes only in the namespace its config names, and the role allows no other
    // (missingPermissions does not evaluate conditions, so the condition is asserted here).
    expect(agentConfig.metrics.namespace).toBe('CWAgent');
    expect(publish.map((st) => st.Condition)).toEqual([
      { StringEquals: { 'cloudwatch:namespace': agentConfig.metrics.namespace } },
    ]);
    // The secret read is limited to ab-* secrets of a run, not the RDS-managed ones.
    expect(
      missingPermissions(
        statements,
        [
          {
            action: 'secretsmanager:GetSecretValue',
            resource: 'arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:secret:rds!cluster-x',
            via: 'test',
          },
        ],
        renderResource,
      ),
    ).not.toEqual([]);
  });

  test('the state machine may invoke every function its Task states name', () => {
    // Arrange
    const [smId, sm] = resourcesOf(t.template, 'AWS::StepFunctions::StateMachine')[0]!;
    const definition = sm.Properties['DefinitionString'] as { 'Fn::Join': [string, unknown[]] };
    const functions = [...new Set(definition['Fn::Join'][1].filter((p) => typeof p !== 'string').map(render))];
    const roleRef = render(sm.Properties['RoleArn']).replace(/^<|\.Arn>$/g, '');

    // Act
    const missing = missingPermissions(
      statementsOf(roleRef),
      functions.map((fn) => ({ action: 'lambda:InvokeFunction', resource: fn, via: `a Task state of ${smId}` })),
      renderResource,
    );

    // Assert
    expect(functions).toHaveLength(TASK_NAMES.length);
    expect(missing).toEqual([]);
  });
});

describe('the check fails when a permission is missing', () => {
  test('without the RDS service-linked role statement provision-cell is refused CreateServiceLinkedRole', async () => {
    const lambda = lambdas().find((l) => l.name === 'provision-cell')!;
    const statements = statementsOf(lambda.roleId).filter((s) => s.Sid !== 'CreateRdsServiceLinkedRole');

    const missing = missingPermissions(statements, await sdkCallsOfEntry(lambda.entry), renderResource);

    expect(missing).toEqual([
      expect.stringMatching(/^iam:CreateServiceLinkedRole \(.*rds:CreateDBCluster|^iam:CreateServiceLinkedRole /),
    ]);
  }, 60_000);

  test("without s3:GetEncryptionConfiguration the clients' SSM agent is refused; so is a write outside raw/", () => {
    const statements = statementsOf(logicalId(t.stack.clients.role));
    const bucket = `<${logicalId(t.stack.lake.bucket)}.Arn>`;
    const encryption: CodeCall = { action: 's3:GetEncryptionConfiguration', resource: bucket, via: 'SSM agent' };
    const tables: CodeCall = {
      action: 's3:PutObject',
      resource: `${bucket}/${lakeKeys.stepTable('steps', '2026-11-21', 'run-1', 'cell-1', 'step-1')}`,
      via: 'a client writing the lake tables',
    };

    expect(missingPermissions(statements, [encryption, tables], renderResource)).toEqual([
      expect.stringMatching(/^s3:PutObject on .*\/tables\/steps\//),
    ]);
    expect(
      missingPermissions(
        statements.filter(
          (s) => !(Array.isArray(s.Action) ? s.Action : [s.Action]).includes('s3:GetEncryptionConfiguration'),
        ),
        [encryption],
        renderResource,
      ),
    ).toHaveLength(1);
  });
});
