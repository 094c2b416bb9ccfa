/** What runRehearsal is given and what it answers. */
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

/** A Lambda function of the synthesized template. */
export interface RehearsedFunction {
  readonly logicalId: string;
  /** The Task it runs. Undefined for a function outside the workflow, such as the sweeper. */
  readonly task?: TaskName;
  /** Its synthesized asset folder, as `cdk deploy` uploads it. */
  readonly assetDir: string;
  readonly handler: string;
  readonly runtime: string;
  /** The template's Environment.Variables: text, or CloudFormation references resolved at deploy time. */
  readonly environment: Readonly<Record<string, unknown>>;
  readonly memoryMb: number;
  readonly timeoutS: number;
  /** Its execution role in the template. Each SDK call it makes is authorized against it. */
  readonly role: GatedFunction['role'];
}

export interface SynthesizedDefinition {
  readonly definition: Record<string, unknown>;
  readonly taskByArn: ReadonlyMap<string, TaskName>;
  /** The template's functions, bundled. Each Task runs its function's asset in the Lambda sandbox. */
  readonly functions: readonly RehearsedFunction[];
  /** The template itself. Its Glue tables are created in moto for the rehearsal's Athena. */
  readonly template: LakeTemplate;
}

export interface RehearsalOptions {
  readonly specFile: string;
  readonly repoRoot: string;
  readonly scale?: Scale;
  readonly runId?: string;
  /** The deployed definition for the spec's region. */
  readonly synthesize: (region: string) => SynthesizedDefinition;
  /**
   * What a Task Lambda builds from its environment, with the rehearsal's own clients.
   * The CLI uses it after an execution that did not succeed. The Tasks themselves run in the bundles.
   */
  readonly buildTaskDeps: (config: AwsBackendConfig, clients: AwsClients) => Promise<TaskDeps>;
  /**
   * The environment the stack gives its Task functions for this configuration.
   * The rehearsal's shorter timings replace the template's literal ones.
   */
  readonly taskEnvironment: (config: AwsBackendConfig) => Readonly<Record<string, string>>;
  /** The Lambda runtime's packages, built once and cached. */
  readonly lambdaRuntimeModules: () => string;
  /** RDS's parameter rules by parameter group family. The default is the Aurora parameter catalogue. */
  readonly checkParameters?: ParameterCheck;
  readonly metricsLagS?: number;
  /**
   * Wait states become this many ms, since the rehearsal's resources are ready in seconds.
   * Each Wait's end is a Lambda invocation and its calls to moto, so shorter waits cost CPU.
   * On a busy machine they save no time either.
   */
  readonly pollMs?: number;
  readonly signal?: AbortSignal;
  readonly log?: (line: string) => void;
  readonly onEvent?: (event: ExecutionEvent) => void;
  /** Where a copy of the run's lake is made, since moto's S3 goes with moto. The default is a temp dir. */
  readonly lakeDir?: string;
  /** The local run root, where the run claims its id as a local run does. */
  readonly runRoot?: string;
  /** A moto server to use instead of starting one. It is reset first and left running. */
  readonly motoEndpoint?: string;
  /** A Trino server to answer Athena on instead of starting one. It is left running. */
  readonly trinoEndpoint?: string;
  /**
   * An account shared with other rehearsals, used instead of motoEndpoint.
   * It keeps its standing infrastructure and its functions' warm environments.
   */
  readonly account?: RehearsalAccount;
  /** Master passwords of new clusters. By default they are generated as RDS generates them. */
  readonly masterPassword?: () => string;
  /**
   * The launch templates' user data as the stack renders it, and the Debian packages it installs.
   * An instance boots it in a Debian root. Without it an instance runs bootCommands on this machine.
   */
  readonly boot?: (
    config: AwsBackendConfig,
  ) => Readonly<Record<BootContext['role'], { readonly userData: string; readonly packages: readonly string[] }>>;
  /**
   * Called with the handlers' SDK clients before the emulations are put on them.
   * A middleware added here sees each call first, so a test can rehearse a variant of the backend's calls.
   */
  readonly adjustClients?: (clients: AwsClients) => void;
}

export interface RehearsalResult extends LocalExecutionResult {
  readonly plan: Plan;
  /** The results table of the run, as `aurora-bench results` prints it. */
  readonly results: string;
  /** What the workflow left in moto or running. */
  readonly leftBehind: readonly string[];
  /** What was still there after the rehearsal stopped everything itself. It should always be empty. */
  readonly notCleaned: readonly string[];
  /** What the safety net's teardownRun deleted for a run that did not succeed. */
  readonly safetyNetDeleted: readonly string[];
  /** Each Task's function as the sandbox ran it. */
  readonly functions: ReadonlyMap<TaskName, FunctionInvocations & { readonly logicalId: string }>;
  /** The IAM gate the functions' calls went through, with the roles it evaluated. */
  readonly iam?: RehearsalIam;
}
