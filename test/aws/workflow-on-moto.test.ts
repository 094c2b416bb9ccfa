/**
 * The deployed workflow, as close as it runs without AWS: the state machine definition extracted
 * from the synthesized CloudFormation template (lib/synthesized-workflow.ts: its Fn::GetAtt of each
 * Task function resolved to a function ARN) passes asl-validator and runs through aws-local-stepfunctions with every
 * Task bound to its Task with the AWS deps of every Task (test/helpers/aws-task-deps.ts: the parts each Lambda
 * composes its own deps from, core/backends/aws/parts) pointing at moto.
 *
 * moto runs RDS, EC2, S3, CloudWatch and SSM SendCommand/ListCommands; aws-sdk-client-mock stands
 * in only where moto has nothing: SSM agent registration (DescribeInstanceInformation), invocation
 * status (GetCommandInvocation), CancelCommand and Performance Insights. moto's SSM runs nothing on
 * the clients, so SendCommand is where the runner "runs": it leaves in moto's S3, at the job's --out
 * location, what client/runner.js writes there (a recorded sysbench output, client_cpu.jsonl,
 * result.json), and run-step reads those real objects.
 *
 * CloudWatch datapoints arrive late, as on AWS: moto's CloudWatch has none for a step's window
 * when run-step first collects, and gets them (PutMetricData) right after; collect-late-metrics
 * then collects the window again. The local runner shortens every Wait to a poll; the Tasks' clock
 * moves on by the seconds WaitForLateMetrics asked for, as that Wait would have taken on AWS.
 *
 * moto's Athena runs no SQL: what ComputeVerdicts and FinishRun send it is answered by Trino
 * (core/rehearsal/athena-on-trino.ts, the test run's shared server) over the synthesized template's
 * Glue tables in moto and the run's objects in moto's S3, as the rehearsal answers it.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DescribeInstancesCommand } from '@aws-sdk/client-ec2';
import { GetResourceMetricsCommand } from '@aws-sdk/client-pi';
import {
  DescribeDBClusterParameterGroupsCommand,
  DescribeDBClustersCommand,
  DescribeDBInstancesCommand,
  DescribeDBParameterGroupsCommand,
} from '@aws-sdk/client-rds';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { DuckDBInstance } from '@duckdb/node-api';
import { PutMetricDataCommand, type GetMetricDataCommandInput } from '@aws-sdk/client-cloudwatch';
import {
  CancelCommandCommand,
  DescribeInstanceInformationCommand,
  GetCommandInvocationCommand,
  ListCommandsCommand,
  SendCommandCommand,
  type SendCommandCommandInput,
} from '@aws-sdk/client-ssm';
import aslValidator from 'asl-validator';
import { mockClient } from 'aws-sdk-client-mock';
import { awsConfigToEnv, type AwsBackendConfig } from '../../core/backends/aws/config';
import { destroyAwsClients, makeAwsClients, type AwsClients } from '../../core/backends/aws/clients';
import { cellNames } from '../../core/backends/aws/names';
import { clientReadyKey, type ClientReadyMarker } from '../../core/backends/aws/runner-command';
import { compactedRunPrefix, type StepTable } from '../../core/lake/athena-storage';
import {
  lakeKeys,
  type IntervalRow,
  type MetricWindowRow,
  type RunRow,
  type ServerMetricRow,
  type StepRow,
  type VerdictsRow,
} from '../../core/lake/rows';
import { planRun } from '../../core/plan/plan';
import type { SpecInput } from '../../core/experiment/schema';
import { validateSpec } from '../../core/experiment/validate';
import type { RunnerResult } from '../../core/sysbench/types';
import { AthenaOnTrino } from '../../core/rehearsal/athena-on-trino';
import { progressLine } from '../../core/workflow/progress';
import { executeLocally, type ExecutionEvent, type LocalExecutionResult } from '../../core/workflow/local-runner';
import { TASK_NAMES } from '../../core/workflow/task-names';
import { buildAwsTaskDeps } from '../helpers/aws-task-deps';
import { tracer } from '../../lambdas/runtime/aws-runtime';
import { synthesizeWorkflow, type SynthesizedWorkflow } from '../../lib/synthesized-workflow';
import { PROJECT_ROOT } from '../cdk/cdk-fixture';
import {
  createStandingInfrastructure,
  createVerdictTargets,
  CREDENTIALS,
  destroyRawClients,
  rawClients,
  REGION,
  type RawClients,
  type VerdictTargets,
} from './fixtures';
import { startMoto, type MotoServer } from './moto';
import { stackTemplate, startTrino, type TrinoServer } from './trino';

const FIXTURES = join(__dirname, '..', 'fixtures', 'sysbench');

let moto: MotoServer;
let raw: RawClients;
let config: AwsBackendConfig;
let workflow: SynthesizedWorkflow;
let verdictTargets: VerdictTargets;
let trino: TrinoServer;
/** The file's Athena: Trino over moto's Glue (the synthesized template's tables) and S3 lake. */
let athena: AthenaOnTrino;

