/**
 * Workflow: one NodejsFunction per Task, each with its own role, and the state machine.
 * The ASL file is inlined with its function ARN placeholders filled in.
 */
import { join } from 'node:path';
import { ArnFormat, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { TASK_NAMES, type TaskName } from '../core/workflow/task-names';
import {
  executionTimeoutSeconds,
  readAslFile,
  substitutePlaceholders,
  taskPlaceholderValues,
} from '../core/workflow/asl';
import { logRetention } from './config';

/** Powertools settings shared by every function. The runtime reads the same names. */
const POWERTOOLS_SERVICE = 'aurora-bench';
const POWERTOOLS_NAMESPACE = 'AuroraBench';

export interface TaskFunctionProps {
  /** Repository root. Entries and the lock file are resolved against it. */
  readonly projectRoot: string;
  /** e.g. lambdas/plan-run/handler.ts, relative to projectRoot. */
  readonly entry: string;
  readonly role: iam.IRole;
  readonly environment: Readonly<Record<string, string>>;
  readonly logRetentionDays: number;
  readonly timeout: Duration;
}

/** A Powertools Lambda on NODEJS_22_X with its own log group and active tracing. */
export class TaskFunction extends Construct {
  readonly fn: nodejs.NodejsFunction;
  readonly logGroup: logs.LogGroup;

  constructor(scope: Construct, id: string, props: TaskFunctionProps) {
    super(scope, id);
    this.logGroup = new logs.LogGroup(this, 'Logs', {
      retention: logRetention(props.logRetentionDays),
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.fn = new nodejs.NodejsFunction(this, 'Function', {
      entry: join(props.projectRoot, props.entry),
      handler: 'handler',
      projectRoot: props.projectRoot,
      depsLockFilePath: join(props.projectRoot, 'package-lock.json'),
      runtime: lambda.Runtime.NODEJS_22_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: 512,
      timeout: props.timeout,
      role: props.role,
      logGroup: this.logGroup,
      loggingFormat: lambda.LoggingFormat.JSON,
      tracing: lambda.Tracing.ACTIVE,
      environment: {
        ...props.environment,
        POWERTOOLS_SERVICE_NAME: POWERTOOLS_SERVICE,
        POWERTOOLS_METRICS_NAMESPACE: POWERTOOLS_NAMESPACE,
        POWERTOOLS_LOG_LEVEL: 'INFO',
        NODE_OPTIONS: '--enable-source-maps',
      },
      bundling: {
        // Bundled locally with the esbuild devDependency, so no Docker is needed.
        forceDockerBundling: false,
        target: 'node22',
        format: nodejs.OutputFormat.CJS,
        sourceMap: true,
        minify: true,
        // esbuild keeps every module an import reaches, unless the package says it has no side effects.
        // See esbuild API, "Tree shaking". package.json names the one file that has them, core/polyfills.ts.
        // So what a Task does not use leaves its bundle. test/bundles checks each bundle's modules.
        // ES module entries come before `main`, because jsonc-parser's UMD `main` requires files esbuild cannot see.
        // See evanw/esbuild#1619 and microsoft/node-jsonc-parser#57.
        mainFields: ['module', 'main'],
        // esbuild prints only warnings and errors, not a size summary per function.
        logLevel: nodejs.LogLevel.WARNING,
        // Only the AWS SDK v3, which the nodejs22.x runtime provides, stays outside the bundle.
        // See Lambda Developer Guide, "Building Lambda functions with Node.js".
        // DuckDB is neither bundled nor provided, because no Task may load it.
        // test/bundles runs every bundle with only the runtime's packages.
        externalModules: ['@aws-sdk/*', '@duckdb/node-api'],
        // The lake views' SQL is read at run time, so esbuild leaves it out.
        // It goes beside index.js, where core/lake/views.ts looks first.
        // See aws-lambda-nodejs ICommandHooks for what the hooks run with.
        commandHooks: {
          beforeBundling: () => [],
          beforeInstall: () => [],
          afterBundling: (inputDir: string, outputDir: string) => [
            `mkdir -p "${outputDir}/sql"`,
            `cp "${inputDir}/core/lake/sql/"*.sql "${outputDir}/sql/"`,
          ],
        },
      },
    });
  }
}

export interface WorkflowProps {
  readonly projectRoot: string;
  /** The ASL file, relative to projectRoot. */
  readonly definitionFile: string;
  /** Folder of the handlers, relative to projectRoot. */
  readonly lambdasDir: string;
  readonly stateMachineName: string;
  readonly environment: Readonly<Record<string, string>>;
  readonly logRetentionDays: number;
  /** Each Task function's role, with the permissions of its own Task's calls. */
  readonly taskRoles: Readonly<Record<TaskName, iam.Role>>;
}

export class Workflow extends Construct {
  readonly functions: Readonly<Record<TaskName, nodejs.NodejsFunction>>;
  readonly stateMachine: sfn.StateMachine;
  readonly logGroup: logs.LogGroup;
  /** The definition's top-level TimeoutSeconds. An execution still running then ends TIMED_OUT. */
  readonly executionTimeoutSeconds: number;

  constructor(scope: Construct, id: string, props: WorkflowProps) {
    super(scope, id);
    const stack = Stack.of(this);

    const functions: Partial<Record<TaskName, nodejs.NodejsFunction>> = {};
    for (const task of TASK_NAMES) {
      const taskFunction = new TaskFunction(this, `Task-${task}`, {
        projectRoot: props.projectRoot,
        entry: join(props.lambdasDir, task, 'handler.ts'),
        role: props.taskRoles[task],
        environment: props.environment,
        logRetentionDays: props.logRetentionDays,
        // Below each Task's ASL timeout of 900 s.
        // So a hung call ends as a Lambda timeout, retried or caught like any failure.
        timeout: Duration.seconds(840),
      });
      taskFunction.logGroup.grantWrite(props.taskRoles[task]);
      functions[task] = taskFunction.fn;
    }
    this.functions = functions as Record<TaskName, nodejs.NodejsFunction>;

    const definitionPath = join(props.projectRoot, props.definitionFile);
    const definitionText = readAslFile(definitionPath);
    // The execution timeout lives in the definition. CDK ignores `timeout` for a text definition.
    this.executionTimeoutSeconds = executionTimeoutSeconds(definitionText, props.definitionFile);
    const definition = substitutePlaceholders(
      definitionText,
      taskPlaceholderValues((task) => this.functions[task].functionArn),
      props.definitionFile,
    );

    this.logGroup = new logs.LogGroup(this, 'StateMachineLogs', {
      // Vended-logs delivery for Step Functions wants the /aws/vendedlogs/ prefix.
      logGroupName: `/aws/vendedlogs/states/${props.stateMachineName}`,
      retention: logRetention(props.logRetentionDays),
      removalPolicy: RemovalPolicy.DESTROY,
    });

    this.stateMachine = new sfn.StateMachine(this, 'StateMachine', {
      stateMachineName: props.stateMachineName,
      stateMachineType: sfn.StateMachineType.STANDARD,
      definitionBody: sfn.DefinitionBody.fromString(definition),
      // Every event with its data, as cdk-nag AwsSolutions-SF1 asks.
      // Each state is about 1.4 KB whatever the step count, so a cell logs O(steps) bytes.
      // bench/workflow-scale.ts measures it.
      logs: { destination: this.logGroup, level: sfn.LogLevel.ALL, includeExecutionData: true },
      tracingEnabled: true,
    });
    const role = this.stateMachine.role;

    // Invoke exactly the Task functions, by the unqualified ARNs the definition names.
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'InvokeTaskFunctions',
        actions: ['lambda:InvokeFunction'],
        resources: TASK_NAMES.map((t) => this.functions[t].functionArn),
      }),
    );

    // The DISTRIBUTED Map runs one child execution per cell. See iam-policies-eg-dist-map in the Step Functions guide.
    // A separate policy keeps the role free of a reference to its own state machine.
    const smArn = stack.formatArn({
      service: 'states',
      resource: 'stateMachine',
      resourceName: props.stateMachineName,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    const childExecutions = stack.formatArn({
      service: 'states',
      resource: 'execution',
      resourceName: `${props.stateMachineName}/*`,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    const executions = stack.formatArn({
      service: 'states',
      resource: 'execution',
      resourceName: `${props.stateMachineName}:*`,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    const distributedMapPolicy = new iam.Policy(this, 'DistributedMapPolicy', {
      statements: [
        new iam.PolicyStatement({ sid: 'StartCellExecutions', actions: ['states:StartExecution'], resources: [smArn] }),
        new iam.PolicyStatement({
          sid: 'FollowCellExecutions',
          actions: ['states:DescribeExecution', 'states:StopExecution', 'states:RedriveExecution'],
          resources: [childExecutions, executions],
        }),
      ],
    });
    role.attachInlinePolicy(distributedMapPolicy);
    Validations.of(distributedMapPolicy).acknowledge(
      {
        id:
          `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:` +
          `execution:${props.stateMachineName}/*]`,
        reason:
          'Child executions of the DISTRIBUTED Map are named <state machine>/<map run label>:<uuid> by Step ' +
          'Functions; limited to this state machine.',
      },
      {
        id:
          `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:` +
          `execution:${props.stateMachineName}:*]`,
        reason: 'Executions of this state machine only; their names are generated per run.',
      },
    );
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'CloudWatch Logs vended delivery (logs:CreateLogDelivery and friends) and X-Ray PutTraceSegments ' +
        'support no resource-level permissions; CDK adds exactly these for logging and tracing.',
    });
    for (const task of TASK_NAMES) {
      Validations.of(props.taskRoles[task]).acknowledge({
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason:
          "X-Ray PutTraceSegments/PutTelemetryRecords (active tracing) and the backend's " +
          'Describe*/GetMetricData calls support no resource-level permissions.',
      });
      Validations.of(this.functions[task]).acknowledge({
        id: 'AwsSolutions-L1',
        reason:
          "NODEJS_22_X is the project's pinned runtime (the issue requires it; the local runner and CI run the " +
          'same code on Node 20/22); moving to a newer runtime is a deliberate change.',
      });
    }
  }
}
