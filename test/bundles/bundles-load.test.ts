/**
 * Every Lambda of the stack, as `cdk deploy` uploads it, loads and answers where only the Node.js 22
 * runtime's packages exist: the stack is synthesized with its bundling (lib/synthesized-workflow.ts
 * synthesizeBundledCached, the cache `run --aws-rehearsal` uses), and each function's asset folder
 * alone is run in core/rehearsal/lambda-sandbox.ts (a child process per cold start, read-only code,
 * only the AWS SDK v3 on NODE_PATH, the template's handler, Environment, memory and timeout, a
 * writable temporary folder) and invoked with a minimal event. Each must give its own answer (the
 * event's or the configuration's error), never a load error (Runtime.ImportModuleError, "Cannot
 * find module"): a bundle that requires a package the runtime does not have (DuckDB), or one of its
 * own files esbuild did not see (jsonc-parser's UMD `main`), fails here.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { synthesisCacheDir } from '../../bin/aws-rehearsal';
import { lambdaNode } from '../../core/rehearsal/lambda-node';
import {
  LambdaSandbox,
  LOAD_ERROR_TYPES,
  lambdaRuntimeModules,
  type InvokeOutcome,
} from '../../core/rehearsal/lambda-sandbox';
import { TASK_NAMES } from '../../core/workflow/task-names';
import { allViewSql, LAKE_VIEWS, SQL_FILE_VIEWS } from '../../core/lake/views';
import { synthesizeBundledCached } from '../../lib/synthesized-workflow';

type BundledSynthesis = ReturnType<typeof synthesizeBundledCached>;
import { PROJECT_ROOT } from '../cdk/cdk-fixture';

const REGION = 'eu-west-1';
const ACCOUNT = '123456789012';

/** A hex id of the shape EC2 gives (subnet-, sg-, lt- and 17 hex digits), stable per logical id. */
const ec2Id = (prefix: string, logicalId: string) =>
  `${prefix}-${createHash('sha256').update(logicalId).digest('hex').slice(0, 17)}`;

/**
 * What Ref and Fn::GetAtt return for the resource types the functions' Environment names, as
 * CloudFormation documents them (Template reference, each type's "Return values"): Ref of a subnet
 * or launch template is its id, of a topic its ARN, of a bucket or DB subnet group its name;
 * GroupId of a security group, Arn of an instance profile.
 */
function referenceValue(types: ReadonlyMap<string, string>, logicalId: string, attribute?: string): string {
  const type = types.get(logicalId);
  const name = `aurorabench-${logicalId.toLowerCase()}`;
  const key = `${type}${attribute ? `.${attribute}` : ''}`;
  const values: Record<string, () => string> = {
    'AWS::S3::Bucket': () => name,
    'AWS::EC2::Subnet': () => ec2Id('subnet', logicalId),
    'AWS::EC2::LaunchTemplate': () => ec2Id('lt', logicalId),
    'AWS::EC2::SecurityGroup.GroupId': () => ec2Id('sg', logicalId),
    'AWS::RDS::DBSubnetGroup': () => name,
    'AWS::SNS::Topic': () => `arn:aws:sns:${REGION}:${ACCOUNT}:${name}`,
    'AWS::IAM::InstanceProfile.Arn': () => `arn:aws:iam::${ACCOUNT}:instance-profile/${name}`,
    'AWS::IAM::Role.Arn': () => `arn:aws:iam::${ACCOUNT}:role/${name}`,
    'AWS::StepFunctions::StateMachine': () => `arn:aws:states:${REGION}:${ACCOUNT}:stateMachine:${name}`,
    'AWS::SQS::Queue.Arn': () => `arn:aws:sqs:${REGION}:${ACCOUNT}:${name}`,
    'AWS::SQS::Queue': () => `https://sqs.${REGION}.amazonaws.com/${ACCOUNT}/${name}`,
  };
  const value = values[key];
  if (!value)
    throw new Error(
      `an Environment reference this test has no value for: ${key} (${logicalId}); add the type's documented ` +
        `return value`,
    );
  return value();
}

/**
 * A template value as CloudFormation resolves it at deploy time,
 * with made-up but well-formed values for the stack's resources.
 */
