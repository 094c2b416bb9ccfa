/** The aurora-bench stack wires the constructs together. Every input comes in as props. */
import { existsSync } from 'node:fs';
import { CfnOutput, Stack, type StackProps, Tags } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as s3deploy from 'aws-cdk-lib/aws-s3-deployment';
import { Validations } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { awsConfigToEnv } from '../core/backends/aws/config';
import { runnerBundleDigest } from '../core/backends/aws/runner-command';
import { BACKEND_CONFIG_OUTPUT, STACK_OUTPUTS } from '../core/backends/aws/stack-outputs';
import { TASK_NAMES, type TaskName } from '../core/workflow/task-names';
import { grantSweeperPermissions, grantTaskPermissions } from './backend-permissions';
import { Alerts } from './alerts';
import { CLIENT_BOOT_DOWNLOADS } from './client-user-data';
import { Clients, DEBIAN_AMI_PARAMETERS } from './clients';
import type { AppConfig, ExecutionInput } from './config';
import {
  buildHandlerEnvironment,
  handlerBackendConfig,
  RUNNER_PREFIX,
  type HandlerEnvironmentProps,
} from './handler-environment';
import { Network } from './network';
import { Nightly } from './nightly';
import { ResultsLake, type ViewDefinition } from './results-lake';
import { SafetyNet } from './safety-net';
import { Servers } from './servers';
import { Workflow } from './workflow';

export interface AuroraBenchStackProps extends StackProps {
  readonly config: AppConfig;
  /** Repository root. */
  readonly projectRoot: string;
  /** Relative to projectRoot. The defaults are the repository's own files. */
  readonly definitionFile?: string;
  readonly lambdasDir?: string;
  readonly clientDir?: string;
  readonly views: readonly ViewDefinition[];
  /** Required when config.nightly.enabled. */
  readonly nightlyInput?: ExecutionInput;
  /** Recorded in every run manifest. */
  readonly toolVersion: string;
  readonly gitSha?: string;
}

export class AuroraBenchStack extends Stack {
  readonly network: Network;
  readonly lake: ResultsLake;
  readonly clients: Clients;
  readonly servers: Servers;
  readonly workflow: Workflow;
  readonly safetyNet: SafetyNet;
  readonly alerts: Alerts;
  readonly nightly?: Nightly;

