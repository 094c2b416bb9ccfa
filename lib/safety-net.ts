/**
 * Safety net. Catch never fires when an execution is aborted or times out.
 * So a rule sends a failed, aborted or timed-out execution's event to the sweeper, which tears that run down.
 * A schedule also runs the sweeper regularly, for runs whose time to live has passed.
 */
import { ArnFormat, Duration, Stack, Validations } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import type * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { TaskFunction } from './workflow';

/**
 * Execution statuses after which nothing of the run should stay unless Teardown ran.
 * @internal Exported for its tests.
 */
export const SWEEP_ON_STATUSES = ['ABORTED', 'TIMED_OUT', 'FAILED'] as const;

export interface SafetyNetProps {
  readonly projectRoot: string;
  /** lambdas/sweeper/handler.ts relative to projectRoot. */
  readonly sweeperEntry: string;
  readonly namePrefix: string;
  readonly stateMachineName: string;
  readonly stateMachineArn: string;
  readonly sweepSchedule: string;
  readonly environment: Readonly<Record<string, string>>;
  readonly logRetentionDays: number;
  /** Gets the backend's permissions, since it deletes what the backend created. */
  readonly role: iam.Role;
}

export class SafetyNet extends Construct {
  readonly sweeper: nodejs.NodejsFunction;
  readonly rule: events.Rule;
  readonly schedule: scheduler.CfnSchedule;
  readonly deadLetterQueue: sqs.Queue;

  constructor(scope: Construct, id: string, props: SafetyNetProps) {
    super(scope, id);
    const stack = Stack.of(this);

    const sweeper = new TaskFunction(this, 'Sweeper', {
      projectRoot: props.projectRoot,
      entry: props.sweeperEntry,
      role: props.role,
      environment: { ...props.environment, AURORA_BENCH_STATE_MACHINE_ARN: props.stateMachineArn },
      logRetentionDays: props.logRetentionDays,
      timeout: Duration.minutes(15),
    });
    sweeper.logGroup.grantWrite(props.role);
    this.sweeper = sweeper.fn;
    Validations.of(this.sweeper).acknowledge({
      id: 'AwsSolutions-L1',
      reason: "NODEJS_22_X is the project's pinned runtime, the same as the workflow Lambdas.",
    });

    // An execution that did not name its run id in the input has it in the PlanRun output.
    props.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'ReadBenchmarkExecutionHistory',
        actions: ['states:GetExecutionHistory'],
        resources: [
          stack.formatArn({
            service: 'states',
            resource: 'execution',
            resourceName: `${props.stateMachineName}:*`,
            arnFormat: ArnFormat.COLON_RESOURCE_NAME,
          }),
        ],
      }),
    );
    Validations.of(props.role).acknowledge({
      id:
        `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:` +
        `execution:${props.stateMachineName}:*]`,
      reason: 'Executions of the benchmark state machine only; their names are generated per run.',
    });

    // Events the sweeper could not take are kept for a look, not lost.
    this.deadLetterQueue = new sqs.Queue(this, 'DeadLetters', {
      retentionPeriod: Duration.days(14),
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
    Validations.of(this.deadLetterQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason: "This queue is itself the dead-letter queue of the sweeper's rule and schedule.",
    });

    this.rule = new events.Rule(this, 'ExecutionEndedRule', {
      description: 'aurora-bench: tear down what an aborted, timed-out or failed benchmark execution left',
      eventPattern: {
        source: ['aws.states'],
        detailType: ['Step Functions Execution Status Change'],
        detail: { status: [...SWEEP_ON_STATUSES], stateMachineArn: [props.stateMachineArn] },
      },
    });
    this.rule.addTarget(
      new targets.LambdaFunction(this.sweeper, {
        deadLetterQueue: this.deadLetterQueue,
        retryAttempts: 4,
        maxEventAge: Duration.hours(6),
      }),
    );

    const scheduleRole = new iam.Role(this, 'ScheduleRole', {
      assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com', {
        conditions: { StringEquals: { 'aws:SourceAccount': stack.account } },
      }),
      description: 'aurora-bench sweeper schedule: invoke the sweeper',
    });
    scheduleRole.addToPolicy(
      new iam.PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [this.sweeper.functionArn] }),
    );
    this.deadLetterQueue.grantSendMessages(scheduleRole);
    this.schedule = new scheduler.CfnSchedule(this, 'SweepSchedule', {
      name: `${props.namePrefix}-sweeper`,
      description: 'aurora-bench: delete resources of runs whose time to live has passed',
      scheduleExpression: props.sweepSchedule,
      flexibleTimeWindow: { mode: 'FLEXIBLE', maximumWindowInMinutes: 15 },
      state: 'ENABLED',
      target: {
        arn: this.sweeper.functionArn,
        roleArn: scheduleRole.roleArn,
        input: JSON.stringify({ action: 'sweep-expired' }),
        retryPolicy: { maximumEventAgeInSeconds: 3600, maximumRetryAttempts: 2 },
        deadLetterConfig: { arn: this.deadLetterQueue.queueArn },
      },
    });
  }
}