// ------------------------------------------------------------------ the runner, as moto cannot run it

type PrepareOutcome = 'ok' | 'connection-refused';

/**
 * What the simulated runner does for a prepare (a prepare job's,
 * or a run job's with --prepare-out) of the next execution.
 */
let prepareOutcome: PrepareOutcome = 'ok';
/** data.reuse of the next execution's spec: "step" makes each step's run job prepare first. */
let dataReuse: 'cell' | 'step' = 'cell';
/** --phase, --out and --prepare-out of every job SendCommand started, in order. */
const startedJobs: { phase: string; out: string; prepareOut?: string; instanceId: string }[] = [];
/** Called as each job starts, while the cell is up. */
let onJobStart: (() => Promise<void>) | undefined;

/**
 * What moto's CloudWatch does with a step's datapoints: published right after the first collection
 * asked for them (late), never, or published late while the second collection is refused.
 */
type Publishing = 'late' | 'never' | 'late-collection-refused';
let publishing: Publishing = 'late';
/** How far the Tasks' clock is ahead of real time: the seconds WaitForLateMetrics "waited". */
let clockSkewMs = 0;

/** One datapoint per minute of the asked window for every series of a GetMetricData: what RDS publishes. */
async function publishWindow(input: GetMetricDataCommandInput): Promise<void> {
  const start = new Date(input.StartTime!).getTime();
  const end = new Date(input.EndTime!).getTime();
  for (const q of input.MetricDataQueries ?? []) {
    const metric = q.MetricStat!.Metric!;
    const data = [];
    for (let t = start; t < end; t += 60_000)
      data.push({ MetricName: metric.MetricName!, Dimensions: metric.Dimensions, Timestamp: new Date(t), Value: 42 });
    await raw.cw.send(new PutMetricDataCommand({ Namespace: metric.Namespace!, MetricData: data }));
  }
}

/** Words of one POSIX shell line as core/backends/aws/runner-command.ts quotes them ('...' and '"'"'). */
function shellWords(line: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === "'" || c === '"') {
      const close = line.indexOf(c, i + 1);
      if (close < 0) throw new Error(`unbalanced ${c} in ${line}`);
      word += line.slice(i + 1, close);
      i = close;
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  return words;
}

/** The runner's --phase, --out and --prepare-out from the AWS-RunShellScript commands of a SendCommand. */
function runnerJobOf(input: SendCommandCommandInput): { phase: string; out: string; prepareOut?: string } {
  const exec = (input.Parameters?.['commands'] ?? []).find((c) => c.startsWith('exec ') && c.includes('runner.js'));
  if (!exec) throw new Error(`SendCommand without an exec of runner.js: ${JSON.stringify(input.Parameters)}`);
  const argv = shellWords(exec);
  const value = (flag: string) => {
    const i = argv.indexOf(flag);
    if (i < 0 || i + 1 >= argv.length) throw new Error(`runner argv has no ${flag}: ${exec}`);
    return argv[i + 1]!;
  };
  return {
    phase: value('--phase'),
    out: value('--out'),
    ...(argv.includes('--prepare-out') ? { prepareOut: value('--prepare-out') } : {}),
  };
}

/**
 * Writes what client/runner.js leaves at its --out location (result.json last, as it does); a run
 * after a failed prepare (--prepare-out) did not run, and says so.
 */
async function writeRunnerOutput(out: string, phase: string, notRun = false): Promise<void> {
  const match = /^s3:\/\/([^/]+)\/(.+\/)$/.exec(out);
  if (!match) throw new Error(`runner --out ${out} is not s3://bucket/prefix/`);
  const [, bucket, prefix] = match as unknown as [string, string, string];
  const fixture =
    phase === 'prepare'
      ? prepareOutcome === 'ok'
        ? 'prepare_read_write'
        : 'fatal_connection_refused'
      : 'hook_read_write';
  const exitCode = notRun ? 1 : Number(readFileSync(join(FIXTURES, `${fixture}.exit`), 'utf8').trim());
  const started = new Date();
  const ended = new Date(started.getTime() + 3000);
  const t0 = Math.floor(started.getTime() / 1000);
  const cpu =
    phase === 'run'
      ? [1, 2, 3]
          .map((k) => JSON.stringify({ t: t0 + k, sysbenchCpuPct: 40 + k, hostCpuPct: 30 + k, cores: 2 }))
          .join('\n') + '\n'
      : '';
  const result: RunnerResult = {
    phase: phase as RunnerResult['phase'],
    exitCode,
    startedAt: started.toISOString(),
    endedAt: ended.toISOString(),
    sysbenchVersion: '1.0.20',
    hostname: 'ip-10-20-1-10',
    command: `sysbench oltp_read_write ${phase} --mysql-password=***`,
  };
  const put = (name: string, body: string) =>
    raw.s3.send(new PutObjectCommand({ Bucket: bucket, Key: prefix + name, Body: Buffer.from(body, 'utf8') }));
  await put(
    'output.log',
    notRun
      ? "aurora-bench runner: not run: the data's prepare failed: exit code 1\n"
      : readFileSync(join(FIXTURES, `${fixture}.log`), 'utf8'),
  );
  await put('client_cpu.jsonl', cpu);
  await put('result.json', JSON.stringify(result, null, 2) + '\n');
}

