/**
 * The CLI's AWS side against moto: `run --aws` (runOnAws) runs the account preflight against the
 * deployed stack (its BackendConfig output names the standing infrastructure made in moto), finds
 * the state machine by the stack's outputs, starts an execution named with the run id and follows
 * it to its end; `results --aws` (athenaResultsText) renders what Athena returns. The preflight's
 * RDS and Service Quotas questions go to moto too, which does not implement them: those checks
 * warn (test/aws/preflight.test.ts plays RDS's answers).
 *
 * moto's Step Functions does not execute the real workflow (its Tasks are Lambdas). With moto's
 * `execute_state_machine` setting (POST /moto-api/config) it does run Pass, Wait, Choice, Succeed and
 * Fail states for real, with a real history: the state machine here is a stand-in made of those,
 * named like the workflow's states, whose outcome the spec name chooses. moto's Athena runs no SQL:
 * each query takes the next result set queued through /moto-api/static/athena/query-results.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AthenaClient,
  CreateWorkGroupCommand,
  GetQueryExecutionCommand,
  ListQueryExecutionsCommand,
} from '@aws-sdk/client-athena';
import { CloudFormationClient, CreateStackCommand } from '@aws-sdk/client-cloudformation';
import {
  CreateStateMachineCommand,
  DescribeExecutionCommand,
  ListExecutionsCommand,
  SFNClient,
  StopExecutionCommand,
} from '@aws-sdk/client-sfn';
import { destroyAwsClients, makeAwsClients, type AwsClients } from '../../core/backends/aws/clients';
import { awsConfigToEnv } from '../../core/backends/aws/config';
import { athenaResultsText } from '../../core/cli/results-aws';
import { runOnAws } from '../../core/cli/run-aws';
import { athenaViewSql } from '../../core/lake/athena-storage';
import type { SpecInput } from '../../core/experiment/schema';
import { loadSpecFile } from '../../core/experiment/validate';
import {
  athenaTable,
  createStandingInfrastructure,
  CREDENTIALS,
  destroyRawClients,
  queueAthenaResults,
  rawClients,
  REGION,
  type MotoAthenaResult,
  type RawClients,
} from './fixtures';
import { startMoto, type MotoServer } from './moto';

const REPO = join(__dirname, '..', '..');
const WORKLOADS = join(REPO, 'client', 'workloads');
const STACK = 'aurora-bench-moto';
const WORK_GROUP = 'aurora-bench-wg';
const DATABASE = 'aurora_bench';
const FAILING_SPEC_NAME = 'cli-aws-fails';
const LONG_SPEC_NAME = 'cli-aws-long';

let moto: MotoServer;
let sfn: SFNClient;
let cfn: CloudFormationClient;
let athena: AthenaClient;
let raw: RawClients;
/** The preflight's clients, at moto. */
let clients: AwsClients;
let stateMachineArn: string;
let specDir: string;
/** SFN and CloudFormation API calls the CLI made, by command name. */
const calls: string[] = [];

/**
 * A stand-in for the benchmark workflow that moto can execute: the states the CLI reports on
 * (ProvisionCell with the group, RunStep with the step it collected), a Wait so the execution is
 * still RUNNING when the CLI first looks, and the workflow's two ends.
 */