  constructor(scope: Construct, id: string, props: AuroraBenchStackProps) {
    super(scope, id, props);
    const { config } = props;
    const lambdasDir = props.lambdasDir ?? 'lambdas';
    const stateMachineName = `${config.namePrefix}-benchmark`;
    Tags.of(this).add('aurora-bench:stack', this.stackName);

    this.network = new Network(this, 'Network', { config: config.network, namePrefix: config.namePrefix });
    this.lake = new ResultsLake(this, 'Lake', {
      config: config.lake,
      namePrefix: config.namePrefix,
      views: props.views,
    });

    // The runner bundle goes under runner/ in the lake bucket.
    // The backend copies it to each client before a job, and the user data installs it at boot.
    const clientDir = `${props.projectRoot}/${props.clientDir ?? 'client'}`;
    // runner.js is built, not checked in. Without it every client would lack its runner.
    if (!existsSync(`${clientDir}/runner.js`))
      throw new Error(
        `${clientDir}/runner.js is missing: build the client runner first (npm run build, or node ` +
          `dist/scripts/build-runner.js)`,
      );
    const runnerDeployment = new s3deploy.BucketDeployment(this, 'RunnerDeployment', {
      sources: [s3deploy.Source.asset(clientDir)],
      destinationBucket: this.lake.bucket,
      destinationKeyPrefix: RUNNER_PREFIX,
      prune: true,
      extract: true,
      retainOnDelete: false,
    });
    acknowledgeBucketDeployment(this, runnerDeployment);

    this.clients = new Clients(this, 'Clients', {
      config: config.clients,
      namePrefix: config.namePrefix,
      bucket: this.lake.bucket,
      securityGroup: this.network.clientSecurityGroup,
    });

    this.servers = new Servers(this, 'Servers', {
      architectures: config.clients.architectures,
      namePrefix: config.namePrefix,
      bucket: this.lake.bucket,
      securityGroup: this.network.serverSecurityGroup,
    });

    this.alerts = new Alerts(this, 'Alerts', { config: config.alerts, namePrefix: config.namePrefix });

    const launchTemplateIds = Object.fromEntries(
      Object.entries(this.clients.launchTemplates).map(([arch, lt]) => [arch, lt.launchTemplateId!]),
    );
    const handlerProps: HandlerEnvironmentProps = {
      toolVersion: props.toolVersion,
      ...(props.gitSha ? { gitSha: props.gitSha } : {}),
      bucketName: this.lake.bucket.bucketName,
      subnetIdsByAz: this.network.subnetsByAz(),
      clientSecurityGroupId: this.network.clientSecurityGroup.securityGroupId,
      dbSecurityGroupId: this.network.dbSecurityGroup.securityGroupId,
      dbSubnetGroupName: this.network.dbSubnetGroup.subnetGroupName,
      clientInstanceProfileArn: this.clients.instanceProfile.instanceProfileArn,
      launchTemplateIds,
      serverLaunchTemplateIds: Object.fromEntries(
        Object.entries(this.servers.launchTemplates).map(([arch, lt]) => [arch, lt.launchTemplateId!]),
      ),
      serverSecurityGroupId: this.network.serverSecurityGroup.securityGroupId,
      serverInstanceProfileArn: this.servers.instanceProfile.instanceProfileArn,
      // A job skips its copy when the client's bundle has this digest.
      runnerDigest: runnerBundleDigest(clientDir),
      clientSourceUrls: CLIENT_BOOT_DOWNLOADS,
      athenaWorkGroup: this.lake.workGroupName,
      glueDatabase: this.lake.databaseName,
      alertTopicArn: this.alerts.topic.topicArn,
    };
    const environment = buildHandlerEnvironment(this, handlerProps);
    const permissions = {
      bucket: this.lake.bucket,
      clientRole: this.clients.role,
      launchTemplates: Object.values(this.clients.launchTemplates),
      clientSecurityGroup: this.network.clientSecurityGroup,
      serverRole: this.servers.role,
      serverLaunchTemplates: Object.values(this.servers.launchTemplates),
      serverSecurityGroup: this.network.serverSecurityGroup,
      dbSecurityGroup: this.network.dbSecurityGroup,
      subnets: this.network.subnets,
      dbSubnetGroupName: this.network.dbSubnetGroup.subnetGroupName,
      amiParameters: config.clients.architectures.map((arch) => DEBIAN_AMI_PARAMETERS[arch]),
      clientSourceUrls: Object.values(handlerProps.clientSourceUrls ?? {}),
    };

    // A role per Task function, with the statements of the backend parts its own code calls.
    const taskPermissions = {
      ...permissions,
      workGroupName: this.lake.workGroupName,
      databaseName: this.lake.databaseName,
      topic: this.alerts.topic,
    };
    const taskRoles = Object.fromEntries(
      TASK_NAMES.map((task) => {
        const role = new iam.Role(this, `TaskRole-${task}`, {
          assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
          description:
            `aurora-bench ${task} Lambda: the AWS calls of its Task (RDS/EC2/SSM scoped by name and ` +
            `run tag, the lake)`,
        });
        grantTaskPermissions(task, role, taskPermissions);
        return [task, role];
      }),
    ) as Record<TaskName, iam.Role>;
    this.workflow = new Workflow(this, 'Workflow', {
      projectRoot: props.projectRoot,
      definitionFile: props.definitionFile ?? 'state-machines/benchmark.asl.json',
      lambdasDir,
      stateMachineName,
      environment,
      logRetentionDays: config.logRetentionDays,
      taskRoles,
    });

    const sweeperRole = new iam.Role(this, 'SweeperRole', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description:
        'aurora-bench sweeper: list, delete and re-tag resources of expired or aborted runs (by name and run tag)',
    });
    grantSweeperPermissions(sweeperRole);
    Validations.of(sweeperRole).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'X-Ray PutTraceSegments/PutTelemetryRecords (active tracing) and the Describe* calls the sweeper lists ' +
        'the account with support no resource-level permissions.',
    });
    this.safetyNet = new SafetyNet(this, 'SafetyNet', {
      projectRoot: props.projectRoot,
      sweeperEntry: `${lambdasDir}/sweeper/handler.ts`,
      namePrefix: config.namePrefix,
      stateMachineName,
      stateMachineArn: this.workflow.stateMachine.stateMachineArn,
      sweepSchedule: config.safetyNet.sweepSchedule,
      environment,
      logRetentionDays: config.logRetentionDays,
      role: sweeperRole,
    });

    // What the CLI reads to find the deployment.
    const outputs: Record<keyof typeof STACK_OUTPUTS, { value: string; description: string }> = {
      stateMachineArn: { value: this.workflow.stateMachine.stateMachineArn, description: 'Benchmark state machine' },
      resultsBucket: { value: this.lake.bucket.bucketName, description: 'Results lake bucket' },
      athenaWorkGroup: { value: this.lake.workGroupName, description: 'Athena workgroup over the lake' },
      glueDatabase: { value: this.lake.databaseName, description: 'Glue database of the lake tables' },
    };
    for (const [field, output] of Object.entries(outputs) as [
      keyof typeof STACK_OUTPUTS,
      { value: string; description: string },
    ][]) {
      new CfnOutput(this, STACK_OUTPUTS[field], { value: output.value, description: output.description });
    }
    // `aurora-bench preflight` checks the account against what the workflow will use.
    new CfnOutput(this, BACKEND_CONFIG_OUTPUT, {
      value: this.toJsonString(awsConfigToEnv(handlerBackendConfig(this, handlerProps))),
      description:
        "The workflow Lambdas' backend configuration (JSON of their environment), read by aurora-bench preflight",
    });

    if (config.nightly.enabled) {
      if (!props.nightlyInput)
        throw new Error('aurora-bench.nightly.enabled is true but no experiment input was loaded');
      this.nightly = new Nightly(this, 'Nightly', {
        config: config.nightly,
        namePrefix: config.namePrefix,
        stateMachine: this.workflow.stateMachine,
        executionInput: props.nightlyInput,
      });
    }
  }
}

