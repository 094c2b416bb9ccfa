/**
 * Nightly: a Scheduler schedule that starts the state machine with a configured experiment.
 * The spec's region is replaced by the stack's own, since the preflight refuses any other region.
 * An experiment file should run nightly wherever the stack is deployed.
 */
import { Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import type { ExecutionInput, NightlyConfig } from './config';

/** StartExecution accepts at most 256 KiB of input, per the Step Functions quotas. */
const MAX_EXECUTION_INPUT_BYTES = 256 * 1024;

export interface NightlyProps {
  readonly config: NightlyConfig;
  readonly namePrefix: string;
  readonly stateMachine: sfn.IStateMachine;
  readonly executionInput: ExecutionInput;
}

export class Nightly extends Construct {
  readonly schedule: scheduler.CfnSchedule;
  readonly role: iam.Role;

  constructor(scope: Construct, id: string, props: NightlyProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const executionInput = {
      ...props.executionInput,
      spec: { ...(props.executionInput.spec as Record<string, unknown>), region: stack.region },
    };
    // An environment-agnostic stack's region is a token.
    // toJsonString embeds it for CloudFormation to resolve. JSON.stringify would write placeholder text.
    const input = stack.toJsonString(executionInput);
    if (Buffer.byteLength(JSON.stringify(executionInput), 'utf8') > MAX_EXECUTION_INPUT_BYTES) {
      throw new Error(
        `aurora-bench.nightly.experiment: the execution input ` +
          `is ${Buffer.byteLength(JSON.stringify(executionInput), 'utf8')} bytes, more than the 256 KiB ` +
          `StartExecution accepts`,
      );
    }
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com', {
        conditions: { StringEquals: { 'aws:SourceAccount': Stack.of(this).account } },
      }),
      description: 'aurora-bench nightly schedule: start the benchmark state machine',
    });
    props.stateMachine.grantStartExecution(this.role);

    this.schedule = new scheduler.CfnSchedule(this, 'Schedule', {
      name: `${props.namePrefix}-nightly`,
      description: `aurora-bench nightly run of ${props.config.experiment}`,
      scheduleExpression: props.config.cron,
      scheduleExpressionTimezone: props.config.timeZone,
      flexibleTimeWindow: { mode: 'OFF' },
      state: 'ENABLED',
      target: {
        arn: props.stateMachine.stateMachineArn,
        roleArn: this.role.roleArn,
        input,
        // A missed nightly start is retried for an hour, not into the next day.
        retryPolicy: { maximumEventAgeInSeconds: 3600, maximumRetryAttempts: 3 },
      },
    });
  }
}