// ------------------------------------------------------------------ deps bound to moto

/**
 * The TaskDeps a Task Lambda builds from its environment, with SDK clients on moto; SSM and PI
 * mocked where moto has nothing (SendCommand and ListCommands go on to moto).
 */
async function motoTaskDeps(): Promise<{
  deps: Awaited<ReturnType<typeof buildAwsTaskDeps>>;
  clients: AwsClients;
  restore: () => void;
}> {
  const clients = makeAwsClients({ region: REGION, endpoint: moto.endpoint, credentials: CREDENTIALS, maxAttempts: 1 });
  // ComputeVerdicts reads the lake and FinishRun compacts it through Athena: the SQL as sent, on Trino.
  athena.install(clients.athena);
  const ssm = mockClient(clients.ssm);
  ssm.on(SendCommandCommand).callsFake(async (input: SendCommandCommandInput) => {
    const job = runnerJobOf(input);
    startedJobs.push({ ...job, instanceId: input.InstanceIds?.[0] ?? '' });
    await onJobStart?.();
    if (job.prepareOut !== undefined) await writeRunnerOutput(job.prepareOut, 'prepare');
    await writeRunnerOutput(job.out, job.phase, job.prepareOut !== undefined && prepareOutcome !== 'ok');
    return raw.ssm.send(new SendCommandCommand(input));
  });
  ssm.on(ListCommandsCommand).callsFake((input) => raw.ssm.send(new ListCommandsCommand(input)));
  ssm
    .on(DescribeInstanceInformationCommand)
    .callsFake(async (input: { Filters?: { Key: string; Values: string[] }[] }) => {
      const ids = input.Filters?.find((f) => f.Key === 'InstanceIds')?.Values ?? [];
      // moto runs no user data: each client's last boot step, client/client-ready.sh uploading its
      // ready marker, is done here, by the time its agent is online.
      for (const id of ids) {
        const marker: ClientReadyMarker = {
          ready: true,
          sysbench: 'sysbench 1.0.20 (using system LuaJIT 2.1.1700000000)',
          sysbenchVersion: '1.0.20',
        };
        await raw.s3.send(
          new PutObjectCommand({ Bucket: config.bucket, Key: clientReadyKey(id), Body: JSON.stringify(marker) }),
        );
      }
      return { InstanceInformationList: ids.map((id) => ({ InstanceId: id, PingStatus: 'Online' })) };
    });
  // The runner exits 0 whenever it ran sysbench and wrote result.json (sysbench's code is in there).
  ssm.on(GetCommandInvocationCommand).resolves({ Status: 'Success', ResponseCode: 0 });
  ssm.on(CancelCommandCommand).resolves({});
  // Performance Insights: one datapoint per period of the window for the totals (never late here).
  const pi = mockClient(clients.pi);
  pi.on(GetResourceMetricsCommand).callsFake((input: { StartTime: Date; EndTime: Date; PeriodInSeconds: number }) => {
    const points = [];
    for (
      let t = new Date(input.StartTime).getTime();
      t < new Date(input.EndTime).getTime();
      t += input.PeriodInSeconds * 1000
    )
      points.push({ Timestamp: new Date(t), Value: 1.5 });
    return {
      MetricList: [
        { Key: { Metric: 'db.load.avg' }, DataPoints: points },
        { Key: { Metric: 'os.cpuUtilization.total.avg' }, DataPoints: points.map((p) => ({ ...p, Value: 30 })) },
      ],
    };
  });
  // A collection asks for each range once (the minutes, the volume's 5-minute intervals): a range
  // asked for again is the late collection's.
  const askedRanges = new Set<string>();
  clients.cloudwatch.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== 'GetMetricDataCommand') return next(args);
      const input = args.input as GetMetricDataCommandInput;
      const range = `${new Date(input.StartTime!).toISOString()} ${new Date(input.EndTime!).toISOString()}`;
      const again = askedRanges.has(range);
      askedRanges.add(range);
      if (publishing === 'late-collection-refused' && again) {
        throw Object.assign(new Error('User is not authorized to perform: cloudwatch:GetMetricData'), {
          name: 'AccessDenied',
        });
      }
      const out = await next(args);
      if (publishing !== 'never' && !again) await publishWindow(input);
      return out;
    },
    { step: 'initialize', name: 'latePublishing' },
  );
  const built = await buildAwsTaskDeps(awsConfigToEnv(config), tracer, { clients });
  const deps = { ...built, now: () => new Date(Date.now() + clockSkewMs) };
  return {
    deps,
    clients,
    restore: () => {
      ssm.restore();
      pi.restore();
      destroyAwsClients(clients);
    },
  };
}