/** A plain cell's header: a group of one. */
const GROUP_HEADER = {
  groupId: 'r6g-r1',
  index: 0,
  members: [{ cellId: 'r6g-r1', index: 0, repeat: 1, variant: { instanceClass: 'db.r6g.large', readers: 0 } }],
  stepCount: 1,
};
const STAND_IN_DEFINITION = {
  StartAt: 'PlanRun',
  States: {
    PlanRun: {
      Type: 'Pass',
      Parameters: {
        'runId.$': '$.runId',
        'specName.$': '$.spec.name',
        group: { groupId: 'r6g-r1', index: 0, members: [{ cellId: 'r6g-r1' }] },
      },
      Next: 'ProvisionCell',
    },
    // The workflow's ProvisionCell replaces the state with {run, group (its header), resources}.
    ProvisionCell: {
      Type: 'Pass',
      Parameters: { 'specName.$': '$.specName', group: GROUP_HEADER, resources: { notes: [] } },
      Next: 'WaitCellReady',
    },
    WaitCellReady: { Type: 'Wait', Seconds: 1, Next: 'DidStepsSucceed' },
    DidStepsSucceed: {
      Type: 'Choice',
      Choices: [
        { Variable: '$.specName', StringEquals: FAILING_SPEC_NAME, Next: 'RunStepsFailed' },
        { Variable: '$.specName', StringEquals: LONG_SPEC_NAME, Next: 'LongStep' },
      ],
      Default: 'RunStep',
    },
    // The workflow's RunStep puts what it collected, per member, at $.step.collected.
    RunStep: {
      Type: 'Pass',
      Result: {
        done: true,
        waitS: 0,
        started: null,
        startSpreadMs: null,
        collected: [
          {
            cellId: 'r6g-r1',
            outcome: {
              stepId: 'rw-t2',
              index: 0,
              status: 'ok',
              error: null,
              tps: 622.88,
              qps: 12511.28,
              sysbenchVersion: '1.0.20',
              metrics: null,
            },
          },
        ],
      },
      ResultPath: '$.step',
      Next: 'RunSucceeded',
    },
    // A step that runs long enough for Ctrl-C to come while the execution is RUNNING.
    LongStep: { Type: 'Wait', Seconds: 60, Next: 'RunSucceeded' },
    RunSucceeded: { Type: 'Succeed' },
    RunStepsFailed: {
      Type: 'Fail',
      Error: 'BenchmarkStepsFailed',
      Cause: 'cell r6g-r1 failed: 1 of 1 steps failed\n  step rw-t2: i-0: exit code 1',
    },
  },
};

/** Records each command name a client sends (a middleware: moto still answers). */
const recordCall =
  (next: (args: unknown) => Promise<unknown>, context: { commandName?: string }) => async (args: unknown) => {
    calls.push(context.commandName ?? 'unknown');
    return next(args);
  };

function writeSpec(name: string, over: Partial<SpecInput> = {}): string {
  const spec: SpecInput = {
    name,
    engine: { version: '3.04.0' },
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
    defaults: { durationS: 2, warmupS: 0, reportIntervalS: 1 },
    workloads: [
      { name: 'rw', test: 'oltp_read_write', threads: [2] },
      // A custom Lua workload: its body travels in the execution input's "scripts".
      { name: 'scan', script: 'fullscan_1kb.lua', threads: [1] },
    ],
    ...over,
  };
  const file = join(specDir, `${name}.json`);
  writeFileSync(file, JSON.stringify(spec, null, 2));
  return file;
}

async function executionCount(): Promise<number> {
  return (await sfn.send(new ListExecutionsCommand({ stateMachineArn }))).executions?.length ?? 0;
}

beforeAll(async () => {
  moto = startMoto();
  const common = { region: REGION, endpoint: moto.endpoint, credentials: CREDENTIALS, maxAttempts: 1 };
  sfn = new SFNClient(common);
  cfn = new CloudFormationClient(common);
  sfn.middlewareStack.add(recordCall as never, { step: 'initialize', name: 'recordCall' });
  cfn.middlewareStack.add(recordCall as never, { step: 'initialize', name: 'recordCall' });
  athena = new AthenaClient(common);
  raw = rawClients(moto.endpoint);
  clients = makeAwsClients({ region: REGION, endpoint: moto.endpoint, credentials: CREDENTIALS, maxAttempts: 1 });
  specDir = mkdtempSync(join(tmpdir(), 'ab-cli-aws-'));
  const backendConfig = await createStandingInfrastructure(moto.endpoint, raw, { bucket: 'ab-results' });

  // Executing state machines is a moto setting: on before the state machine is created.
  const configured = await fetch(`${moto.endpoint}/moto-api/config`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ stepfunctions: { execute_state_machine: true } }),
  });
  if (configured.status !== 201) throw new Error(`moto-api config: ${configured.status} ${await configured.text()}`);
  const sm = await sfn.send(
    new CreateStateMachineCommand({
      name: 'aurora-bench',
      definition: JSON.stringify(STAND_IN_DEFINITION),
      roleArn: 'arn:aws:iam::123456789012:role/aurora-bench-sfn',
    }),
  );
  stateMachineArn = sm.stateMachineArn!;
  await athena.send(
    new CreateWorkGroupCommand({
      Name: WORK_GROUP,
      Configuration: { ResultConfiguration: { OutputLocation: 's3://ab-results/athena/' } },
    }),
  );
  // The stack's outputs as lib/aurora-bench-stack.ts exports them (core/backends/aws/stack-outputs.ts STACK_OUTPUTS).
  const template = {
    Parameters: { StateMachineArnParameter: { Type: 'String' } },
    Resources: { Queue: { Type: 'AWS::SQS::Queue' } },
    Outputs: {
      StateMachineArn: { Value: { Ref: 'StateMachineArnParameter' } },
      ResultsBucketName: { Value: 'ab-results' },
      AthenaWorkGroupName: { Value: WORK_GROUP },
      GlueDatabaseName: { Value: DATABASE },
      BackendConfig: { Value: JSON.stringify(awsConfigToEnv(backendConfig)) },
    },
  };
  await cfn.send(
    new CreateStackCommand({
      StackName: STACK,
      TemplateBody: JSON.stringify(template),
      Parameters: [{ ParameterKey: 'StateMachineArnParameter', ParameterValue: stateMachineArn }],
    }),
  );
}, 300_000);