function resolveIntrinsics(value: unknown, types: ReadonlyMap<string, string>): string {
  if (typeof value === 'string') return value;
  const o = value as Record<string, unknown>;
  if ('Fn::Join' in o) {
    const [sep, parts] = o['Fn::Join'] as [string, unknown[]];
    return parts.map((p) => resolveIntrinsics(p, types)).join(sep);
  }
  if ('Ref' in o) {
    const pseudo: Record<string, string> = {
      'AWS::Region': REGION,
      'AWS::AccountId': ACCOUNT,
      'AWS::Partition': 'aws',
      'AWS::URLSuffix': 'amazonaws.com',
    };
    const ref = String(o['Ref']);
    return pseudo[ref] ?? referenceValue(types, ref);
  }
  if ('Fn::GetAtt' in o) {
    const [id, attribute] = o['Fn::GetAtt'] as [string, string];
    return referenceValue(types, id, attribute);
  }
  if ('Fn::Select' in o) {
    const [index, list] = o['Fn::Select'] as [number, unknown];
    // Fn::GetAZs: the Region's zones, a, b, c, ...
    if (typeof list === 'object' && list !== null && 'Fn::GetAZs' in list) return `${REGION}${'abcdef'[index]}`;
    if (Array.isArray(list)) return resolveIntrinsics(list[index], types);
  }
  throw new Error(`an Environment value this test cannot resolve: ${JSON.stringify(value)}`);
}

let synthesis: BundledSynthesis;
/** The functions of the stack's own code; the others are CDK's (checked below). */
const nodeFunctions = () => synthesis.functions.filter((f) => f.runtime.startsWith('nodejs'));
let sandbox: LambdaSandbox;
let runtimeModules: string;
const logs = new Map<string, string[]>();
const started = Date.now();

beforeAll(() => {
  const cacheDir = synthesisCacheDir();
  synthesis = synthesizeBundledCached({ projectRoot: PROJECT_ROOT, region: REGION, account: ACCOUNT }, cacheDir);
  runtimeModules = lambdaRuntimeModules(join(PROJECT_ROOT, 'node_modules'), cacheDir);
  sandbox = new LambdaSandbox({
    dir: mkdtempSync(join(tmpdir(), 'ab-bundles-')),
    runtimeModules,
    node: lambdaNode(PROJECT_ROOT),
    region: REGION,
    // Credentials a function may sign with, and an endpoint that refuses every connection: a function
    // that calls AWS before looking at its event fails with a connection error, which this test
    // would report as its answer, never silently reaching a real account.
    extraEnvironment: {
      AWS_ACCESS_KEY_ID: 'AKIAIOSFODNN7EXAMPLE',
      AWS_SECRET_ACCESS_KEY: 'sandbox',
      AWS_ENDPOINT_URL: 'http://127.0.0.1:9',
    },
    onLog: (name, line) => logs.set(name, [...(logs.get(name) ?? []), line]),
  });
  const templateFile = readdirSync(synthesis.outdir).find((f) => f.endsWith('.template.json'))!;
  const resources = (
    JSON.parse(readFileSync(join(synthesis.outdir, templateFile), 'utf8')) as {
      Resources: Record<string, { Type: string }>;
    }
  ).Resources;
  const types = new Map(Object.entries(resources).map(([id, r]) => [id, r.Type]));
  for (const fn of nodeFunctions()) {
    sandbox.add({
      name: fn.logicalId,
      assetDir: fn.assetDir,
      handler: fn.handler,
      runtime: fn.runtime,
      environment: Object.fromEntries(Object.entries(fn.environment).map(([k, v]) => [k, resolveIntrinsics(v, types)])),
      memoryMb: fn.memoryMb,
      timeoutS: fn.timeoutS,
    });
  }
}, 600_000);

afterAll(async () => {
  await (sandbox as LambdaSandbox | undefined)?.dispose();
  console.log(
    `bundles: ` +
      String((synthesis as BundledSynthesis | undefined)?.functions.length ?? 0) +
      ` functions, ` +
      ((Date.now() - started) / 1000).toFixed(1) +
      ` s in all`,
  );
});

/** The outcome with the function's last log lines when it failed, for the assertion message. */
const shown = (name: string, o: InvokeOutcome) =>
  o.ok ? o : { ...o, errorMessage: o.errorMessage.slice(0, 600), log: (logs.get(name) ?? []).slice(-5) };

