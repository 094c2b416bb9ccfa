/** What runRehearsal is given and what it answers (run-rehearsal.ts). */
import type { AwsBackendConfig } from '../backends/aws/config';
import type { AwsClients } from '../backends/aws/clients';
import type { Plan } from '../plan/types';
import type { Scale } from '../experiment/scale';
import type { ExecutionEvent, LocalExecutionResult } from '../workflow/local-runner';
import type { TaskDeps } from '../workflow/tasks/types';
import type { TaskName } from '../workflow/task-names';
import type { LakeTemplate } from './lake-glue';
import type { ParameterCheck } from './rds-emulation';
import type { FunctionInvocations } from './lambda-sandbox';
import type { GatedFunction, RehearsalIam } from './iam/rehearsal-iam';
import type { BootContext } from './ssm-agent';
import type { RehearsalAccount } from './rehearsal-account';

/** A Lambda function of the synthesized template (lib/synthesized-workflow.ts synthesizeBundledCached). */
export interface RehearsedFunction {
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

export interface SynthesizedDefinition {
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
   * it an instance runs bootCommands (instance-boot.ts) on this machine.
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