afterAll(() => {
  destroyAwsClients(clients);
  destroyRawClients(raw);
  sfn.destroy();
  cfn.destroy();
  athena.destroy();
  if (specDir) rmSync(specDir, { recursive: true, force: true });
  moto.stop();
});

beforeEach(() => {
  calls.length = 0;
});

describe('runOnAws against moto', () => {
  it('starts an execution named by the run id, input {spec, scripts, runId}, and follows it to SUCCEEDED', async () => {
    // Arrange
    const specFile = writeSpec('cli-aws-ok');
    const lines: string[] = [];

    // Act
    const exitCode = await runOnAws({
      specFile,
      repoRoot: REPO,
      stackName: STACK,
      log: (l) => lines.push(l),
      sfn,
      cfn,
      clients,
      pollMs: 50,
    });

    // Assert: the execution moto holds.
    expect(exitCode).toBe(0);
    const runId = /\(run (\S+)\)/.exec(lines.find((l) => l.startsWith('started ')) ?? '')?.[1];
    expect(runId).toMatch(/^cli-aws-ok-\d{8}-\d{6}-[0-9a-f]{4}$/);
    const executionArn = `${stateMachineArn.replace(':stateMachine:', ':execution:')}:${runId}`;
    const execution = await sfn.send(new DescribeExecutionCommand({ executionArn }));
    expect(execution).toMatchObject({ name: runId, status: 'SUCCEEDED' });
    const { spec, scripts } = loadSpecFile(specFile, WORKLOADS);
    expect(Object.keys(scripts)).toEqual(['fullscan_1kb.lua']);
    expect(JSON.parse(execution.input!)).toEqual({ spec, scripts, runId });
    // Assert: followed from RUNNING (the Wait) to the end, each history line printed once.
    expect(calls.filter((c) => c === 'DescribeExecutionCommand').length).toBeGreaterThanOrEqual(2);
    const started = lines.findIndex((l) => l.startsWith('started '));
    // The ETA from the plan: one cell's provisioning and teardown
    // on AWS (30 min) and two short steps (core/plan/eta.ts).
    expect(lines[started + 1]).toMatch(/^plan: ETA 31 min \(about \d\d:\d\d UTC[^)]*\), 0 of 2 steps done$/);
    expect(lines.slice(started + 2)).toEqual([
      '[1/1 r6g-r1] provisioning',
      '[1/1 r6g-r1] db.r6g.large writer + 0 reader(s), 1 step(s)',
      '[1/1 r6g-r1]   ok: 622.9 tps, 12,511.3 qps',
      'execution SUCCEEDED',
      `results: aurora-bench results --aws --run ${runId}`,
    ]);
    // Assert: the preflight ran first and refused nothing.
    expect(lines.slice(0, started).join('\n')).toMatch(
      new RegExp(
        /^Preflight of "cli-aws-ok" on AWS \(us-east-1, stack aurora-bench-moto\)[\s\S]*0 refused,/.source +
          / \d+ with warnings, \d+ ok: the account can run this experiment$/.source,
      ),
    );
  });

  it('names the execution by a given --run-id', async () => {
    // Arrange
    const specFile = writeSpec('cli-aws-run-id');
    const lines: string[] = [];

    // Act
    const exitCode = await runOnAws({
      specFile,
      repoRoot: REPO,
      stackName: STACK,
      runId: 'given-run-1',
      log: (l) => lines.push(l),
      sfn,
      cfn,
      clients,
      pollMs: 50,
    });

    // Assert
    expect(exitCode).toBe(0);
    expect(lines.find((l) => l.startsWith('started '))).toContain('(run given-run-1)');
    const executionArn = `${stateMachineArn.replace(':stateMachine:', ':execution:')}:given-run-1`;
    const execution = await sfn.send(new DescribeExecutionCommand({ executionArn }));
    expect(JSON.parse(execution.input!)).toMatchObject({ runId: 'given-run-1' });
  });

  it('prints the last events of an execution that ends between reading its history and its status', async () => {
    // Arrange: the first history read answers with what moto had then, but only once the
    // execution has ended, so the next status the CLI reads is final while its history is stale.
    const specFile = writeSpec('cli-aws-ends-between');
    const lines: string[] = [];
    const slowSfn = new SFNClient({
      region: REGION,
      endpoint: moto.endpoint,
      credentials: CREDENTIALS,
      maxAttempts: 1,
    });
    let historyReads = 0;
    const staleFirstHistory =
      (next: (args: { input: { executionArn?: string } }) => Promise<unknown>, context: { commandName?: string }) =>
      async (args: { input: { executionArn?: string } }) => {
        const result = await next(args);
        if (context.commandName === 'GetExecutionHistoryCommand' && historyReads++ === 0) {
          for (let i = 0; i < 200; i++) {
            const now = await sfn.send(new DescribeExecutionCommand({ executionArn: args.input.executionArn! }));
            if (now.status !== 'RUNNING') break;
            await new Promise((r) => setTimeout(r, 25));
          }
        }
        return result;
      };
    slowSfn.middlewareStack.add(staleFirstHistory as never, { step: 'initialize', name: 'staleFirstHistory' });

    // Act
    let exitCode: number;
    try {
      exitCode = await runOnAws({
        specFile,
        repoRoot: REPO,
        stackName: STACK,
        log: (l) => lines.push(l),
        sfn: slowSfn,
        cfn,
        clients,
        pollMs: 50,
      });
    } finally {
      slowSfn.destroy();
    }

    // Assert
    expect(exitCode).toBe(0);
    const started = lines.findIndex((l) => l.startsWith('started '));
    expect(lines.slice(started + 2, started + 6)).toEqual([
      '[1/1 r6g-r1] provisioning',
      '[1/1 r6g-r1] db.r6g.large writer + 0 reader(s), 1 step(s)',
      '[1/1 r6g-r1]   ok: 622.9 tps, 12,511.3 qps',
      'execution SUCCEEDED',
    ]);
  });

  it.each([
    [
      'stop',
      'ABORTED',
      new RegExp(
        /^stopping: StopExecution sent for \S+; it ends ABORTED and the safety net's rule on ABORTED/.source +
          / executions tears down every cell of run /.source,
      ),
    ],
    ['leave', 'RUNNING', /^left running: execution \S+ goes on/],
  ] as const)(
    'on Ctrl-C asks what to do; answered %s, the execution is %s and the follower says so',
    async (choice, status, said) => {
      // Arrange: Ctrl-C once the cell's first line is printed (the execution then waits in LongStep).
      const specFile = writeSpec(LONG_SPEC_NAME);
      const lines: string[] = [];
      const interrupt = new AbortController();
      const asked: string[] = [];
      const log = (l: string) => {
        lines.push(l);
        if (l.endsWith('provisioning')) interrupt.abort();
      };

      // Act
      const exitCode = await runOnAws({
        specFile,
        repoRoot: REPO,
        stackName: STACK,
        log,
        sfn,
        cfn,
        clients,
        pollMs: 50,
        interrupt: interrupt.signal,
        onInterrupt: (arn) => {
          asked.push(arn);
          return Promise.resolve(choice);
        },
      });

      // Assert
      const executionArn = /^started (\S+)/.exec(lines.find((l) => l.startsWith('started ')) ?? '')?.[1];
      expect(exitCode).toBe(130);
      expect(asked).toEqual([executionArn]);
      expect(lines.some((l) => said.test(l))).toBe(true);
      const execution = await sfn.send(new DescribeExecutionCommand({ executionArn: executionArn! }));
      expect(execution.status).toBe(status);
      if (choice === 'stop') expect(lines.some((l) => l.startsWith('execution ABORTED'))).toBe(true);
      else await sfn.send(new StopExecutionCommand({ executionArn: executionArn! }));
    },
  );

  it('returns 1 with the error and cause when the execution fails', async () => {
    // Arrange
    const specFile = writeSpec(FAILING_SPEC_NAME);
    const lines: string[] = [];

    // Act
    const exitCode = await runOnAws({
      specFile,
      repoRoot: REPO,
      stackName: STACK,
      log: (l) => lines.push(l),
      sfn,
      cfn,
      clients,
      pollMs: 50,
    });

    // Assert
    expect(exitCode).toBe(1);
    expect(lines).toContain(
      'execution FAILED: BenchmarkStepsFailed\ncell r6g-r1 failed: 1 of 1 steps failed\n  step rw-t2: i-0: exit code 1',
    );
    const runId = /\(run (\S+)\)/.exec(lines.find((l) => l.startsWith('started ')) ?? '')?.[1];
    const failed = await sfn.send(new ListExecutionsCommand({ stateMachineArn, statusFilter: 'FAILED' }));
    expect(failed.executions?.map((e) => e.name)).toEqual([runId]);
  });

  it('says clearly that the stack is missing, and starts nothing', async () => {
    // Arrange
    const specFile = writeSpec('cli-aws-no-stack');
    const before = await executionCount();
    const lines: string[] = [];

    // Act
    const exitCode = await runOnAws({
      specFile,
      repoRoot: REPO,
      stackName: 'no-such-stack',
      log: (l) => lines.push(l),
      sfn,
      cfn,
      clients,
      pollMs: 50,
    });

    // Assert
    expect(exitCode).toBe(1);
    expect(lines.join('\n')).toMatch(
      new RegExp(
        /REFUSE {2}deployed stack .*\n {10}- refused: stack no-such-stack: stack "no-such-stack" not/.source +
          / found \(.*does not exist\): deploy it with `npx cdk deploy` or pass --stack NAME/.source,
      ),
    );
    expect(calls).not.toContain('StartExecutionCommand');
    expect(await executionCount()).toBe(before);
  });

  it('refuses a spec over its budget in the preflight, with every other check, and starts nothing', async () => {
    // Arrange
    const specFile = writeSpec('cli-aws-budget', { budget: { maxUsd: 0.01 } });
    const before = await executionCount();
    const lines: string[] = [];
    calls.length = 0;

    // Act
    const exitCode = await runOnAws({
      specFile,
      repoRoot: REPO,
      stackName: STACK,
      log: (l) => lines.push(l),
      sfn,
      cfn,
      clients,
      pollMs: 50,
    });

    // Assert
    expect(exitCode).toBe(1);
    const text = lines.join('\n');
    expect(text).toMatch(
      /REFUSE {2}budget .*\n {10}- refused: budget\.maxUsd: estimated cost \$[\d.]+ exceeds budget\.maxUsd \$0\.01/,
    );
    expect(text).toMatch(/ok {6}network and client downloads/);
    expect(text).toMatch(/1 refused, \d+ with warnings, \d+ ok: fix what is refused above; nothing was created$/);
    // Only the stack was read (for the preflight's configuration), nothing started.
    expect(calls).toEqual(['DescribeStacksCommand']);
    expect(await executionCount()).toBe(before);
  });
});

