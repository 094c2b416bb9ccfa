/**
 * `aurora-bench run SPEC --aws-rehearsal`: the AWS path of a run, executed on this machine. The
 * state machine as synthesized from the real stack runs through aws-local-stepfunctions with every
 * Task bound to its function's bundled asset, run in the Lambda sandbox (lambda-sandbox.ts), whose
 * SDK calls come back over IPC (sdk-bridge.ts) to the rehearsal's SDK clients, which go to a moto
 * server this rehearsal starts and stops. Between those clients and moto
 * sit the emulations of what moto does not do (this directory): RDS instances become real MariaDB
 * servers (rds-emulation.ts), client and self-managed server instances are Debian 12 roots that
 * boot the stack's user data and run the SSM commands (ssm-agent.ts, instance-root.ts), CloudWatch gets the servers'
 * metrics late (cloudwatch-publisher.ts). The backend and the handlers do not know they are rehearsing.
 *
 * Before anything starts, the spec goes through what the local backend refuses (instance classes
 * without a local shape, writes sent to a reader for write forwarding, which MariaDB replicas
 * cannot forward: those workloads are left out with the local plan's own message). Afterwards the
 * rehearsal checks that nothing is left: first what the workflow (and, for a run that did not
 * succeed, the safety net's teardownRun, as the stack's EventBridge rule would run it) left in moto,
 * then, after stopping everything itself, every process it started and its directory.
 */
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { AthenaClient, CreateWorkGroupCommand } from '@aws-sdk/client-athena';
import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { DescribeInstancesCommand, EC2Client } from '@aws-sdk/client-ec2';
import { IAMClient } from '@aws-sdk/client-iam';
import {
  DescribeDBClusterParameterGroupsCommand,
  DescribeDBClustersCommand,
  DescribeDBInstancesCommand,
  DescribeDBParameterGroupsCommand,
  RDSClient,
} from '@aws-sdk/client-rds';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { ListSecretsCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { CreateTopicCommand, SNSClient } from '@aws-sdk/client-sns';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { StepTable } from '../lake/athena-storage';
import { importAthenaCompactedRun } from '../lake/compact';
import type { AwsBackendConfig } from '../backends/aws/config';
import { CLIENT_HOME, CLIENT_INSTALL_DIR, clientReadyKey, shellQuote } from '../backends/aws/runner-command';
import { destroyAwsClients, makeAwsClients, type AwsClients } from '../backends/aws/clients';
import { s3ClientConfig, sdkClientConfig, type AwsClientOptions } from '../backends/aws/client-config';
import { teardownRun } from '../backends/aws/sweeper';
import { localSpecRefusals, checkLocalDependencies } from '../backends/local/preflight';
import { LocalLakeStore } from '../backends/local/local-lake';
import { isAlive, waitForExit } from '../backends/local/processes';
import { claimRunDir, defaultRunRoot, processesMentioning, runDirOf } from '../backends/local/registry';
import { RehearsalRecorder } from '../backends/local/rehearsal-record';
import { lakeKeys } from '../lake/rows';
import type { RunContext } from '../backend';
import { STATE } from '../workflow/state-names';
import { defaultCacheRoot, ensureTemplate } from '../backends/local/template';
import { markEnded, recordInterruptedSteps, TIMED_OUT_REASON } from '../cli/run-local';
import { stopReason } from '../cli/stop-signals';
import { resultsCommand } from '../cli/results-command';
import { planNotesLine } from '../cli/plan-view';
import { parameterProblems } from '../aurora/parameter-catalogue';
import { engineOfFamily, rdsParameterProblems } from '../aurora/rds-parameters';
import { ENGINES } from '../aurora/engines';
import { cellEngine } from '../plan/types';
import { ensurePostgresTemplate, findPostgresTools } from '../backends/local/postgres-server';
import { forwardedWorkloads, PlanError } from '../plan/plan';
import { preparePlanFromFile } from '../plan/prepare';
import type { Plan, PlanNote } from '../plan/types';
import type { Scale } from '../experiment/scale';
import type { Spec } from '../experiment/schema';
import { executeLocally, type ExecutionEvent, type LocalExecutionResult } from '../workflow/local-runner';
import { progressLine } from '../workflow/progress';
import type { TaskDeps } from '../workflow/tasks/types';
import { TASK_NAMES, type TaskName } from '../workflow/task-names';
import { AthenaOnTrino } from './athena-on-trino';
import type { LakeTemplate } from './lake-glue';
import { sharedTrinoServer, startTrinoServer, type TrinoServer } from './trino-server';
import { awsCliPath, checkAwsCliReachesMoto } from './aws-cli';
import { CloudWatchPublisher } from './cloudwatch-publisher';
import { controlPlaneDied, MOTO_CREDENTIALS, sharedMotoServer, startMotoServer, type MotoServer } from './moto-server';
import { ProcessTracker } from './process-tracker';
import { RdsEmulation, type ParameterCheck } from './rds-emulation';
import { answer, interceptClient } from './sdk-intercept';
import { LambdaSandbox, type FunctionInvocations } from './lambda-sandbox';
import { answerSdkCall } from './sdk-bridge';
import { iamSummaryLine, rehearsalIam, type GatedFunction, type RehearsalIam } from './iam/rehearsal-iam';
import { motoResourceTags } from './iam/resource-tags';
import { lambdaNode, probeNode } from './lambda-node';
import { ensureBaseRoot, ensurePackageLayer, rootsUnavailable, serveAgentPackage, unmountUnder } from './instance-root';
import { SsmAgentEmulation, type BootContext } from './ssm-agent';
import { createStandingInfrastructure } from './standing-infrastructure';
import { makeRehearsalFolder } from './rehearsal-folder';
import type { RehearsalAccount, SandboxRoute } from './rehearsal-account';

/**
 * RDS's check of a parameter group change, from the Aurora parameter catalogue. RDS checks a group
 * against its family (aurora-mysql8.0: Aurora MySQL 3, aurora-mysql5.7: 2), before any cluster and
 * so any engine version uses it: the family is checked as its major version's newest release, so a
 * parameter only later minor versions have is not refused here (the plan checks the spec's version).
 * @internal exported for its tests (a test seam)
 */
export const catalogueCheck: ParameterCheck = (family, level, params) => {
  // The other engines' families: the rules their documentation states by name (core/aurora/rds-parameters.ts).
  const engine = engineOfFamily(family);
  if (engine !== undefined && engine !== 'aurora-mysql') return rdsParameterProblems(engine, params);
  const major = family === 'aurora-mysql8.0' ? 3 : family === 'aurora-mysql5.7' ? 2 : undefined;
  if (major === undefined)
    return [
      {
        name: 'DBParameterGroupFamily',
        reason: `family ${family} is not a parameter group family of an engine aurora-bench provisions`,
      },
    ];
  return parameterProblems(`${major}.99.99`, level, params);
};

/** Seconds between a server sample and its CloudWatch datapoint (AWS: one to three minutes). */
const DEFAULT_METRICS_LAG_S = 2;

/** A Lambda function of the synthesized template (lib/synthesized-workflow.ts synthesizeBundledCached). */
interface RehearsedFunction {
  readonly logicalId: string;
  /** The Task it runs (undefined: a function outside the workflow, the sweeper). */
  readonly task?: TaskName;
  /** Its synthesized asset folder (index.js as `cdk deploy` uploads it). */
  readonly assetDir: string;
  readonly handler: string;
  readonly runtime: string;
  /** The template's Environment.Variables: text, or CloudFormation references resolved at deploy time. */
  readonly environment: Readonly<Record<string, unknown>>;
  readonly memoryMb: number;
  readonly timeoutS: number;
  /** Its execution role in the template: each SDK call it makes is authorized against it (iam/). */
  readonly role: GatedFunction['role'];
}

interface SynthesizedDefinition {
  readonly definition: Record<string, unknown>;
  readonly taskByArn: ReadonlyMap<string, TaskName>;
  /** The template's functions, bundled: each Task runs its function's asset in the Lambda sandbox. */
  readonly functions: readonly RehearsedFunction[];
  /** The template itself: its Glue tables are created in moto for the rehearsal's Athena (lake-glue.ts). */
  readonly template: LakeTemplate;
}

export interface RehearsalOptions {
  readonly specFile: string;
  readonly repoRoot: string;
  readonly scale?: Scale;
  readonly runId?: string;
  /** The deployed definition (lib/synthesized-workflow.ts), for the spec's region. */
  readonly synthesize: (region: string) => SynthesizedDefinition;
  /**
   * What a Task Lambda builds from its environment (core/task-deps/aws-task-deps.ts), with these
   * clients: the rehearsal's own, for what the CLI does after an execution that did not succeed
   * (recording the interrupted steps, marking the run ended). The Tasks run in the bundles.
   */
  readonly buildTaskDeps: (config: AwsBackendConfig, clients: AwsClients) => Promise<TaskDeps>;
  /**
   * The environment the stack gives its Task functions for this configuration (awsConfigToEnv and the
   * tool's version): the values of the template's CloudFormation references, and the rehearsal's
   * shorter timings over the template's literal ones.
   */
  readonly taskEnvironment: (config: AwsBackendConfig) => Readonly<Record<string, string>>;
  /** The Lambda runtime's packages (lambda-sandbox.ts lambdaRuntimeModules), built once and cached. */
  readonly lambdaRuntimeModules: () => string;
  /** RDS's parameter rules by parameter group family (default: the Aurora parameter catalogue, catalogueCheck). */
  readonly checkParameters?: ParameterCheck;
  readonly metricsLagS?: number;
  /**
   * Wait states of the definition become this many ms (the rehearsal's resources are ready in seconds);
   * default 1 s. Each end of a Wait is a Lambda invocation and its calls to moto: shorter waits cost CPU
   * (at 200 ms a study's rehearsal took a third more than at 1 s) and, on a busy machine, no less time.
   */
  readonly pollMs?: number;
  readonly signal?: AbortSignal;
  readonly log?: (line: string) => void;
  readonly onEvent?: (event: ExecutionEvent) => void;
  /** A copy of the run's lake (moto's S3 goes with moto) is made here; default: a temp dir, removed. */
  readonly lakeDir?: string;
  /** The local run root, where the run claims its id as a local run does (default: registry.ts defaultRunRoot). */
  readonly runRoot?: string;
  /** A moto server to use (reset first, left running) instead of starting one: tests share one per file. */
  readonly motoEndpoint?: string;
  /** A Trino server to answer Athena on (scripts/trino.sh start; left running) instead of starting one. */
  readonly trinoEndpoint?: string;
  /**
   * An account shared with other rehearsals (rehearsal-account.ts): its moto server instead of
   * motoEndpoint, reset before its first rehearsal only, its standing infrastructure, and its Task
   * functions' warm environments.
   */
  readonly account?: RehearsalAccount;
  /** Master passwords of new clusters (default: generated the way RDS generates them). */
  readonly masterPassword?: () => string;
  /**
   * The launch templates' user data as the stack renders it, and the Debian packages it installs
   * (bin/aws-rehearsal.ts, from lib/client-user-data.ts): an instance boots it in a Debian root. Without
   * it an instance runs bootCommands (below) on this machine.
   */
  readonly boot?: (
    config: AwsBackendConfig,
  ) => Readonly<Record<BootContext['role'], { readonly userData: string; readonly packages: readonly string[] }>>;
  /**
   * Called with the SDK clients the handlers will use, before the emulations are put on them: a
   * middleware added here sees each call first, so a test can rehearse a variant of the backend's
   * calls (e.g. a CreateDBCluster without DatabaseName), and the emulations and moto see the variant.
   */
  readonly adjustClients?: (clients: AwsClients) => void;
}

export interface RehearsalResult extends LocalExecutionResult {
  readonly plan: Plan;
  /** The results table of the run (as `aurora-bench results` prints it), from the lake copy. */
  readonly results: string;
  /** What the workflow left in moto or running (empty when it cleaned up after itself). */
  readonly leftBehind: readonly string[];
  /** What was still there after the rehearsal stopped everything itself (should always be empty). */
  readonly notCleaned: readonly string[];
  /** What the safety net's teardownRun deleted for a run that did not succeed. */
  readonly safetyNetDeleted: readonly string[];
  /** Each Task's function as the sandbox ran it: its template logical id, invocations, cold starts, processes. */
  readonly functions: ReadonlyMap<TaskName, FunctionInvocations & { readonly logicalId: string }>;
  /** The IAM gate the functions' calls went through, with the roles it evaluated (iam/rehearsal-iam.ts). */
  readonly iam?: RehearsalIam;
}

/** The lines that say what a rehearsal is and is not, printed before it starts. */
/**
 * AwsBackendConfig.parameterGroupSettleS here: the wait is taken
 * (and its path rehearsed), only shorter than RDS's 5 minutes.
 */
const REHEARSAL_PARAMETER_GROUP_SETTLE_S = 3;
/**
 * AwsBackendConfig.volumeMetricsPeriodS here, and the interval the rehearsal's CloudWatch publishes
 * a cluster volume's I/O at: Aurora's 5 minutes would hold every cell up to 5 minutes for the
 * interval covering its last step's end, for steps of seconds.
 */
const REHEARSAL_VOLUME_PERIOD_S = 5;
/**
 * AwsBackendConfig.metricsPeriodS here: the rehearsal's CloudWatch holds per-second samples
 * (cloudwatch-publisher.ts), so a period of seconds has data, and a step of seconds waits that long
 * for the period covering its end instead of up to a minute.
 */
const REHEARSAL_METRICS_PERIOD_S = 5;

/** AZ letters a shared account has a subnet in (us-east-1 has six AZs), and any other a spec names. */
const ACCOUNT_AZ_LETTERS: readonly string[] = ['a', 'b', 'c', 'd', 'e', 'f'];

function rehearsalScope(
  serverVersion: string,
  engines: readonly string[],
  lagS: number,
  booted: boolean,
  functionNode: string,
): string[] {
  return [
    'AWS rehearsal: the synthesized state machine runs on this machine, each Task as its bundled Lambda ' +
      `function (the asset \`cdk deploy\` uploads) in a sandbox process on Node.js ${functionNode};`,
    '  the AWS APIs are a moto server, the databases real MariaDB (or, for the PostgreSQL engines, PostgreSQL) ' +
      'servers, the clients an emulated SSM agent running bash.',
    'Not rehearsed:',
    `  - the engines themselves: MariaDB ${serverVersion} or PostgreSQL on 127.0.0.1 stand in ` +
      `for ${engines.join(', ')} (no shared storage or EBS volumes, no Aurora- or RDS-only parameters, no write ` +
      `forwarding: its Forwarding* CloudWatch metrics stay empty, their windows incomplete)`,
    ...(booted
      ? [
          "  - the AMI: a Debian 12 root made by debootstrap from Debian's archive (minbase, curl, " +
            "ca-certificates) stands in for Debian's EC2 image; its packages are installed once per package list " +
            "into a cached layer, so the user data's apt-get finds them there " +
            '(test/integration/client-boot.test.ts installs them from the clean root)',
          "  - around the unmodified user data: chroot instead of a VM (this machine's kernel and CPU " +
            "architecture, no systemd: systemctl and shutdown are stand-ins, the dead-man's switch's shutdown is " +
            "only recorded), the instance metadata at 127.0.0.1 through curl's connect-to, moto's keys for the " +
            'instance profile (also as its iam/security-credentials, which a not-ready marker uploaded by curl ' +
            "before apt signs with; moto checks no signature), the AWS CLI given --endpoint-url (Debian's " +
            '2.9.19 predates AWS_ENDPOINT_URL)',
          "  - the SSM agent: moto's S3 serves the rehearsal's amazon-ssm-agent package where AWS serves the " +
            'real one; its service registers the instance with the emulated agent, which runs the commands in ' +
            'the root; the CloudWatch agent package is not served (its install fails softly, as designed)',
        ]
      : [
          "  - a real client AMI and its user data: an emulated client boots with this machine's sysbench, no " +
            'package install',
        ]),
    "  - the Lambda runtime: this machine's Node.js and AWS SDK stand in for nodejs22.x's; a function's SDK " +
      "calls reach the emulations and moto over the sandbox's IPC channel (no signing, no HTTPS, no X-Ray); the " +
      "template's timings are replaced by the rehearsal's shorter ones",
    "  - IAM beyond the functions' own calls: each SDK call a function makes is authorized against its role in " +
      'the synthesized template (the line after the run says how many), but not what a service does with ' +
      "the caller's permissions (RunInstances' iam:PassRole, Athena's Glue and S3 reads), nor the clients' and " +
      "servers' instance roles, nor resource policies and SCPs (test/cdk checks those actions against the roles)",
    `  - real timings: instances are available in seconds, not 10-20 minutes; CloudWatch datapoints ` +
      `arrive ${lagS} s late, not 1-3 minutes; a cluster waits ` +
      String(REHEARSAL_PARAMETER_GROUP_SETTLE_S) +
      ` s, not 5 minutes, after its parameter groups were set; the minute series are collected per ` +
      `${REHEARSAL_METRICS_PERIOD_S} s period, not per minute; a cluster volume's VolumeReadIOPs/VolumeWriteIOPs ` +
      `come per ${REHEARSAL_VOLUME_PERIOD_S} s interval, not per 5 minutes, ${lagS} s after it closes`,
    '  - Performance Insights: not emulated (its API answers with no datapoints)',
    "  - real network limits and instance class performance: all traffic is loopback on this machine's CPUs",
  ];
}

/**
 * The workloads that send writes to a reader of a write-forwarding variant, left out of the
 * rehearsal with a note: MariaDB replicas cannot forward writes, and the AWS path's clients run
 * plain sysbench (the local backend's client-side emulation, wf_emulation.lua, is not on it).
 */
function withoutForwardedWorkloads(spec: Spec): { spec: Spec; notes: PlanNote[] } {
  const left = new Map<number, string[]>();
  for (const v of spec.variants) {
    for (const w of forwardedWorkloads(spec, v)) {
      const i = spec.workloads.indexOf(w);
      left.set(i, [...(left.get(i) ?? []), v.name]);
    }
  }
  if (left.size === 0) return { spec, notes: [] };
  const notes: PlanNote[] = [...left].map(([i, variants]) => ({
    level: 'refused',
    path: `workloads[${i}]`,
    message:
      `workload "${spec.workloads[i]!.name}" on variant "${variants.join('", "')}" sends writes to a reader: ` +
      `Aurora local write forwarding needs AWS, and MariaDB replicas cannot forward writes; left out of the ` +
      `AWS rehearsal` +
      (spec.variants.length > 1 ? ' (for every variant: workloads are not per variant)' : ''),
  }));
  const workloads = spec.workloads.filter((_, i) => !left.has(i));
  if (workloads.length === 0) throw new PlanError(notes);
  return { spec: { ...spec, workloads }, notes };
}

/**
 * What an emulated instance runs at boot: the user data's install steps that do not change the
 * machine (lib/client-user-data.ts clientInstallCommands), with the instance id the metadata would
 * give: the runner from the bucket into the client home, then client/client-ready.sh, which proves
 * that this machine's sysbench works through the report hook and writes the ready marker locally
 * and to s3://<bucket>/clients/<instance-id>/ready.json, where checkClientsReady reads it. Used
 * only without `boot` (RehearsalOptions), which boots the real user data instead.
 */
function bootCommands(config: AwsBackendConfig) {
  return (ctx: BootContext): string[] => [
    'set -euo pipefail',
    `RUNNER_S3_URI=${shellQuote(config.runnerS3Uri)}`,
    `ready_marker_uri=${shellQuote(`s3://${config.bucket}/${clientReadyKey(ctx.instanceId)}`)}`,
    `mkdir -p "${CLIENT_INSTALL_DIR}"`,
    `aws s3 cp --only-show-errors --recursive "$RUNNER_S3_URI" "${CLIENT_INSTALL_DIR}/"`,
    `chmod +x "${CLIENT_INSTALL_DIR}"/*.sh`,
    // A server instance installs its MariaDB (client/server-install.sh: nothing to install here, it
    // finds this machine's mariadbd and writes the marker client/server-setup.sh waits for).
    ctx.role === 'server'
      ? `"${CLIENT_INSTALL_DIR}/server-install.sh"`
      : `"${CLIENT_INSTALL_DIR}/client-ready.sh" --marker-uri "$ready_marker_uri"`,
  ];
}

/**
 * The Debian machines the instances boot (ssm-agent.ts `machines`): the cached root layers per role
 * (instance-root.ts), the user data, and the rehearsal's SSM agent package in moto's S3 where the
 * user data downloads AWS's.
 */
async function bootMachines(
  boot: ReturnType<NonNullable<RehearsalOptions['boot']>>,
  s3: S3Client,
  region: string,
  packageDir: string,
  log: (line: string) => void,
): Promise<NonNullable<ConstructorParameters<typeof SsmAgentEmulation>[0]['machines']>> {
  const base = await ensureBaseRoot({ log });
  const layers = {
    client: [await ensurePackageLayer(base, boot.client.packages, { log }), base],
    server: [await ensurePackageLayer(base, boot.server.packages, { log }), base],
  };
  await serveAgentPackage(s3, region, packageDir);
  return { layers: (role) => layers[role], userData: (role) => boot[role].userData };
}

/**
 * Every client path the stack and the backend write is ${AURORA_BENCH_HOME:-/opt/aurora-bench}/...
 * (core/backends/aws/runner-command.ts CLIENT_HOME): an emulated client runs in its own home only
 * because of that. A command naming /opt/aurora-bench any other way would run outside it (on this
 * machine, in its /opt), so the rehearsal refuses it instead.
 */
function bareClientPaths(commands: readonly string[]): string[] {
  return commands.filter((c) => /\/opt\/aurora-bench/.test(c.split(CLIENT_HOME).join('')));
}

/**
 * What the stack gives the ComputeVerdicts Task (lib/results-lake.ts, lib/alerts.ts), in moto: an
 * Athena work group over the lake and the regression topic (moto keeps what is published to it).
 */
async function verdictInfrastructure(common: AwsClientOptions, config: AwsBackendConfig): Promise<AwsBackendConfig> {
  const clientConfig = sdkClientConfig(common);
  const athena = new AthenaClient(clientConfig);
  const sns = new SNSClient(clientConfig);
  try {
    const workGroup = 'aurora-bench';
    await athena.send(
      new CreateWorkGroupCommand({
        Name: workGroup,
        Configuration: { ResultConfiguration: { OutputLocation: `s3://${config.bucket}/athena-results/` } },
      }),
    );
    const topic = await sns.send(new CreateTopicCommand({ Name: 'aurora-bench-regressions' }));
    return {
      ...config,
      athenaWorkGroup: workGroup,
      glueDatabase: 'aurora_bench',
      alertTopicArn: topic.TopicArn!,
      eventBusName: 'default',
    };
  } finally {
    athena.destroy();
    sns.destroy();
  }
}

/** A runs-table object of the lake copy with its rows marked as a rehearsal's (RunRow.backend). */
function markedRehearsal(key: string, body: Uint8Array): Uint8Array {
  if (!/^tables\/runs\//.test(key)) return body;
  const lines = Buffer.from(body).toString('utf8').split('\n');
  const marked = lines.map((l) =>
    l.trim() === '' ? l : JSON.stringify({ ...(JSON.parse(l) as object), backend: 'aws-rehearsal' }),
  );
  return Buffer.from(marked.join('\n'), 'utf8');
}

/**
 * The run's row as PlanRun wrote it (status running) from moto's S3 into the local lake, marked a
 * rehearsal's: if this process is killed, the lake has the run and `cleanup` records how it ended.
 * The copy at the end (copyLake) replaces it with the final row.
 */
async function copyRunRow(s3: S3Client, config: AwsBackendConfig, lakeDir: string, output: unknown): Promise<void> {
  const run = (output as { run?: RunContext } | undefined)?.run;
  if (run === undefined) return;
  const key = lakeKeys.run(run.dt, run.runId);
  const lake = new LocalLakeStore(lakeDir);
  await lake.assertWritable();
  const object = await s3.send(new GetObjectCommand({ Bucket: config.bucket, Key: `${config.lakePrefix}${key}` }));
  await lake.put(key, markedRehearsal(key, await object.Body!.transformToByteArray()));
}

/** The run's lake objects from moto's S3 into the local lake `dir`; `scratch` is the rehearsal's folder. */
async function copyLake(s3: S3Client, config: AwsBackendConfig, dir: string, scratch: string): Promise<number> {
  const lake = new LocalLakeStore(dir);
  // A lake a newer aurora-bench wrote is refused before a row
  // is copied into it; an older one is brought to this version.
  await lake.assertWritable();
  let token: string | undefined;
  let count = 0;
  const athenaParquet = new Map<string, { table: StepTable; dt: string; runId: string; files: string[] }>();
  // In the rehearsal's folder, so that nothing of it is left outside that folder when the process is killed.
  const parquetDir = mkdtempSync(join(scratch, 'parquet-'));
  do {
    const page = await s3.send(
      new ListObjectsV2Command({
        Bucket: config.bucket,
        Prefix: config.lakePrefix,
        ...(token ? { ContinuationToken: token } : {}),
      }),
    );
    for (const o of page.Contents ?? []) {
      const key = o.Key!.slice(config.lakePrefix.length);
      // FinishRun's compaction moved the run's step tables to Athena's Parquet tables (compacted/<table>/dt=/run_id=/).
      const compacted = /^compacted\/([a-z_]+)\/dt=([^/]+)\/run_id=([^/]+)\/[^/]+$/.exec(key);
      if (!/^tables\//.test(key) && !compacted) continue;
      const body = await (
        await s3.send(new GetObjectCommand({ Bucket: config.bucket, Key: o.Key! }))
      ).Body!.transformToByteArray();
      if (compacted) {
        const [, table, dt, runId] = compacted as unknown as [string, StepTable, string, string];
        const id = `${table}\n${dt}\n${runId}`;
        const group = athenaParquet.get(id) ?? { table, dt, runId, files: [] };
        const file = join(parquetDir, `${athenaParquet.size}-${group.files.length}.parquet`);
        writeFileSync(file, body);
        athenaParquet.set(id, { ...group, files: [...group.files, file] });
      } else {
        await lake.put(key, markedRehearsal(key, body));
      }
      count++;
    }
    token = page.NextContinuationToken;
  } while (token);
  try {
    for (const g of athenaParquet.values())
      await importAthenaCompactedRun(dir, g.table, { runId: g.runId, dt: g.dt }, g.files);
  } finally {
    rmSync(parquetDir, { recursive: true, force: true });
  }
  return count;
}

/** The function of each Task in the synthesized template; a Task without one fails here. */
function taskFunctions(functions: readonly RehearsedFunction[]): Map<TaskName, RehearsedFunction> {
  const byTask = new Map<TaskName, RehearsedFunction>();
  for (const f of functions) if (f.task !== undefined) byTask.set(f.task, f);
  const missing = TASK_NAMES.filter((t) => !byTask.has(t));
  if (missing.length > 0)
    throw new Error(`the synthesized template has no function for the Task(s) ${missing.join(', ')}`);
  return byTask;
}

/**
 * A function's environment as the deployed stack gives it: the template's Environment, each
 * CloudFormation reference (the bucket, subnets, launch templates, ...) resolved to the rehearsal's
 * resource of that variable, the rehearsal's values over the template's literal ones where it has
 * its own (shorter timings: the metrics delay, the parameter group settle time), and the variables
 * the rehearsal's configuration adds.
 */
function functionEnvironment(
  fn: RehearsedFunction,
  rehearsal: Readonly<Record<string, string>>,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(fn.environment)) {
    const own = rehearsal[name];
    if (own !== undefined) env[name] = own;
    else if (typeof value === 'string') env[name] = value;
    else
      throw new Error(
        `function ${fn.logicalId}: its Environment variable ${name} is a CloudFormation reference the ` +
          `rehearsal has no value for: ` +
          JSON.stringify(value).slice(0, 200),
      );
  }
  return { ...env, ...rehearsal };
}

/**
 * CheckCellReady's answer for a ready cluster with the values the emulated writer's MariaDB stand-in
 * was given (sizes scaled to this machine like the local backend's, spellings MariaDB's) as the
 * `requestedParameters` the prepare check compares the server with (effective-config.ts: "where the
 * backend had to translate them"). The parameter groups still answer the values set in them, as RDS
 * does, and the backend checks those against the spec; only the comparison with the running server
 * needs the stand-in's translation, and no RDS API carries a per-instance value.
 */
function withEmulatedParameters(payload: unknown, rds: RdsEmulation): unknown {
  interface Member {
    readonly writer?: { readonly instanceId?: string };
    readonly backendState?: Record<string, string>;
  }
  // The answer is a group's: every member cell's resources (core/workflow/tasks/group.ts).
  const state = payload as { ready?: boolean; resources?: { members?: readonly Member[] } } | null;
  const members = state?.resources?.members;
  if (state?.ready !== true || members === undefined) return payload;
  const withApplied = (m: Member): Member => {
    const writer = m.writer?.instanceId;
    const applied = writer === undefined || m.backendState === undefined ? undefined : rds.appliedParameters(writer);
    if (applied === undefined) return m;
    return { ...m, backendState: { ...m.backendState, requestedParameters: JSON.stringify(applied) } };
  };
  return { ...state, resources: { ...state.resources, members: members.map(withApplied) } };
}

/**
 * How long one request to moto may take: moto answers in milliseconds, seconds on a loaded machine; a
 * request that gets no answer (a stuck connection) fails and is retried instead of holding the
 * rehearsal forever.
 */
const MOTO_REQUEST_TIMEOUT_MS = 60_000;

/** The options of every SDK client the rehearsal points at moto. */
function motoClientOptions(region: string, endpoint: string): AwsClientOptions {
  return { region, endpoint, credentials: { ...MOTO_CREDENTIALS }, requestTimeoutMs: MOTO_REQUEST_TIMEOUT_MS };
}

/** Everything of the run still in moto: clusters, DB instances, parameter groups, live clients, secrets. */
async function leftInMoto(endpoint: string, region: string): Promise<string[]> {
  const common = sdkClientConfig(motoClientOptions(region, endpoint));
  const rds = new RDSClient(common);
  const ec2 = new EC2Client(common);
  const secrets = new SecretsManagerClient(common);
  try {
    const left: string[] = [];
    for (const c of (await rds.send(new DescribeDBClustersCommand({}))).DBClusters ?? [])
      left.push(`RDS cluster ${c.DBClusterIdentifier}`);
    for (const i of (await rds.send(new DescribeDBInstancesCommand({}))).DBInstances ?? [])
      left.push(`RDS instance ${i.DBInstanceIdentifier}`);
    for (const g of (await rds.send(new DescribeDBClusterParameterGroupsCommand({}))).DBClusterParameterGroups ?? []) {
      if (!g.DBClusterParameterGroupName?.startsWith('default.'))
        left.push(`RDS cluster parameter group ${g.DBClusterParameterGroupName}`);
    }
    for (const g of (await rds.send(new DescribeDBParameterGroupsCommand({}))).DBParameterGroups ?? []) {
      if (!g.DBParameterGroupName?.startsWith('default.')) left.push(`RDS parameter group ${g.DBParameterGroupName}`);
    }
    const reservations =
      (
        await ec2.send(
          new DescribeInstancesCommand({
            Filters: [{ Name: 'instance-state-name', Values: ['pending', 'running', 'stopping', 'stopped'] }],
          }),
        )
      ).Reservations ?? [];
    for (const r of reservations)
      for (const i of r.Instances ?? []) left.push(`EC2 instance ${i.InstanceId} (${i.State?.Name})`);
    for (const s of (await secrets.send(new ListSecretsCommand({}))).SecretList ?? []) left.push(`secret ${s.Name}`);
    return left;
  } finally {
    rds.destroy();
    ec2.destroy();
    secrets.destroy();
  }
}

export async function runRehearsal(options: RehearsalOptions): Promise<RehearsalResult> {
  const log = options.log ?? (() => undefined);
  const lagS = options.metricsLagS ?? DEFAULT_METRICS_LAG_S;

  // ------------------------------------------------ refusals first: nothing starts when the spec cannot run
  // Planned for AWS; the local servers that stand in for Aurora refuse what a local run refuses.
  // The workloads the rehearsal leaves out are its own notes, which `aurora-bench plan` does not
  // list: printed in full, the plan's other notes as one line, as a local run prints them.
  const leftOut: PlanNote[] = [];
  const prepared = preparePlanFromFile(options.specFile, join(options.repoRoot, 'client', 'workloads'), {
    backend: 'aws',
    scale: options.scale ?? 'full',
    backendRefusals: localSpecRefusals,
    narrow: (s) => {
      const narrowed = withoutForwardedWorkloads(s);
      leftOut.push(...narrowed.notes);
      return narrowed;
    },
    ...(options.runId ? { runId: options.runId } : {}),
  });
  const { spec, plan } = prepared;
  const versions = await checkLocalDependencies();
  const cliPath = awsCliPath();
  const definition = options.synthesize(plan.region);

  const engines = [
    ...new Set(plan.cells.map((c) => cellEngine(plan, c)).map((e) => `${ENGINES[e.kind].label} ${e.version}`)),
  ];
  if (options.boot) {
    const why = rootsUnavailable();
    if (why) throw new Error(`the AWS rehearsal boots its instances in Debian roots: ${why}`);
  }
  // The functions' Node.js, checked against each function's Runtime when the sandbox adds it.
  const functionNode = probeNode(lambdaNode(options.repoRoot));
  const scope = rehearsalScope(versions.serverVersion, engines, lagS, options.boot !== undefined, functionNode.version);
  for (const line of scope) log(line);
  for (const n of leftOut) log(`[${n.level}] ${n.path}: ${n.message}`);
  const notesLine = planNotesLine(
    prepared.notes.filter((n) => !leftOut.includes(n)),
    [options.specFile, '--aws', ...(options.scale === 'small' ? ['--scale', 'small'] : [])],
  );
  if (notesLine !== null) log(notesLine);
  log(`run ${plan.runId}: ${plan.cells.length} cells`);

  const dir = await makeRehearsalFolder();
  // The run claims its id in the local run root as a local run does (registry.ts): a live run of the
  // id is refused, and what a rehearsal killed with SIGKILL leaves (its record, rehearsal-record.ts),
  // `cleanup` settles, recording the run's end in the lake it was to be copied into.
  const runRoot = options.runRoot ?? defaultRunRoot();
  const runDir = runDirOf(runRoot, plan.runId);
  const lakeDir = options.lakeDir ?? join(dir, 'lake');
  try {
    await claimRunDir(runRoot, plan.runId, { lakeRoot: lakeDir, runKey: lakeKeys.run(plan.dt, plan.runId) });
  } catch (e) {
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
  const recorder = new RehearsalRecorder(runDir, dir);
  const tracker = new ProcessTracker((tracked) => recorder.setProcesses(tracked));
  // A forced exit (a second Ctrl-C) skips the finally below. Processes first: a server still
  // writing into the directory makes its removal fail (ENOTEMPTY). Nothing may throw out of an exit
  // handler, or Node skips the handlers after it (the moto server's among them), and the server
  // would outlive the rehearsal.
  const removeDir = () => {
    try {
      tracker.killAllSync();
      // Anything else started under the directory (a client shell's child, a one-off SQL client).
      for (const pid of processesMentioning(dir + '/')) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone in between
        }
      }
    } catch {
      // the tracker's own exit hook tries again
    }
    try {
      // The instances' roots are overlays mounted under the directory (instance-root.ts), and exit
      // handlers run in the order they were added: unmount them here, or the removal stops at a
      // mount point and the directory outlives the rehearsal.
      unmountUnder(dir);
    } catch {
      // nothing mounted, or no /proc to read: the removal below says what is left
    }
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    } catch {
      // what is left is reported by nobody: the process is exiting
    }
  };
  process.once('exit', removeDir);
  const notCleaned: string[] = [];
  const leftBehind: string[] = [];
  const safetyNetDeleted: string[] = [];
  let moto: MotoServer | undefined;
  let clients: AwsClients | undefined;
  let raw:
    | {
        ec2: EC2Client;
        rds: RDSClient;
        s3: S3Client;
        iam: IAMClient;
        secrets: SecretsManagerClient;
        cloudwatch: CloudWatchClient;
      }
    | undefined;
  let rds: RdsEmulation | undefined;
  let agent: SsmAgentEmulation | undefined;
  let publisher: CloudWatchPublisher | undefined;
  let results: string;
  let result: LocalExecutionResult;
  // What the run was doing, for the error a dead moto server gives (controlPlaneDied).
  let doing = 'the rehearsal set up its standing infrastructure';
  let failedOnce = false;
  let sandbox: LambdaSandbox | undefined;
  let held = false;
  let functionsOf: () => RehearsalResult['functions'] = () => new Map();
  let gated: RehearsalIam | undefined;
  let runRowCopied: Promise<unknown> = Promise.resolve();
  let trino: TrinoServer | undefined;
  let athenaOnTrino: AthenaOnTrino | undefined;
  try {
    const account = options.account?.take();
    if (account) held = true;
    moto = options.account
      ? await sharedMotoServer(options.account.motoEndpoint, { reset: account!.first })
      : options.motoEndpoint
        ? await sharedMotoServer(options.motoEndpoint)
        : await startMotoServer(options.repoRoot);
    if (moto.pid > 0) recorder.addProcess({ pid: moto.pid, marker: 'moto_server', group: false }, moto.logFile);
    log(`moto server on ${moto.endpoint}${moto.pid > 0 ? ` (pid ${moto.pid})` : ''}; rehearsal files in ${dir}`);
    const common = motoClientOptions(plan.region, moto.endpoint);
    const rawConfig = sdkClientConfig(common);
    raw = {
      ec2: new EC2Client(rawConfig),
      rds: new RDSClient(rawConfig),
      s3: new S3Client(s3ClientConfig(common)),
      iam: new IAMClient(rawConfig),
      secrets: new SecretsManagerClient(rawConfig),
      cloudwatch: new CloudWatchClient(rawConfig),
    };
    // The backend collects a window again once its datapoints are due:
    // the publisher's lag plus its 0.5 s tick and the sampler's 1 s.
    const createStanding = async (azLetters: readonly string[]): Promise<AwsBackendConfig> => ({
      ...(await verdictInfrastructure(
        common,
        await createStandingInfrastructure(raw!, {
          region: plan.region,
          azLetters,
          repoRoot: options.repoRoot,
          metricsPublishDelayS: lagS + 2,
        }),
      )),
      parameterGroupSettleS: REHEARSAL_PARAMETER_GROUP_SETTLE_S,
      volumeMetricsPeriodS: REHEARSAL_VOLUME_PERIOD_S,
      metricsPeriodS: REHEARSAL_METRICS_PERIOD_S,
    });
    const specLetters = spec.variants.flatMap((v) => (v.az ? [v.az] : []));
    // A shared account has a subnet in each of the Region's usual AZs, as a stack's VPC spans its AZs
    // whatever the execution: the rehearsals then give the functions the same environment.
    const accountLetters = [...new Set([...ACCOUNT_AZ_LETTERS, ...specLetters])].sort();
    const config = options.account
      ? await options.account.standing(`${plan.region} ${lagS} ${options.repoRoot} ${accountLetters.join('')}`, () =>
          createStanding(accountLetters),
        )
      : await createStanding(specLetters);
    const template = await ensureTemplate(versions.tools, versions.serverVersion, undefined, 'rds');

    const cw = new CloudWatchPublisher({
      cloudwatch: raw.cloudwatch,
      lagS,
      volumePeriodS: REHEARSAL_VOLUME_PERIOD_S,
      log,
    });
    publisher = cw;
    rds = new RdsEmulation({
      tools: versions.tools,
      template,
      serverVersion: versions.serverVersion,
      dir: join(dir, 'db'),
      secrets: raw.secrets,
      tracker,
      checkParameters: options.checkParameters ?? catalogueCheck,
      postgres: async () => {
        const tools = findPostgresTools();
        return { tools, template: await ensurePostgresTemplate(tools) };
      },
      ownedRoot: dir,
      ...(options.masterPassword ? { masterPassword: options.masterPassword } : {}),
      onMembersChanged: (m) => cw.membersChanged(m),
      log,
    });
    const machines = options.boot
      ? await bootMachines(options.boot(config), raw.s3, plan.region, join(dir, 'agent-package'), log)
      : undefined;
    agent = new SsmAgentEmulation({
      dir: join(dir, 'clients'),
      ...(machines ? { machines } : {}),
      region: plan.region,
      motoEndpoint: moto.endpoint,
      credentials: MOTO_CREDENTIALS,
      s3: raw.s3,
      tracker,
      extraPath: cliPath,
      bootCommands: bootCommands(config),
      // A self-managed server's EC2 metrics (AWS/EC2), from its mariadbd.
      onServerChanged: (instanceId, server) => cw.ec2ServerChanged(instanceId, server),
      log,
    });
    await mkdir(join(dir, 'cli-check'));
    await checkAwsCliReachesMoto(agent.env(join(dir, 'cli-check')), config.bucket);
    clients = makeAwsClients({ ...common, maxAttempts: 2 });
    // Middleware added first runs first: adjustments, then the client-home check, then the emulations.
    options.adjustClients?.(clients);
    interceptClient(clients.ssm, 'auroraBenchRehearsalClientHome', async (command, input, forward) => {
      const bare =
        command === 'SendCommand'
          ? bareClientPaths((input['Parameters'] as Record<string, string[]> | undefined)?.['commands'] ?? [])
          : [];
      if (bare.length > 0)
        throw new Error(
          `the rehearsal cannot run a client command that names /opt/aurora-bench ` +
            `outside ${CLIENT_HOME}: ${bare.join(' | ')}`,
        );
      return forward();
    });
    rds.install(clients.rds);
    agent.install(clients);
    // moto's Athena runs no SQL: Trino, the engine of Athena engine version 3, answers it (athena-on-trino.ts).
    trino = options.trinoEndpoint
      ? await sharedTrinoServer(options.trinoEndpoint)
      : await startTrinoServer(options.repoRoot);
    log(`Athena on Trino ${trino.version} at ${trino.endpoint} (moto's Glue and S3 behind it)`);
    athenaOnTrino = new AthenaOnTrino({
      trinoEndpoint: trino.endpoint,
      bucket: config.bucket,
      lakePrefix: config.lakePrefix,
      motoEndpoint: moto.endpoint,
      region: plan.region,
      template: definition.template,
      // The run's own day onwards: the lake holds nothing older (lake-glue.ts LakeGlueTarget).
      projectionRange: `${plan.dt},NOW`,
      log,
    });
    athenaOnTrino.install(clients.athena);
    // Performance Insights is not emulated: GetResourceMetrics answers as for an instance without PI data.
    interceptClient(clients.pi, 'auroraBenchRehearsalPi', async (command, input, forward) =>
      command === 'GetResourceMetrics'
        ? answer({
            Identifier: input['Identifier'],
            AlignedStartTime: input['StartTime'],
            AlignedEndTime: input['EndTime'],
            MetricList: [],
          })
        : forward(),
    );
    cw.start();

    const emulation = rds;
    const deps: TaskDeps = await options.buildTaskDeps(config, clients);
    const bridged = clients;
    const functionLogs = new Map<string, string[]>();
    const byTask = taskFunctions(definition.functions);
    const environment = options.taskEnvironment(config);
    const runtimeModules = options.lambdaRuntimeModules();
    const functions = [...byTask.values()].map((fn) => ({
      name: fn.logicalId,
      assetDir: fn.assetDir,
      handler: fn.handler,
      runtime: fn.runtime,
      environment: functionEnvironment(fn, environment),
      memoryMb: fn.memoryMb,
      timeoutS: fn.timeoutS,
    }));
    // IAM: each call is authorized against its function's role before it is answered (iam/iam-gate.ts).
    const iam = rehearsalIam({
      repoRoot: options.repoRoot,
      region: plan.region,
      functions: [...byTask.values()].map((fn) => ({
        name: fn.logicalId,
        templateEnvironment: fn.environment,
        environment: functionEnvironment(fn, environment),
        role: fn.role,
      })),
      resourceTags: motoResourceTags(raw),
    });
    gated = iam;
    const route: SandboxRoute = {
      sdk: async (name, call) => (await iam.gate.check(name, call)) ?? answerSdkCall(bridged, call),
      onLog: (name, line) => {
        const lines = functionLogs.get(name) ?? [];
        lines.push(line);
        if (lines.length > 20) lines.shift();
        functionLogs.set(name, lines);
      },
    };
    const newSandbox = (sandboxDir: string, to: SandboxRoute): LambdaSandbox => {
      const created = new LambdaSandbox({
        dir: sandboxDir,
        runtimeModules,
        node: functionNode.path,
        region: plan.region,
        // Never used to sign (every SDK call goes through the bridge), but what Lambda gives a function's role.
        extraEnvironment: {
          AWS_ACCESS_KEY_ID: MOTO_CREDENTIALS.accessKeyId,
          AWS_SECRET_ACCESS_KEY: MOTO_CREDENTIALS.secretAccessKey,
          AWS_SESSION_TOKEN: 'rehearsal',
        },
        sdk: to.sdk,
        onLog: to.onLog,
      });
      for (const f of functions) created.add(f);
      return created;
    };
    const shared = options.account;
    const lambda = shared
      ? await shared.sandbox(
          JSON.stringify({ region: plan.region, runtimeModules, functions }),
          (to) => newSandbox(join(shared.dir, 'lambda'), to),
          route,
        )
      : newSandbox(join(dir, 'lambda'), route);
    if (!shared) sandbox = lambda;
    // This rehearsal's invocations: a shared account's functions were invoked by earlier ones too.
    const before = lambda.invocations();
    functionsOf = () =>
      new Map(
        [...byTask].map(([task, fn]) => {
          const now = lambda.invocations().get(fn.logicalId)!;
          const earlier = before.get(fn.logicalId) ?? { invocations: 0, coldStarts: 0, pids: [] };
          return [
            task,
            {
              logicalId: fn.logicalId,
              invocations: now.invocations - earlier.invocations,
              coldStarts: now.coldStarts - earlier.coldStarts,
              pids: now.pids.slice(earlier.pids.length),
            },
          ];
        }),
      );
    const s3 = raw.s3;
    result = await executeLocally({
      deps,
      invokeTask: async (task, event) => {
        const fn = byTask.get(task)!;
        const outcome = await lambda.invoke(fn.logicalId, event);
        if (outcome.ok)
          return task === 'check-cell-ready' ? withEmulatedParameters(outcome.payload, emulation) : outcome.payload;
        if (/^(Runtime|Sandbox)\./.test(outcome.errorType)) {
          log(
            `[lambda] ${task} (function ${fn.logicalId}): ${outcome.errorType}: ${outcome.errorMessage.split('\n')[0]}`,
          );
          for (const line of functionLogs.get(fn.logicalId)?.slice(-5) ?? []) log(`[lambda]   ${line.slice(0, 300)}`);
        }
        throw Object.assign(new Error(outcome.errorMessage), { name: outcome.errorType });
      },
      input: { spec, scripts: prepared.scripts, runId: plan.runId, notes: prepared.preparationNotes },
      resolvedDefinition: definition,
      // As a local run: a definition asl-validator passed once is not validated again (core/workflow/local-runner.ts).
      validatedDefinitionsDir: join(defaultCacheRoot(), 'validated-definitions'),
      pollMs: options.pollMs ?? 1000,
      retryMs: 200,
      ...(options.signal ? { signal: options.signal } : {}),
      onEvent: (ev) => {
        options.onEvent?.(ev);
        if (options.lakeDir !== undefined && ev.type === 'StateExited' && ev.state?.name === STATE.PlanRun)
          runRowCopied = copyRunRow(s3, config, options.lakeDir, ev.state.output).catch((e: unknown) =>
            log(`warning: the run's row was not copied into ${options.lakeDir} yet: ${(e as Error).message}`),
          );
        const line = progressLine(
          ev,
          () => plan.duets?.length ?? plan.cells.length,
          (index) => (plan.duets ?? plan.cells)[index]?.cellId,
        );
        if (line) log(line);
        // What it was doing is the progress before the first failure, and that failure.
        if (line && !failedOnce && / failed: /.test(line)) doing += `, when ${line.trim().replace(/: .*$/s, '')}`;
        else if (line && !failedOnce) doing = `the workflow ran (its last progress: "${line.trim()}")`;
        if (line && / failed: /.test(line)) failedOnce = true;
      },
    });
    if (result.status === 'ABORTED') {
      // Said as a local run says it (core/cli/stop-signals.ts): which signal stopped it.
      const why = stopReason(options.signal?.reason);
      await recordInterruptedSteps(deps, result.events, `${why} while the step ran`, log);
      await markEnded(deps.backend, plan, 'aborted', `${why}; everything was torn down`);
      result = { ...result, cause: why };
    }
    if (result.status === 'TIMED_OUT') {
      await recordInterruptedSteps(deps, result.events, TIMED_OUT_REASON, log);
      await markEnded(
        deps.backend,
        plan,
        'timed-out',
        `${result.cause ?? 'the execution timed out'}; everything was torn down`,
      );
    }
    if (result.status !== 'SUCCEEDED') {
      // What the stack's EventBridge rule does for an execution that did not succeed.
      for (let attempt = 1; attempt <= 30; attempt++) {
        const report = await teardownRun(clients, config, plan.runId, new Date());
        safetyNetDeleted.push(...report.deleted);
        if (report.pending.length === 0) break;
        await new Promise((r) => setTimeout(r, 1000));
      }
      if (safetyNetDeleted.length > 0) log(`safety net (teardownRun) deleted: ${safetyNetDeleted.join(', ')}`);
    }

    leftBehind.push(
      ...(await leftInMoto(moto.endpoint, plan.region)),
      ...rds.runningServers().map((s) => `MariaDB server of ${s.instanceId} (pid ${s.pid})`),
      ...agent.leftovers(),
    );

    await runRowCopied;
    const objects = await copyLake(raw.s3, config, lakeDir, dir);
    log(
      `lake: ${objects} table objects in s3://${config.bucket}/${config.lakePrefix} (moto)` +
        (options.lakeDir !== undefined
          ? `, copied into ${options.lakeDir} with the run marked aws-rehearsal (never part of an AWS ` +
            `experiment's history)`
          : ''),
    );
    try {
      results = await resultsCommand({ lakeDir, run: plan.runId, repoRoot: options.repoRoot });
    } catch (e) {
      results = `(no results table: ${(e as Error).message})`;
    }
    const ran = functionsOf();
    log(`Lambda: ${[...ran].map(([task, f]) => `${task} ${f.invocations} (${f.coldStarts} cold)`).join(', ')}`);
    log(iamSummaryLine(iam));
  } catch (e) {
    // A dead moto server fails every later AWS call: the run FAILED with one line saying so, not the SDK's stack.
    const died = await controlPlaneDied(moto, e, doing);
    if (died === undefined) throw e;
    result = { status: 'FAILED', error: died.name, cause: died.message, events: [], runId: plan.runId };
    results = '(no results table: the lake was in the moto server)';
  } finally {
    const ran = functionsOf();
    await sandbox?.dispose().catch((e: unknown) => notCleaned.push(`Lambda sandbox: ${(e as Error).message}`));
    if (held) options.account?.release();
    functionsOf = () => ran;
    await publisher?.stop();
    await agent?.shutdown().catch((e: unknown) => notCleaned.push(`clients: ${(e as Error).message}`));
    await rds?.shutdown().catch((e: unknown) => notCleaned.push(`servers: ${(e as Error).message}`));
    if (clients) destroyAwsClients(clients);
    for (const c of Object.values(raw ?? {})) (c as { destroy(): void }).destroy();
    await athenaOnTrino?.close().catch((e: unknown) => notCleaned.push(`Athena on Trino: ${(e as Error).message}`));
    await trino?.stop();
    const motoPid = moto?.pid;
    await moto?.stop();
    tracker.killAllSync();
    // A killed process is gone only once it has finished exiting, which a loaded machine can take
    // seconds over: wait for that before calling anything left behind.
    const killed = [
      ...tracker.live(),
      ...processesMentioning(dir),
      ...(motoPid !== undefined && motoPid > 0 ? [motoPid] : []),
    ];
    await Promise.all(killed.map((pid) => waitForExit(pid, 10_000)));
    for (const pid of tracker.live()) notCleaned.push(`process ${pid}`);
    for (const pid of processesMentioning(dir)) notCleaned.push(`process ${pid} (${dir})`);
    if (motoPid !== undefined && motoPid > 0 && isAlive(motoPid)) notCleaned.push(`moto server (pid ${motoPid})`);
    if (moto?.logFile && existsSync(moto.logFile)) notCleaned.push(`moto log ${moto.logFile}`);
    tracker.dispose();
    process.off('exit', removeDir);
    await rm(dir, { recursive: true, force: true });
    if (existsSync(dir)) notCleaned.push(`directory ${dir}`);
    else await rm(runDir, { recursive: true, force: true });
  }
  return {
    ...result,
    plan,
    results,
    leftBehind,
    notCleaned,
    safetyNetDeleted,
    functions: functionsOf(),
    ...(gated ? { iam: gated } : {}),
  };
}