// ------------------------------------------------------------------ helpers

function tinySpec(): SpecInput {
  return {
    name: 'moto-wf',
    engine: { version: '3.04.0' },
    region: REGION,
    variants: [
      {
        name: 'r6g',
        instanceClass: 'db.r6g.large',
        az: 'a',
        readers: 1,
        instanceParameters: { performance_schema: true },
        clients: { count: 1, instanceType: 'c6g.large', placement: 'same-az' },
      },
    ],
    data: { tables: 2, tableSize: 1000, reuse: dataReuse },
    defaults: { durationS: 2, warmupS: 0, reportIntervalS: 1 },
    workloads: [{ name: 'rw', test: 'oltp_read_write', threads: [2] }],
    ttlHours: 2,
  };
}

async function runWorkflow(runId: string): Promise<LocalExecutionResult> {
  const { deps, restore } = await motoTaskDeps();
  try {
    return await executeLocally({
      deps,
      input: { spec: tinySpec(), scripts: {}, runId },
      pollMs: 20,
      retryMs: 10,
      resolvedDefinition: workflow,
      onEvent: (ev) => {
        if (ev.type === 'StateEntered' && ev.state?.name === 'WaitForLateMetrics')
          clockSkewMs += (ev.state.input as { lateMetrics: { waitS: number } }).lateMetrics.waitS * 1000;
      },
    });
  } finally {
    restore();
  }
}

/** The one cell and step the tiny spec plans (the same plan PlanRun makes). */
function plannedCell(runId: string) {
  const plan = planRun(validateSpec(tinySpec()), { backend: 'aws', runId });
  return { cell: plan.cells[0]!, step: plan.cells[0]!.steps[0]! };
}

/** The lake partition (dt) PlanRun chose, from its output in the execution's events. */
function runDt(result: LocalExecutionResult): string {
  const exited = result.events.find((e) => e.type === 'StateExited' && e.state?.name === 'PlanRun');
  const dt = (exited?.state?.output as { run?: { dt?: string } } | undefined)?.run?.dt;
  if (!dt) throw new Error('PlanRun did not exit with a run context');
  return dt;
}

function entered(events: readonly ExecutionEvent[], state: string): number {
  return events.filter((e) => e.type === 'StateEntered' && e.state?.name === state).length;
}

async function lakeObject(key: string): Promise<string | undefined> {
  try {
    const out = await raw.s3.send(new GetObjectCommand({ Bucket: config.bucket, Key: config.lakePrefix + key }));
    return await out.Body!.transformToString('utf-8');
  } catch (e) {
    if ((e as Error).name === 'NoSuchKey') return undefined;
    throw e;
  }
}

async function lakeRows<T>(key: string): Promise<T[]> {
  const text = await lakeObject(key);
  if (text === undefined) throw new Error(`lake object ${config.lakePrefix}${key} is missing`);
  return text.trim() === ''
    ? []
    : text
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as T);
}

/**
 * A run's rows of a step table, as FinishRun left them: compacted to Parquet by Athena's UNLOAD (on
 * Trino, athena-translation.ts) under compacted/<table>/dt=<dt>/run_id=<run>/, read back with DuckDB,
 * run_id from the partition path as the Parquet table's partition key gives it.
 */