describe('athenaResultsText against moto Athena', () => {
  /** moto hands queued results out in query order: first the shared views the lake creates. */
  const viewResults = (): MotoAthenaResult[] => athenaViewSql().map(() => ({ column_info: [], rows: [] }));

  async function queriesSent(): Promise<string[]> {
    const ids = (await athena.send(new ListQueryExecutionsCommand({ WorkGroup: WORK_GROUP }))).QueryExecutionIds ?? [];
    const queries = await Promise.all(
      ids.map(
        async (id) =>
          (await athena.send(new GetQueryExecutionCommand({ QueryExecutionId: id }))).QueryExecution?.Query ?? '',
      ),
    );
    return queries;
  }

  it('renders the latest run and its steps from the rows Athena returns', async () => {
    // Arrange
    const runId = 'moto-wf-20261121-100000-abcd';
    const run = athenaTable(
      [
        'run_id',
        'spec_name',
        'backend',
        'region',
        'status',
        'started_at',
        'ended_at',
        'error',
        'server_version',
        'sysbench_version',
        'cells',
        'dt',
      ].map((name) => ({
        name,
        type: 'varchar',
      })),
      [
        [
          runId,
          'moto-wf',
          'aws',
          REGION,
          'succeeded',
          '2026-11-21T10:00:00.000Z',
          '2026-11-21T10:40:00.000Z',
          null,
          '8.0.mysql_aurora.3.04.0',
          '1.0.20',
          '[{"cell_id":"r6g-r1","status":"succeeded","error":null}]',
          '2026-11-21',
        ],
      ],
    );
    const stepColumns: { name: string; type: string }[] = [
      { name: 'variant', type: 'varchar' },
      { name: 'repeat', type: 'integer' },
      { name: 'step_id', type: 'varchar' },
      { name: 'step_index', type: 'integer' },
      { name: 'workload', type: 'varchar' },
      { name: 'threads', type: 'integer' },
      { name: 'rate', type: 'integer' },
      { name: 'offered_tps', type: 'double' },
      { name: 'target', type: 'varchar' },
      { name: 'status', type: 'varchar' },
      { name: 'error', type: 'varchar' },
      { name: 'tps', type: 'double' },
      { name: 'qps', type: 'double' },
      { name: 'lat_avg_ms', type: 'double' },
      { name: 'lat_pct', type: 'integer' },
      { name: 'lat_pct_ms', type: 'double' },
      { name: 'errors', type: 'bigint' },
      { name: 'client_cpu_avg_pct', type: 'double' },
      { name: 'saturated_clients', type: 'bigint' },
    ];
    const steps = athenaTable(stepColumns, [
      [
        'r6g',
        '1',
        'rw-t2',
        '0',
        'rw',
        '2',
        '0',
        '0.0',
        'writer',
        'ok',
        null,
        '622.88',
        '12511.28',
        '3.2',
        '95',
        '8.13',
        '10',
        '32.0',
        '0',
      ],
      [
        'r6g',
        '1',
        'scan-t1',
        '1',
        'scan',
        '1',
        '0',
        '0.0',
        'writer',
        'failed',
        'i-0: FATAL: table missing',
        null,
        null,
        null,
        '95',
        null,
        '0',
        null,
        '0',
      ],
    ]);
    await queueAthenaResults(moto.endpoint, [...viewResults(), run, steps]);

    // Act
    const text = await athenaResultsText({ stackName: STACK, json: false, athena, cfn, s3: raw.s3 });

    // Assert
    expect(text).toContain(`Run ${runId} (moto-wf) on aws ${REGION}: succeeded`);
    expect(text).toContain('server 8.0.mysql_aurora.3.04.0, 1.0.20');
    const rw = text.split('\n').find((l) => l.includes(' rw '))!;
    for (const cell of ['r6g', 'writer', 'ok', '622.88', '12,511.28', '3.20', '8.13', '10', '32'])
      expect(rw).toContain(cell);
    const scan = text.split('\n').find((l) => l.includes(' scan '))!;
    expect(scan).toContain('failed');
    expect(scan).toContain('i-0: FATAL: table missing');
    const queries = await queriesSent();
    expect(queries.filter((q) => /CREATE OR REPLACE VIEW/.test(q))).toHaveLength(athenaViewSql().length);
    expect(queries.some((q) => /FROM latest_run/.test(q))).toBe(true);
    expect(queries.some((q) => q.includes('step_summary') && q.includes(`run_id = '${runId}'`))).toBe(true);
  });

  it('prints an SQL result as JSON with values typed by the column types', async () => {
    // Arrange
    const result = athenaTable(
      [
        { name: 'variant', type: 'varchar' },
        { name: 'tps', type: 'double' },
        { name: 'steps', type: 'bigint' },
        { name: 'saturated', type: 'boolean' },
      ],
      [
        ['r6g', '1234.5', '3', 'false'],
        ['r5', null, '0', 'true'],
      ],
    );
    await queueAthenaResults(moto.endpoint, [...viewResults(), result]);

    // Act
    const text = await athenaResultsText({
      stackName: STACK,
      json: true,
      sql:
        'SELECT variant, avg(tps) AS tps, count(*) AS steps, bool_or(client_saturated) AS saturated FROM ' +
        'steps GROUP BY 1',
      athena,
      cfn,
      s3: raw.s3,
    });

    // Assert
    expect(JSON.parse(text)).toEqual([
      { variant: 'r6g', tps: 1234.5, steps: 3, saturated: false },
      { variant: 'r5', tps: null, steps: 0, saturated: true },
    ]);
  });
});