test("one nodejs22.x function per Task and the sweeper; the only other is CDK's BucketDeployment", () => {
  expect(nodeFunctions().map((f) => f.runtime)).toEqual(nodeFunctions().map(() => 'nodejs22.x'));
  expect(
    nodeFunctions()
      .map((f) => f.task)
      .filter((t) => t !== undefined)
      .sort(),
  ).toEqual([...TASK_NAMES].sort());
  expect(nodeFunctions()).toHaveLength(TASK_NAMES.length + 1);
  // aws-cdk-lib's aws-s3-deployment handler (Python with the AWS
  // CLI layer) that uploads client/: CDK's code, not run here.
  expect(
    synthesis.functions
      .filter((f) => !f.runtime.startsWith('nodejs'))
      .map((f) => [f.logicalId.replace(/[0-9A-F]{8,}$/, ''), f.runtime.replace(/\d+$/, '')]),
  ).toEqual([['CustomCDKBucketDeployment', 'python3.']]);
});

test("the lake views' SQL files the Tasks read at run time (all but step_summary) ship beside each index.js", () => {
  for (const fn of nodeFunctions().filter((f) => f.task !== undefined)) {
    expect([fn.task, SQL_FILE_VIEWS.filter((v) => !existsSync(join(fn.assetDir, 'sql', `${v}.sql`)))]).toEqual([
      fn.task,
      [],
    ]);
    expect([fn.task, allViewSql(join(fn.assetDir, 'sql')).map((v) => v.name)]).toEqual([fn.task, [...LAKE_VIEWS]]);
  }
});

/** Asserts an answer is the function's own error, not the runtime's failure to load it. */
function expectOwnError(name: string, outcome: InvokeOutcome, errorType: string, message: RegExp): void {
  expect(shown(name, outcome)).toMatchObject({ ok: false, errorType, errorMessage: expect.stringMatching(message) });
  expect(LOAD_ERROR_TYPES).not.toContain((outcome as { errorType: string }).errorType);
}

describe('every function loads and answers a minimal event itself', () => {
  test.each(TASK_NAMES.map((t) => [t]))('Task %s: an empty event is its own input error', async (task) => {
    // Arrange
    const fn = synthesis.functions.find((f) => f.task === task)!;

    // Act
    const outcome = await sandbox.invoke(fn.logicalId, {});

    // Assert: the Task's own check of its event (core/workflow/tasks/need.ts), after its deps were built.
    expectOwnError(
      fn.logicalId,
      outcome,
      'InvalidTaskInputError',
      new RegExp(`^${task}: event\\.(spec|run) is missing`),
    );
    expect(outcome.coldStart).toBe(true);
  });

  test('the sweeper: an event of neither kind is its own input error', async () => {
    const fn = nodeFunctions().find((f) => f.task === undefined)!;

    const outcome = await sandbox.invoke(fn.logicalId, {});

    expectOwnError(fn.logicalId, outcome, 'InvalidSweeperEventError', /./);
  });

  test('a warm environment is reused: the second call is no cold start and answers the same', async () => {
    const fn = synthesis.functions.find((f) => f.task === 'run-step')!;

    const second = await sandbox.invoke(fn.logicalId, {});

    expectOwnError(fn.logicalId, second, 'InvalidTaskInputError', /^run-step: event\.run is missing/);
    expect(second.coldStart).toBe(false);
  });

  test("without the stack's environment a Task answers with its configuration error", async () => {
    // Arrange: the template's function with none of the AURORA_BENCH_* variables.
    const fn = synthesis.functions.find((f) => f.task === 'plan-run')!;
    const bare = new LambdaSandbox({
      dir: mkdtempSync(join(tmpdir(), 'ab-bundles-bare-')),
      runtimeModules,
      node: lambdaNode(PROJECT_ROOT),
      region: REGION,
    });
    bare.add({
      name: fn.logicalId,
      assetDir: fn.assetDir,
      handler: fn.handler,
      runtime: fn.runtime,
      environment: Object.fromEntries(
        Object.entries(fn.environment).filter(([k]) => !k.startsWith('AURORA_BENCH_')) as [string, string][],
      ),
      memoryMb: fn.memoryMb,
      timeoutS: fn.timeoutS,
    });

    // Act
    const outcome = await bare.invoke(fn.logicalId, {}).finally(() => bare.dispose());

    // Assert
    expectOwnError(fn.logicalId, outcome, 'AwsConfigError', /AURORA_BENCH_BUCKET/);
  });
});