/** The deployment Lambda CDK provides behind BucketDeployment. */
function acknowledgeBucketDeployment(stack: Stack, deployment: s3deploy.BucketDeployment): void {
  const reasons = {
    'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]':
      "CDK's BucketDeployment provider Lambda: its logging role is created by CDK and only writes its own logs.",
    'AwsSolutions-IAM5[Action::s3:GetObject*]':
      'CDK grants the BucketDeployment provider read on the asset object it copies.',
    'AwsSolutions-IAM5[Action::s3:GetBucket*]': 'CDK grants the BucketDeployment provider read on the asset bucket.',
    'AwsSolutions-IAM5[Action::s3:List*]':
      'CDK grants the BucketDeployment provider listing of the asset and destination buckets.',
    'AwsSolutions-IAM5[Action::s3:DeleteObject*]': 'The provider prunes files removed from client/ under runner/ only.',
    'AwsSolutions-IAM5[Action::s3:Abort*]': 'The provider aborts its own failed multipart uploads.',
    'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::cdk-hnb659fds-assets-<AWS::AccountId>-<AWS::Region>/*]':
      'CDK grants the BucketDeployment provider read on the bootstrap asset bucket, where the client/ zip is ' +
      'staged under a content hash.',
    'AwsSolutions-IAM5[Resource::<LakeBucketB1D32E10.Arn>/*]':
      'The provider syncs client/ into runner/ of the lake bucket; CDK grants it on the bucket, it only writes ' +
      'under destinationKeyPrefix.',
    'AwsSolutions-L1': 'The BucketDeployment provider runtime is chosen by aws-cdk-lib, not by this project.',
  };
  // The provider is a stack-level singleton, so acknowledge it there only.
  const provider = stack.node.children.find((c) => c.node.id.startsWith('Custom::CDKBucketDeployment'));
  if (!provider) throw new Error(`BucketDeployment ${deployment.node.path}: its provider function was not found`);
  for (const [id, reason] of Object.entries(reasons)) Validations.of(provider).acknowledge({ id, reason });
}