async function compactedRows<T>(table: StepTable, dt: string, runId: string): Promise<T[]> {
  const prefix = config.lakePrefix + compactedRunPrefix(table, dt, runId);
  const keys = (
    (await raw.s3.send(new ListObjectsV2Command({ Bucket: config.bucket, Prefix: prefix }))).Contents ?? []
  ).map((o) => o.Key!);
  if (keys.length === 0) throw new Error(`no Parquet file under ${prefix}`);
  const dir = mkdtempSync(join(tmpdir(), 'ab-wf-moto-parquet-'));
  const instance = await DuckDBInstance.create(':memory:');
  const db = await instance.connect();
  try {
    for (const key of keys) {
      const file = join(dir, key.slice(config.lakePrefix.length));
      mkdirSync(join(file, '..'), { recursive: true });
      writeFileSync(
        file,
        await (
          await raw.s3.send(new GetObjectCommand({ Bucket: config.bucket, Key: key }))
        ).Body!.transformToByteArray(),
      );
    }
    const rows = (
      await db.runAndReadAll(
        `SELECT * FROM read_parquet('${dir}/**', hive_partitioning = true, hive_types = {'dt': 'VARCHAR', ` +
          `'run_id': 'VARCHAR'})`,
      )
    ).getRowObjectsJS();
    return rows.map(
      (r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'bigint' ? Number(v) : v])) as T,
    );
  } finally {
    db.closeSync();
    instance.closeSync();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What moto holds of a run's cell: cluster, DB instances, parameter groups, live clients. */
async function cellResourcesInMoto(runId: string, cellId: string): Promise<string[]> {
  const base = cellNames(runId, cellId).base;
  const clusters = (await raw.rds.send(new DescribeDBClustersCommand({}))).DBClusters ?? [];
  const instances = (await raw.rds.send(new DescribeDBInstancesCommand({}))).DBInstances ?? [];
  const clusterGroups =
    (await raw.rds.send(new DescribeDBClusterParameterGroupsCommand({}))).DBClusterParameterGroups ?? [];
  const instanceGroups = (await raw.rds.send(new DescribeDBParameterGroupsCommand({}))).DBParameterGroups ?? [];
  const clients = await raw.ec2.send(
    new DescribeInstancesCommand({
      Filters: [
        { Name: `tag:${config.tagKeyPrefix}run-id`, Values: [runId] },
        { Name: 'instance-state-name', Values: ['pending', 'running', 'stopping', 'stopped'] },
      ],
    }),
  );
  return [
    ...clusters.map((c) => `cluster ${c.DBClusterIdentifier}`),
    ...instances.map((i) => `db-instance ${i.DBInstanceIdentifier}`),
    ...clusterGroups.map((g) => `cluster-parameter-group ${g.DBClusterParameterGroupName}`),
    ...instanceGroups.map((g) => `parameter-group ${g.DBParameterGroupName}`),
  ]
    .filter((name) => name.split(' ')[1]!.startsWith(base))
    .concat(
      (clients.Reservations ?? [])
        .flatMap((r) => r.Instances ?? [])
        .map((i) => `ec2-instance ${i.InstanceId} ${i.State?.Name}`),
    );
}

// ------------------------------------------------------------------ the tests

beforeAll(async () => {
  // On a fresh machine scripts/moto.sh first installs moto from PyPI.
  moto = startMoto();
  raw = rawClients(moto.endpoint);
  verdictTargets = await createVerdictTargets(moto.endpoint, await createStandingInfrastructure(moto.endpoint, raw));
  config = verdictTargets.config;
  trino = startTrino();
  athena = new AthenaOnTrino({
    trinoEndpoint: trino.endpoint,
    motoEndpoint: moto.endpoint,
    region: REGION,
    bucket: config.bucket,
    lakePrefix: config.lakePrefix,
    template: stackTemplate(),
    // The runs' one day (PlanRun's dt is the UTC date it plans on): a range of years would have Trino
    // list a prefix per day on each query.
    projectionRange: `${new Date().toISOString().slice(0, 10)},NOW`,
  });
  workflow = synthesizeWorkflow({ projectRoot: PROJECT_ROOT, region: REGION });
}, 300_000);

afterAll(async () => {
  await athena.close();
  trino.stop();
  verdictTargets.sqs.destroy();
  destroyRawClients(raw);
  moto.stop();
});

beforeEach(() => {
  startedJobs.length = 0;
  prepareOutcome = 'ok';
  dataReuse = 'cell';
  onJobStart = undefined;
  publishing = 'late';
  clockSkewMs = 0;
});

describe('the synthesized state machine definition', () => {
  it('names a Task function of the template for every Task state and passes asl-validator', () => {
    // Arrange
    const resources = JSON.stringify(workflow.definition).match(/"Resource":"[^"]+"/g) ?? [];

    // Act: asl-validator fills in defaults on the object it is given, so it gets a copy.
    const { isValid, errorsText } = aslValidator(structuredClone(workflow.definition), {
      checkArn: true,
      checkPaths: true,
    });

    // Assert
    expect(errorsText('\n')).toBe('');
    expect(isValid).toBe(true);
    expect([...new Set(workflow.taskByArn.values())].sort()).toEqual([...TASK_NAMES].sort());
    for (const r of resources) expect(workflow.taskByArn.has(r.slice('"Resource":"'.length, -1))).toBe(true);
  });
});

describe('the synthesized workflow with the AWS handlers on moto', () => {
  it('runs one cell end to end: provisions, prepares, runs, collects into the S3 lake, tears down', async () => {
    // Arrange
    const runId = 'moto-wf-ok-20261121';
    const { cell, step } = plannedCell(runId);
    const names = cellNames(runId, cell.cellId);
    const whileRunning: string[][] = [];
    onJobStart = async () => {
      whileRunning.push(await cellResourcesInMoto(runId, cell.cellId));
    };

    // Act
    const result = await runWorkflow(runId);
    const dt = runDt(result);

    // Assert: the execution and the path it took.
    expect(result.error ?? null).toBeNull();
    expect(result.status).toBe('SUCCEEDED');
    expect(result.output).toEqual({
      status: 'succeeded',
      runId,
      error: null,
      cause: null,
      steps: 1,
      failedSteps: 0,
      compaction:
        `compacted to Parquet: ` +
        ['steps', 'intervals', 'server_metrics', 'metric_windows']
          .map((t) => `${t} (1 JSON Lines object(s), 1 Parquet file(s))`)
          .join(', '),
    });
    // FinishRun compacted the run: its step tables' JSON Lines
    // objects are gone, their rows are read from Parquet below.
    for (const table of ['steps', 'intervals', 'server_metrics', 'metric_windows'] as const) {
      expect(await lakeObject(lakeKeys.stepTable(table, dt, runId, cell.cellId, step.stepId))).toBeUndefined();
    }
    const path = [
      'PlanRun',
      'ProvisionCell',
      'CheckCellReady',
      'StartClients',
      'CheckClientsReady',
      'RunStepSegments',
      'RunStep',
      'WaitForStep',
      'SegmentDone',
      'CollectLateMetrics',
      'WaitForLateMetrics',
      'TeardownCell',
      'FinishRun',
      'ComputeVerdicts',
    ];
    expect(path.filter((state) => entered(result.events, state) === 0)).toEqual([]);
    expect(entered(result.events, 'TeardownCellOnError')).toBe(0);
    // One prepare and one run job, on the cell's client, each writing under its own lake prefix.
    expect(startedJobs.map((j) => j.phase)).toEqual(['prepare', 'run']);
    expect(startedJobs[1]!.out).toBe(
      `s3://${config.bucket}/${config.lakePrefix}` +
        lakeKeys.raw(dt, runId, cell.cellId, step.stepId, 'run', startedJobs[1]!.instanceId),
    );

    // Assert: the lake in moto's S3 holds the parsed recorded output.
    // A first run of its experiment: judged, with no earlier run to judge it against.
    expect(
      (await lakeRows<VerdictsRow>(lakeKeys.verdicts(dt, runId))).map((v) => [v.run_id, v.metric, v.verdict]),
    ).toEqual(['tps', 'qps', 'latency', 'errors'].map((m) => [runId, m, 'unknown']));
    const [runRow] = await lakeRows<RunRow>(lakeKeys.run(dt, runId));
    expect(runRow).toMatchObject({
      run_id: runId,
      backend: 'aws',
      region: REGION,
      status: 'succeeded',
      error: null,
      sysbench_version: '1.0.20',
    });
    const steps = await compactedRows<StepRow>('steps', dt, runId);
    expect(steps).toHaveLength(1);
    expect(steps[0]).toMatchObject({
      status: 'ok',
      error: null,
      threads: 2,
      target: 'writer',
      tps: 622.88,
      qps: 12511.28,
      lat_pct_ms: 8.13,
      errors: 10,
      az: 'us-east-1a',
    });
    expect(steps[0]!.endpoint_instance).toBe(names.writerId);
    expect(steps[0]!.client_cpu_avg_pct).toBe(32);
    const intervals = await compactedRows<IntervalRow>('intervals', dt, runId);
    expect(intervals.map((i) => [i.t, i.tps])).toEqual([
      [1, 647.479],
      [2, 685.569],
      [3, 543.001],
    ]);
    const metrics = await compactedRows<ServerMetricRow>('server_metrics', dt, runId);
    expect(metrics.filter((m) => m.source === 'pi').map((m) => [m.instance_id, m.metric, m.value])).toEqual(
      expect.arrayContaining([[names.writerId, 'db.load.avg', 1.5]]),
    );
    expect(metrics.filter((m) => m.metric === 'ClientHostCPU').map((m) => m.value)).toEqual([31, 32, 33]);

    // Assert: the step's CloudWatch window was empty when the step ended; the cell waited once, for
    // the window's last minute + metricsPublishDelayS, and then found every datapoint.
    expect(entered(result.events, 'CollectLateMetrics')).toBe(2);
    expect(entered(result.events, 'WaitForLateMetrics')).toBe(1);
    const firstAnswer = result.events.find((e) => e.type === 'StateExited' && e.state?.name === 'CollectLateMetrics')!
      .state!.output as {
      lateMetrics: { done: boolean; waitS: number };
    };
    expect(firstAnswer.lateMetrics.done).toBe(false);
    expect(firstAnswer.lateMetrics.waitS).toBeGreaterThanOrEqual(config.metricsPublishDelayS);
    const wait = result.events.find((e) => e.type === 'StateEntered' && e.state?.name === 'WaitForLateMetrics')!;
    expect(progressLine(wait, () => 1)).toBe(
      `[1/1 ${cell.cellId}] waiting ${firstAnswer.lateMetrics.waitS} s for the last CloudWatch/Performance ` +
        `Insights datapoints of 1 step(s)`,
    );
    const windows = await compactedRows<MetricWindowRow>('metric_windows', dt, runId);
    const cloudwatchWindows = windows.filter((w) => w.source === 'cloudwatch');
    expect(cloudwatchWindows.map((w) => `${w.instance_id} ${w.metric}`)).toEqual(
      expect.arrayContaining([`${names.writerId} CPUUtilization`, `${names.readerId(1)} AuroraReplicaLag`]),
    );
    expect(windows.every((w) => w.complete && w.received === w.expected && w.expected >= 1)).toBe(true);
    // Every counted series has its datapoints; the latency/memory series are collected alongside
    // without windows of their own (the base metrics' windows say whether the minute is published).
    const counted = new Set(cloudwatchWindows.map((w) => w.metric));
    expect(metrics.filter((m) => m.source === 'cloudwatch' && counted.has(m.metric))).toHaveLength(
      cloudwatchWindows.reduce((a, w) => a + w.expected, 0),
    );
    expect(
      new Set(metrics.filter((m) => m.source === 'cloudwatch' && !counted.has(m.metric)).map((m) => m.metric)),
    ).toEqual(new Set(['CommitLatency', 'DMLLatency', 'SelectLatency', 'FreeableMemory']));
    // The volume's I/O counts too, over the 5-minute intervals the step overlaps: the wait reached
    // past the end of the last one, whose datapoint AWS publishes only after it closes.
    const volumeWindows = cloudwatchWindows.filter((w) => w.metric.startsWith('Volume'));
    expect(volumeWindows.map((w) => [w.instance_id, w.metric, w.period_s])).toEqual(
      expect.arrayContaining([
        [names.clusterId, 'VolumeReadIOPs', 300],
        [names.clusterId, 'VolumeWriteIOPs', 300],
      ]),
    );
    const volumeEnd = Math.max(...volumeWindows.map((w) => Date.parse(w.window_end)));
    // The Tasks' clock had not moved ahead yet at the first wait: it is the event's.
    expect(wait.timestamp + firstAnswer.lateMetrics.waitS * 1000).toBeGreaterThanOrEqual(
      volumeEnd + config.metricsPublishDelayS * 1000,
    );
    expect(JSON.parse(runRow!.notes) as { message: string }[]).not.toContainEqual(
      expect.objectContaining({ message: expect.stringContaining('server metrics') }),
    );

    // Assert: what the cell had in moto while its jobs ran is gone.
    expect(whileRunning[0]).toEqual(
      expect.arrayContaining([
        `cluster ${names.clusterId}`,
        `db-instance ${names.writerId}`,
        `db-instance ${names.readerId(1)}`,
        `cluster-parameter-group ${names.clusterParameterGroup}`,
        `parameter-group ${names.instanceParameterGroup}`,
        `ec2-instance ${startedJobs[0]!.instanceId} running`,
      ]),
    );
    expect(await cellResourcesInMoto(runId, cell.cellId)).toEqual([]);
  }, 300_000);

  it('marks windows whose datapoints never came incomplete, in the manifest too; the run succeeds', async () => {
    // Arrange
    const runId = 'moto-wf-never-published-20261121';
    const { cell, step } = plannedCell(runId);
    publishing = 'never';

    // Act
    const result = await runWorkflow(runId);
    const dt = runDt(result);

    // Assert: waited once, collected again, still nothing: every CloudWatch window says so.
    expect(result.status).toBe('SUCCEEDED');
    expect(entered(result.events, 'WaitForLateMetrics')).toBe(1);
    const windows = await compactedRows<MetricWindowRow>('metric_windows', dt, runId);
    const cloudwatchWindows = windows.filter((w) => w.source === 'cloudwatch');
    expect(cloudwatchWindows.length).toBeGreaterThan(0);
    for (const w of cloudwatchWindows) expect(w).toMatchObject({ received: 0, complete: false });
    expect(cloudwatchWindows.every((w) => w.expected >= 1)).toBe(true);
    const [runRow] = await lakeRows<RunRow>(lakeKeys.run(dt, runId));
    expect(JSON.parse(runRow!.notes)).toContainEqual({
      level: 'warning',
      path: `cells[${cell.cellId}].serverMetrics`,
      message: expect.stringContaining(`server metrics of 1 step(s) (${step.stepId}) were still missing datapoints`),
    });
    expect(await cellResourcesInMoto(runId, cell.cellId)).toEqual([]);
  }, 300_000);

  it('a failed late collection is caught: the cell torn down, its windows marked, the manifest says why', async () => {
    // Arrange
    const runId = 'moto-wf-late-refused-20261121';
    const { cell } = plannedCell(runId);
    publishing = 'late-collection-refused';

    // Act
    const result = await runWorkflow(runId);
    const dt = runDt(result);

    // Assert
    expect(result.status).toBe('SUCCEEDED');
    expect(result.events.filter((e) => e.type === 'StateCaught').map((e) => e.state?.name)).toContain(
      'CollectLateMetrics',
    );
    expect(entered(result.events, 'TeardownCell')).toBe(1);
    expect(entered(result.events, 'TeardownCellOnError')).toBe(0);
    const windows = await compactedRows<MetricWindowRow>('metric_windows', dt, runId);
    expect(windows.filter((w) => w.source === 'cloudwatch').every((w) => !w.complete)).toBe(true);
    const [runRow] = await lakeRows<RunRow>(lakeKeys.run(dt, runId));
    expect(JSON.parse(runRow!.notes)).toContainEqual(
      expect.objectContaining({
        level: 'warning',
        message: expect.stringMatching(/late server metrics were not collected \(AccessDenied: .*GetMetricData/),
      }),
    );
    expect(await cellResourcesInMoto(runId, cell.cellId)).toEqual([]);
  }, 300_000);

  // data.reuse "cell": a prepare job before the first step's run;
  // "step": each step's run job prepares first (--prepare-out).
  it.each([
    ['cell', 'the prepare job', ['prepare']],
    ['step', "the run job's own prepare", ['run']],
  ] as const)(
    'data.reuse %s: fails the execution when %s fails, after tearing the cell down',
    async (reuse, _what, phases) => {
      // Arrange: sysbench prepare cannot connect (recorded), exits 1; the runner itself exits 0.
      const runId = `moto-wf-prepare-fails-${reuse}-20261121`;
      dataReuse = reuse;
      const { cell, step } = plannedCell(runId);
      prepareOutcome = 'connection-refused';
      const whileRunning: string[][] = [];
      onJobStart = async () => {
        whileRunning.push(await cellResourcesInMoto(runId, cell.cellId));
      };

      // Act
      const result = await runWorkflow(runId);
      const dt = runDt(result);

      // Assert
      expect(result.status).toBe('FAILED');
      expect(result.error).toBe('BenchmarkFailed');
      expect(result.cause).toContain(
        `cell ${cell.cellId} failed: DataPrepareFailedError: sysbench prepare for cell ${cell.cellId} failed`,
      );
      expect(result.cause).toContain('unable to connect to MySQL server');
      // RunStep collected the failed prepare and failed; the step's run never started.
      expect(result.events.filter((e) => e.type === 'StateFailed' && e.state?.name === 'RunStep')).toHaveLength(1);
      expect(entered(result.events, 'TeardownCellOnError')).toBe(1);
      expect(entered(result.events, 'TeardownCell')).toBe(0);
      expect(startedJobs.map((j) => j.phase)).toEqual(phases);
      // The prepare's files are where a prepare job writes them; no step row for a run that never ran.
      expect(startedJobs[0]![reuse === 'step' ? 'prepareOut' : 'out']).toBe(
        `s3://${config.bucket}/${config.lakePrefix}` +
          lakeKeys.raw(dt, runId, cell.cellId, step.stepId, 'prepare', startedJobs[0]!.instanceId),
      );
      expect(await lakeObject(lakeKeys.stepTable('steps', dt, runId, cell.cellId, step.stepId))).toBeUndefined();
      const [runRow] = await lakeRows<RunRow>(lakeKeys.run(dt, runId));
      expect(runRow).toMatchObject({ run_id: runId, status: 'failed' });
      expect(runRow!.error).toContain('DataPrepareFailedError');
      expect(whileRunning[0]).toContain(`cluster ${cellNames(runId, cell.cellId).clusterId}`);
      expect(whileRunning[0]).toHaveLength(6);
      expect(await cellResourcesInMoto(runId, cell.cellId)).toEqual([]);
    },
    60_000,
  );
});
