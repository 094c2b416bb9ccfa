/**
 * IAM statements for the AWS backend's Task functions and for the sweeper.
 * Each Task role gets only the statements of the backend parts its code calls.
 * Every grant is scoped to what a run creates. RDS names start with `ab-`, and EC2 instances carry the run tag.
 * Calls without resource-level permissions take Resource "*", acknowledged where the statement is made.
 */
import { ArnFormat, Stack, Validations } from 'aws-cdk-lib';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type { IConstruct } from 'constructs';
import { VERDICT_METRIC_NAMESPACE } from '../core/backends/aws/verdict-alerts';
import type { TaskName } from '../core/workflow/task-names';
import { DEFAULT_EVENT_BUS, EXPIRES_AT_TAG, RDS_NAME_PREFIX, RUN_ID_TAG } from './handler-environment';

interface BackendPermissionsProps {
  readonly bucket: s3.IBucket;
  readonly clientRole: iam.IRole;
  readonly launchTemplates: readonly ec2.ILaunchTemplate[];
  readonly clientSecurityGroup: ec2.ISecurityGroup;
  /** Self-managed servers launch like the clients, from their own templates and with their own role. */
  readonly serverRole: iam.IRole;
  readonly serverLaunchTemplates: readonly ec2.ILaunchTemplate[];
  readonly serverSecurityGroup: ec2.ISecurityGroup;
  readonly dbSecurityGroup: ec2.ISecurityGroup;
  readonly subnets: readonly ec2.ISubnet[];
  readonly dbSubnetGroupName: string;
  /** Public SSM parameters the launch templates resolve the AMI from. */
  readonly amiParameters: readonly string[];
  /** What the clients' user data downloads. The preflight HEADs the s3:// ones. */
  readonly clientSourceUrls?: readonly string[];
}

/** `arn:<partition>:<service>:<region>:<account>:<resource>:<name>` of this stack's account and region. */
function arn(
  scope: IConstruct,
  service: string,
  resource: string,
  resourceName: string,
  sep: ArnFormat = ArnFormat.COLON_RESOURCE_NAME,
): string {
  return Stack.of(scope).formatArn({ service, resource, resourceName, arnFormat: sep });
}

/** The RDS service-linked role. See Aurora User Guide, "Using service-linked roles for Amazon Aurora". */
const RDS_SERVICE_LINKED_ROLE = 'aws-service-role/rds.amazonaws.com/AWSServiceRoleForRDS';

const RDS_DESCRIBE_ACTIONS = ['rds:DescribeDBClusters', 'rds:DescribeDBInstances'];
/** The sweeper finds a run's parameter groups by their tags, so it also lists them. */
const RDS_SWEEPER_DESCRIBE_ACTIONS = [
  ...RDS_DESCRIBE_ACTIONS,
  'rds:DescribeDBClusterParameterGroups',
  'rds:DescribeDBParameterGroups',
];

/** The ab-* RDS resources of this stack's account and region, by resource type. */
function runRdsArns(scope: IConstruct) {
  return {
    cluster: arn(scope, 'rds', 'cluster', `${RDS_NAME_PREFIX}*`),
    instance: arn(scope, 'rds', 'db', `${RDS_NAME_PREFIX}*`),
    clusterParameterGroup: arn(scope, 'rds', 'cluster-pg', `${RDS_NAME_PREFIX}*`),
    instanceParameterGroup: arn(scope, 'rds', 'pg', `${RDS_NAME_PREFIX}*`),
  };
}

/**
 * Deleting a run's databases, for the Task role and the sweeper.
 * Only ab-* resources that carry the run tag qualify.
 * The cluster, db, cluster-pg and pg types all take aws:ResourceTag/${TagKey}.
 * See Service Authorization Reference, "Amazon RDS resource types".
 * ListTagsForResource stays unconditioned.
 * The sweeper must read every ab-* parameter group's tags to tell whether it is a run's.
 */
function grantRunDatabaseDeletion(role: iam.Role): void {
  const rds = runRdsArns(role);
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'DeleteRunDatabases',
      actions: [
        'rds:DeleteDBCluster',
        'rds:DeleteDBInstance',
        'rds:DeleteDBClusterParameterGroup',
        'rds:DeleteDBParameterGroup',
      ],
      resources: [rds.cluster, rds.instance, rds.clusterParameterGroup, rds.instanceParameterGroup],
      conditions: { Null: { [`aws:ResourceTag/${RUN_ID_TAG}`]: 'false' } },
    }),
  );
}

/**
 * Describing and deleting a run's credentials secrets, for the Task role and the sweeper.
 * Only the sweeper lists them.
 */
function grantRunSecretDeletion(role: iam.Role): void {
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'DeleteRunSecrets',
      actions: ['secretsmanager:DescribeSecret', 'secretsmanager:DeleteSecret'],
      resources: [arn(role, 'secretsmanager', 'secret', `${RDS_NAME_PREFIX}*`)],
      conditions: { Null: { [`aws:ResourceTag/${RUN_ID_TAG}`]: 'false' } },
    }),
  );
}

/**
 * The sweeper's role. It lists, deletes and re-tags.
 * It never creates, launches, runs commands, passes roles or touches the lake.
 */
export function grantSweeperPermissions(role: iam.Role): void {
  grantRunDatabaseDeletion(role);
  const rds = runRdsArns(role);
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'ReadRunDatabaseTags',
      actions: ['rds:ListTagsForResource'],
      resources: [rds.cluster, rds.instance, rds.clusterParameterGroup, rds.instanceParameterGroup],
    }),
  );
  grantRunSecretDeletion(role);
  // ListSecrets supports no resource-level permission. See Service Authorization Reference, AWS Secrets Manager.
  role.addToPolicy(
    new iam.PolicyStatement({ sid: 'ListSecrets', actions: ['secretsmanager:ListSecrets'], resources: ['*'] }),
  );
  role.addToPolicy(
    new iam.PolicyStatement({ sid: 'DescribeRds', actions: RDS_SWEEPER_DESCRIBE_ACTIONS, resources: ['*'] }),
  );
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'TerminateRunClients',
      actions: ['ec2:TerminateInstances'],
      resources: [arn(role, 'ec2', 'instance', '*', ArnFormat.SLASH_RESOURCE_NAME)],
      conditions: { Null: { [`aws:ResourceTag/${RUN_ID_TAG}`]: 'false' } },
    }),
  );
  role.addToPolicy(
    new iam.PolicyStatement({ sid: 'DescribeEc2', actions: ['ec2:DescribeInstances'], resources: ['*'] }),
  );
  grantSweepMarking(role);
  // Resource "*" for Describe* and X-Ray is acknowledged where the role is created.
  const findings: Record<string, string> = {
    'Resource::arn:<AWS::Partition>:rds:<AWS::Region>:<AWS::AccountId>:cluster:ab-*':
      'The backend names every cluster ab-<run>-<cell>; deletes and tags also require the run tag on the cluster.',
    'Resource::arn:<AWS::Partition>:rds:<AWS::Region>:<AWS::AccountId>:db:ab-*':
      'The backend names every instance ab-<run>-<cell>-w|-rN; deletes and tags also require the run tag on it.',
    'Resource::arn:<AWS::Partition>:rds:<AWS::Region>:<AWS::AccountId>:cluster-pg:ab-*':
      'Per-cell cluster parameter groups are named ab-<run>-<cell>-cpg; deletes and tags require the run tag.',
    'Resource::arn:<AWS::Partition>:rds:<AWS::Region>:<AWS::AccountId>:pg:ab-*':
      'Per-cell instance parameter groups are named ab-<run>-<cell>-ipg; deletes and tags require the run tag.',
    'Resource::arn:<AWS::Partition>:ec2:<AWS::Region>:<AWS::AccountId>:instance/*':
      'Client instance ids are only known after launch: terminate and tag require the run tag on the instance.',
    'Resource::arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:secret:ab-*':
      "A self-managed cell's credentials secret is named ab-<run>-<cell>-server-credentials; delete and tag " +
      'require the run tag on it.',
  };
  for (const [finding, reason] of Object.entries(findings))
    Validations.of(role).acknowledge({ id: `AwsSolutions-IAM5[${finding}]`, reason });
}

/**
 * The parts of the AWS backend a Task's function composes, each with the statements its code needs.
 * test/cdk/permissions.test.ts checks each function's role against what its bundle calls, both ways.
 */
type BackendPart =
  | 'lake'
  | 'preflight'
  | 'databases'
  | 'client-machines'
  | 'runner-jobs'
  | 'server-metrics'
  | 'cell-teardown'
  | 'lake-queries'
  | 'lake-compaction'
  | 'lake-views'
  | 'verdicts';

const TASK_PARTS: Readonly<Record<TaskName, readonly BackendPart[]>> = {
  'plan-run': ['lake', 'preflight'],
  'provision-cell': ['lake', 'databases'],
  'check-cell-ready': ['lake', 'databases'],
  'start-clients': ['lake', 'client-machines'],
  'check-clients-ready': ['lake', 'client-machines'],
  'run-step': ['lake', 'runner-jobs', 'server-metrics'],
  'collect-late-metrics': ['lake', 'server-metrics'],
  'teardown-cell': ['lake', 'cell-teardown'],
  'finish-run': ['lake', 'lake-queries', 'lake-compaction'],
  'compute-verdicts': ['lake', 'lake-queries', 'lake-views', 'verdicts'],
  'judge-round': ['lake', 'lake-queries', 'lake-views'],
};

export interface TaskPermissionsProps extends BackendPermissionsProps, VerdictPermissionsProps {}

/**
 * Adds the statements of one Task's backend parts to its role.
 * It also acknowledges the unavoidable wildcards.
 */
export function grantTaskPermissions(task: TaskName, role: iam.Role, props: TaskPermissionsProps): void {
  const parts = TASK_PARTS[task];
  const grants: Record<BackendPart, () => void> = {
    lake: () => grantLake(role, props.bucket),
    preflight: () => grantPreflightReads(role, props),
    databases: () => grantDatabases(role, props),
    'client-machines': () => grantClientMachines(role, props),
    'runner-jobs': () => grantRunnerJobs(role, props.bucket),
    'server-metrics': () => grantServerMetrics(role),
    'cell-teardown': () => grantCellTeardown(role),
    'lake-queries': () => grantLakeQueries(role, props),
    'lake-compaction': () => grantCompactionPermissions(role, props),
    'lake-views': () => grantLakeViews(role, props),
    verdicts: () => grantVerdictPermissions(role, props),
  };
  for (const part of parts) grants[part]();
  acknowledgeBackendWildcards(role, props.bucket);
}

const runTagPresent = { Null: { [`aws:RequestTag/${RUN_ID_TAG}`]: 'false' } };
const taggedResource = { Null: { [`aws:ResourceTag/${RUN_ID_TAG}`]: 'false' } };

/** The lake. Every Task reads and writes it. */
function grantLake(role: iam.Role, bucket: s3.IBucket): void {
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'ReadWriteLake',
      actions: ['s3:GetObject', 's3:PutObject'],
      resources: [bucket.arnForObjects('*')],
    }),
  );
  role.addToPolicy(
    new iam.PolicyStatement({ sid: 'ListLake', actions: ['s3:ListBucket'], resources: [bucket.bucketArn] }),
  );
}

/** Describe calls that list the account's resources. They have no resource-level permission. */
function grantDescribe(role: iam.Role, sid: 'DescribeRds' | 'DescribeEc2', actions: readonly string[]): void {
  role.addToPolicy(new iam.PolicyStatement({ sid, actions: [...actions], resources: ['*'] }));
}

/**
 * Launching a run's instances, clients or servers.
 * Only from the stack's launch templates, tagged with the run, with the role of their kind.
 */
function grantLaunch(role: iam.Role, props: BackendPermissionsProps, kind: 'clients' | 'servers'): void {
  const instances = arn(role, 'ec2', 'instance', '*', ArnFormat.SLASH_RESOURCE_NAME);
  const volumes = arn(role, 'ec2', 'volume', '*', ArnFormat.SLASH_RESOURCE_NAME);
  const networkInterfaces = arn(role, 'ec2', 'network-interface', '*', ArnFormat.SLASH_RESOURCE_NAME);
  const [templates, securityGroup, passedRole] =
    kind === 'clients'
      ? [props.launchTemplates, props.clientSecurityGroup, props.clientRole]
      : [props.serverLaunchTemplates, props.serverSecurityGroup, props.serverRole];
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'RunTaggedClients',
      actions: ['ec2:RunInstances'],
      resources: [instances, volumes],
      conditions: runTagPresent,
    }),
  );
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'RunClientsFromStackTemplates',
      actions: ['ec2:RunInstances'],
      resources: [
        // Created with the tagged instance. RunInstances tags only the instance and its volume.
        networkInterfaces,
        ...templates.map((lt) =>
          arn(role, 'ec2', 'launch-template', lt.launchTemplateId!, ArnFormat.SLASH_RESOURCE_NAME),
        ),
        ...props.subnets.map((s) => arn(role, 'ec2', 'subnet', s.subnetId, ArnFormat.SLASH_RESOURCE_NAME)),
        arn(role, 'ec2', 'security-group', securityGroup.securityGroupId, ArnFormat.SLASH_RESOURCE_NAME),
        // The Debian image from the public SSM parameter. These are Amazon-owned images.
        Stack.of(role).formatArn({
          service: 'ec2',
          account: '',
          resource: 'image',
          resourceName: '*',
          arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
        }),
      ],
    }),
  );
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'ResolveClientAmiParameter',
      // The launch templates resolve the AMI from a public SSM parameter.
      // EC2 resolves it with the caller's permission.
      actions: ['ssm:GetParameters'],
      resources: props.amiParameters.map((name) =>
        Stack.of(role).formatArn({
          service: 'ssm',
          account: '',
          resource: 'parameter',
          resourceName: name.replace(/^\//, ''),
          arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
        }),
      ),
    }),
  );
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'TagClientsAtLaunch',
      actions: ['ec2:CreateTags'],
      resources: [instances, volumes],
      conditions: { StringEquals: { 'ec2:CreateAction': 'RunInstances' } },
    }),
  );
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: kind === 'clients' ? 'PassClientRole' : 'PassServerRole',
      actions: ['iam:PassRole'],
      resources: [passedRole.roleArn],
      conditions: { StringEquals: { 'iam:PassedToService': 'ec2.amazonaws.com' } },
    }),
  );
}

/**
 * Run Command on the run's instances only, with the AWS-RunShellScript document.
 * Its output goes to the lake.
 */
function grantRunCommand(role: iam.Role, bucket: s3.IBucket, follow: readonly string[]): void {
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'RunCommandOnRunClients',
      actions: ['ssm:SendCommand'],
      resources: [arn(role, 'ec2', 'instance', '*', ArnFormat.SLASH_RESOURCE_NAME)],
      conditions: { Null: { [`ssm:resourceTag/${RUN_ID_TAG}`]: 'false' } },
    }),
  );
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'RunShellScriptDocument',
      actions: ['ssm:SendCommand'],
      resources: [
        Stack.of(role).formatArn({
          service: 'ssm',
          account: '',
          resource: 'document',
          resourceName: 'AWS-RunShellScript',
          arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
        }),
      ],
    }),
  );
  // The Service Authorization Reference lists bucket among ssm:SendCommand's resource types.
  // See "Actions, resources, and condition keys for AWS Systems Manager".
  // The commands name the lake as their output bucket, and the type is marked optional.
  // Granting it on the lake allows the command either way. The grant gives no access to the bucket.
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'RunCommandOutputToLake',
      actions: ['ssm:SendCommand'],
      resources: [bucket.bucketArn],
    }),
  );
  role.addToPolicy(new iam.PolicyStatement({ sid: 'FollowCommands', actions: [...follow], resources: ['*'] }));
}

/** A cell's databases. RDS resources by name and run tag, and self-managed servers on EC2. */
function grantDatabases(role: iam.Role, props: BackendPermissionsProps): void {
  const rds = { ...runRdsArns(role), subnetGroup: arn(role, 'rds', 'subgrp', props.dbSubnetGroupName) };

  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'CreateRunDatabases',
      // CreateDBInstanceReadReplica authorizes the new replica and its source.
      // Both are ab-* db resources. See Service Authorization Reference, Amazon RDS.
      actions: [
        'rds:CreateDBCluster',
        'rds:CreateDBInstance',
        'rds:CreateDBInstanceReadReplica',
        'rds:CreateDBClusterParameterGroup',
        'rds:CreateDBParameterGroup',
        'rds:AddTagsToResource',
      ],
      resources: [rds.cluster, rds.instance, rds.clusterParameterGroup, rds.instanceParameterGroup],
      conditions: runTagPresent,
    }),
  );
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'UseStackDatabaseNetworkAndDefaults',
      // These creates also authorize the subnet group and the default option and parameter groups they use.
      actions: ['rds:CreateDBCluster', 'rds:CreateDBInstance', 'rds:CreateDBInstanceReadReplica'],
      resources: [
        rds.subnetGroup,
        arn(role, 'rds', 'og', 'default:*'),
        arn(role, 'rds', 'pg', 'default.*'),
        arn(role, 'rds', 'cluster-pg', 'default.*'),
      ],
    }),
  );
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'ManageRunDatabases',
      actions: ['rds:ModifyDBClusterParameterGroup', 'rds:ModifyDBParameterGroup'],
      resources: [rds.clusterParameterGroup, rds.instanceParameterGroup],
      conditions: taggedResource,
    }),
  );
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'CheckRunParameterGroups',
      // The backend reads back the run's own parameter groups and reboots an instance pending reboot.
      // See Service Authorization Reference, Amazon RDS, for each action's resource types.
      actions: ['rds:DescribeDBClusterParameters', 'rds:DescribeDBParameters'],
      resources: [rds.clusterParameterGroup, rds.instanceParameterGroup],
    }),
  );
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'RebootRunInstances',
      actions: ['rds:RebootDBInstance'],
      resources: [rds.instance],
      conditions: taggedResource,
    }),
  );
  grantDescribe(role, 'DescribeRds', RDS_DESCRIBE_ACTIONS);
  // ManageMasterUserPassword makes RDS create the master secret with the caller's permissions.
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'RdsManagedMasterSecret',
      actions: ['secretsmanager:CreateSecret', 'secretsmanager:TagResource'],
      resources: [arn(role, 'secretsmanager', 'secret', 'rds!*')],
    }),
  );
  // Aurora needs kms:DescribeKey, secretsmanager:CreateSecret and secretsmanager:TagResource from the caller.
  // See Aurora User Guide, "Password management with Amazon Aurora and AWS Secrets Manager".
  // The secret is encrypted with the AWS managed key aws/secretsmanager.
  // An alias condition cannot be relied on here.
  // KMS documents alias-based access for customer managed keys only.
  // In a fresh account or Region that key is created on first use.
  // Alias changes may take five minutes to reach authorization. See KMS Developer Guide, "Use aliases to control access
  // to KMS keys".
  // The first CreateDBCluster would then be refused.
  // DescribeKey returns metadata only, so it is granted on this account's keys without the condition.
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'DescribeSecretsManagerKey',
      actions: ['kms:DescribeKey'],
      resources: [arn(role, 'kms', 'key', '*', ArnFormat.SLASH_RESOURCE_NAME)],
    }),
  );
  // An account's first Aurora cluster makes RDS create its service-linked role with the caller's permissions.
  // So the caller needs iam:CreateServiceLinkedRole on that role, for rds.amazonaws.com.
  // See Aurora User Guide, "Using service-linked roles for Amazon Aurora".
  // Without it the first CreateDBCluster of a new account fails.
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'CreateRdsServiceLinkedRole',
      actions: ['iam:CreateServiceLinkedRole'],
      resources: [
        Stack.of(role).formatArn({
          service: 'iam',
          region: '',
          resource: 'role',
          resourceName: RDS_SERVICE_LINKED_ROLE,
          arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
        }),
      ],
      conditions: { StringEquals: { 'iam:AWSServiceName': 'rds.amazonaws.com' } },
    }),
  );

  // Self-managed servers launch from the stack's server templates and are set up through Run Command.
  // The backend also asks an instance type's architecture.
  grantLaunch(role, props, 'servers');
  grantDescribe(role, 'DescribeEc2', ['ec2:DescribeInstances', 'ec2:DescribeInstanceTypes']);
  grantRunCommand(role, props.bucket, [
    'ssm:GetCommandInvocation',
    'ssm:ListCommands',
    'ssm:DescribeInstanceInformation',
  ]);
  // A self-managed cell's credentials. They are created with the run tag and described only when they carry it.
  // See Service Authorization Reference, AWS Secrets Manager, for the condition keys.
  // Tags given to CreateSecret also need secretsmanager:TagResource.
  const runSecrets = arn(role, 'secretsmanager', 'secret', `${RDS_NAME_PREFIX}*`);
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'CreateRunSecrets',
      actions: ['secretsmanager:CreateSecret', 'secretsmanager:TagResource'],
      resources: [runSecrets],
      conditions: runTagPresent,
    }),
  );
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'DescribeRunSecrets',
      actions: ['secretsmanager:DescribeSecret'],
      resources: [runSecrets],
      conditions: taggedResource,
    }),
  );
}

/** A cell's client instances. They launch from the stack's client templates and register with SSM. */
function grantClientMachines(role: iam.Role, props: BackendPermissionsProps): void {
  grantLaunch(role, props, 'clients');
  grantDescribe(role, 'DescribeEc2', ['ec2:DescribeInstances', 'ec2:DescribeInstanceTypes']);
  role.addToPolicy(
    new iam.PolicyStatement({ sid: 'FollowCommands', actions: ['ssm:DescribeInstanceInformation'], resources: ['*'] }),
  );
}

/** Runner jobs on the run's clients only, followed and cancelled. */
function grantRunnerJobs(role: iam.Role, bucket: s3.IBucket): void {
  grantRunCommand(role, bucket, ['ssm:GetCommandInvocation', 'ssm:ListCommands', 'ssm:CancelCommand']);
}

/** Metrics of the run's databases, from CloudWatch and Performance Insights. */
function grantServerMetrics(role: iam.Role): void {
  role.addToPolicy(
    new iam.PolicyStatement({ sid: 'ReadCloudWatchMetrics', actions: ['cloudwatch:GetMetricData'], resources: ['*'] }),
  );
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'ReadPerformanceInsights',
      actions: ['pi:GetResourceMetrics'],
      resources: [
        Stack.of(role).formatArn({
          service: 'pi',
          resource: 'metrics',
          resourceName: 'rds/*',
          arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
        }),
      ],
    }),
  );
  grantDescribe(role, 'DescribeRds', ['rds:DescribeDBInstances']);
}

/** Deleting a cell's databases, instances and secret. Only those with the run tag. */
function grantCellTeardown(role: iam.Role): void {
  grantRunDatabaseDeletion(role);
  grantRunSecretDeletion(role);
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'TerminateRunClients',
      actions: ['ec2:TerminateInstances'],
      resources: [arn(role, 'ec2', 'instance', '*', ArnFormat.SLASH_RESOURCE_NAME)],
      conditions: taggedResource,
    }),
  );
  grantDescribe(role, 'DescribeRds', RDS_DESCRIBE_ACTIONS);
  grantDescribe(role, 'DescribeEc2', ['ec2:DescribeInstances']);
}

/**
 * The preflight's account reads beyond RDS and EC2 Describe*.
 * It reads the RDS service-linked role, the EC2 vCPU quota and whether an s3:// client download exists.
 * See Aurora User Guide, "Using service-linked roles for Amazon Aurora".
 * Service Quotas reads take Resource "*". HeadObject needs s3:GetObject on the object, per the S3 API Reference.
 */
function grantPreflightReads(role: iam.Role, props: BackendPermissionsProps): void {
  const stack = Stack.of(role);
  // Whether the engine version and instance class are offered, and the engine's default parameters.
  grantDescribe(role, 'DescribeRds', [
    'rds:DescribeOrderableDBInstanceOptions',
    'rds:DescribeDBEngineVersions',
    'rds:DescribeEngineDefaultClusterParameters',
    'rds:DescribeEngineDefaultParameters',
  ]);
  // The clients' instance types, their offerings per AZ, running vCPUs and the subnets' way out.
  grantDescribe(role, 'DescribeEc2', [
    'ec2:DescribeInstances',
    'ec2:DescribeInstanceTypes',
    'ec2:DescribeSubnets',
    'ec2:DescribeInstanceTypeOfferings',
    'ec2:DescribeRouteTables',
    'ec2:DescribeNatGateways',
    'ec2:DescribePrefixLists',
    'ec2:DescribeVpcEndpoints',
  ]);
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'PreflightReadRdsServiceLinkedRole',
      actions: ['iam:GetRole'],
      resources: [
        stack.formatArn({
          service: 'iam',
          region: '',
          resource: 'role',
          resourceName: RDS_SERVICE_LINKED_ROLE,
          arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
        }),
      ],
    }),
  );
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'PreflightReadEc2Quota',
      actions: ['servicequotas:GetServiceQuota', 'servicequotas:GetAWSDefaultServiceQuota'],
      resources: ['*'],
    }),
  );
  const objects = (props.clientSourceUrls ?? []).flatMap((url) => {
    const m = /^s3:\/\/([^/]+)\/(.+)$/.exec(url);
    return m
      ? [
          stack.formatArn({
            service: 's3',
            region: '',
            account: '',
            resource: m[1]!,
            resourceName: m[2]!,
            arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
          }),
        ]
      : [];
  });
  if (objects.length > 0) {
    role.addToPolicy(
      new iam.PolicyStatement({ sid: 'PreflightHeadClientDownloads', actions: ['s3:GetObject'], resources: objects }),
    );
  }
}

/**
 * The sweeper marks what an aborted run leaves pending as expired now.
 * Only resources that already carry the run tag, and only that one tag key.
 */
function grantSweepMarking(role: iam.Role): void {
  const onlyExpiresAt = {
    Null: { [`aws:ResourceTag/${RUN_ID_TAG}`]: 'false' },
    'ForAllValues:StringEquals': { 'aws:TagKeys': [EXPIRES_AT_TAG] },
  };
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'MarkRunDatabasesForSweep',
      actions: ['rds:AddTagsToResource'],
      resources: Object.values(runRdsArns(role)),
      conditions: onlyExpiresAt,
    }),
  );
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'MarkRunClientsForSweep',
      actions: ['ec2:CreateTags'],
      resources: [arn(role, 'ec2', 'instance', '*', ArnFormat.SLASH_RESOURCE_NAME)],
      conditions: onlyExpiresAt,
    }),
  );
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'MarkRunSecretsForSweep',
      actions: ['secretsmanager:TagResource'],
      resources: [arn(role, 'secretsmanager', 'secret', `${RDS_NAME_PREFIX}*`)],
      conditions: onlyExpiresAt,
    }),
  );
}

function acknowledgeBackendWildcards(role: iam.Role, bucket: s3.IBucket): void {
  const bucketId = Stack.of(role).getLogicalId(bucket.node.defaultChild as never);
  const findings: Record<string, string> = {
    'Resource::*':
      'Describe*, ssm:GetCommandInvocation/ListCommands/CancelCommand, cloudwatch:GetMetricData and the ' +
      "preflight's Service Quotas reads support no resource-level permissions (or must list the account, as " +
      'the sweeper does); every mutating call is scoped by name or tag.',
    'Resource::arn:<AWS::Partition>:rds:<AWS::Region>:<AWS::AccountId>:cluster:ab-*':
      'The backend names every cluster ab-<run>-<cell> (core/backends/aws/names.ts); creation also requires ' +
      'the run tag.',
    'Resource::arn:<AWS::Partition>:rds:<AWS::Region>:<AWS::AccountId>:db:ab-*':
      'The backend names every instance ab-<run>-<cell>-w|-rN; creation also requires the run tag.',
    'Resource::arn:<AWS::Partition>:rds:<AWS::Region>:<AWS::AccountId>:cluster-pg:ab-*':
      'Per-cell cluster parameter groups are named ab-<run>-<cell>-cpg.',
    'Resource::arn:<AWS::Partition>:rds:<AWS::Region>:<AWS::AccountId>:pg:ab-*':
      'Per-cell instance parameter groups are named ab-<run>-<cell>-ipg.',
    'Resource::arn:<AWS::Partition>:rds:<AWS::Region>:<AWS::AccountId>:og:default:*':
      "Aurora instances are created with the engine's default option group, whose name depends on the engine version.",
    'Resource::arn:<AWS::Partition>:rds:<AWS::Region>:<AWS::AccountId>:pg:default.*':
      'Default parameter groups are referenced, never modified (no Modify/Delete on them).',
    'Resource::arn:<AWS::Partition>:rds:<AWS::Region>:<AWS::AccountId>:cluster-pg:default.*':
      'Default cluster parameter groups are referenced, never modified.',
    'Resource::arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:secret:rds!*':
      "RDS creates the managed master secret (rds!cluster-<uuid>) with the caller's CreateSecret/TagResource " +
      'permissions; the name is generated by RDS.',
    'Resource::arn:<AWS::Partition>:kms:<AWS::Region>:<AWS::AccountId>:key/*':
      'kms:DescribeKey only (key metadata), which ManageMasterUserPassword needs on the AWS managed ' +
      'aws/secretsmanager key; its key id differs per account and the key may not exist before the first cluster.',
    'Resource::arn:<AWS::Partition>:ec2:<AWS::Region>:<AWS::AccountId>:instance/*':
      'Client instance ids are only known after launch: RunInstances requires the run tag on the request, ' +
      'terminate and SendCommand require it on the instance.',
    'Resource::arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:secret:ab-*':
      "A self-managed cell's credentials secret is named ab-<run>-<cell>-server-credentials " +
      '(core/backends/aws/names.ts); creating it requires the run tag on the request, describing and deleting ' +
      'it the run tag on the secret.',
    'Resource::arn:<AWS::Partition>:ec2:<AWS::Region>:<AWS::AccountId>:volume/*':
      "The root volume created by RunInstances from the stack's template; the request must carry the run tag.",
    'Resource::arn:<AWS::Partition>:ec2:<AWS::Region>:<AWS::AccountId>:network-interface/*':
      'The primary network interface RunInstances creates with the instance; the instance itself must carry ' +
      'the run tag.',
    'Resource::arn:<AWS::Partition>:ec2:<AWS::Region>::image/*':
      'The AMI is resolved at launch from the public Debian 12 SSM parameter; its id changes with every release.',
    'Resource::arn:<AWS::Partition>:pi:<AWS::Region>:<AWS::AccountId>:metrics/rds/*':
      "Performance Insights metrics are addressed by the instance's DbiResourceId, known only after creation.",
    [`Resource::<${bucketId}.Arn>/*`]:
      'The backend reads and writes the whole lake layout (tables/, raw/, scripts/, ssm-output/) of this one bucket.',
  };
  for (const [finding, reason] of Object.entries(findings)) {
    Validations.of(role).acknowledge({ id: `AwsSolutions-IAM5[${finding}]`, reason });
  }
}

interface VerdictPermissionsProps {
  readonly bucket: s3.IBucket;
  readonly workGroupName: string;
  readonly databaseName: string;
  readonly topic: sns.ITopic;
}

/**
 * Athena over the lake, in the stack's work group.
 * Athena reads Glue and S3 with the caller's permissions.
 * See Athena User Guide, "Configure access to databases and tables in the AWS Glue Data Catalog".
 * Athena engine 3 is Trino, whose Glue metastore also reads partitions by value.
 * So GetPartition and BatchGetPartition are granted too.
 * Athena also needs s3:GetBucketLocation. See Athena User Guide, "Control access to Amazon S3 from Athena".
 */
function grantLakeQueries(role: iam.Role, props: VerdictPermissionsProps): void {
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'QueryLakeWithAthena',
      actions: ['athena:StartQueryExecution', 'athena:GetQueryExecution', 'athena:GetQueryResults'],
      resources: [arn(role, 'athena', 'workgroup', props.workGroupName, ArnFormat.SLASH_RESOURCE_NAME)],
    }),
  );
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'ReadLakeCatalog',
      actions: [
        'glue:GetDatabase',
        'glue:GetTable',
        'glue:GetPartitions',
        'glue:GetPartition',
        'glue:BatchGetPartition',
      ],
      resources: lakeCatalog(role, props.databaseName),
    }),
  );
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'LocateLakeBucket',
      actions: ['s3:GetBucketLocation'],
      resources: [props.bucket.bucketArn],
    }),
  );
  Validations.of(role).acknowledge({
    id:
      `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:glue:<AWS::Region>:<AWS::AccountId>:` +
      `table/${props.databaseName}/*]`,
    reason:
      "The lake's tables and views of this one Glue database: the views are (re)created by the lake reader, " +
      'their names come from core/lake/sql.',
  });
}

/** The Glue catalog, the lake's database and its tables. */
function lakeCatalog(role: iam.Role, databaseName: string): string[] {
  return [
    Stack.of(role).formatArn({ service: 'glue', resource: 'catalog' }),
    arn(role, 'glue', 'database', databaseName, ArnFormat.SLASH_RESOURCE_NAME),
    arn(role, 'glue', 'table', `${databaseName}/*`, ArnFormat.SLASH_RESOURCE_NAME),
  ];
}

/**
 * A history read first creates or replaces the lake's views. That needs glue:CreateTable and UpdateTable.
 * Athena requires access to a resource's parent for any non-delete action.
 * See Athena User Guide, "Configure access to databases and tables in the AWS Glue Data Catalog".
 */
function grantLakeViews(role: iam.Role, props: VerdictPermissionsProps): void {
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'CreateLakeViews',
      actions: ['glue:CreateTable', 'glue:UpdateTable'],
      resources: lakeCatalog(role, props.databaseName),
    }),
  );
}

/**
 * The ComputeVerdicts Task's alerts.
 * PutMetricData has no resource-level permission, so a namespace condition limits it.
 * See Service Authorization Reference, Amazon CloudWatch.
 * Events go to the default event bus. Notifications go to the topic.
 */
function grantVerdictPermissions(role: iam.Role, props: VerdictPermissionsProps): void {
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'PutVerdictMetrics',
      actions: ['cloudwatch:PutMetricData'],
      resources: ['*'],
      conditions: { StringEquals: { 'cloudwatch:namespace': VERDICT_METRIC_NAMESPACE } },
    }),
  );
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'PutRegressionEvents',
      actions: ['events:PutEvents'],
      resources: [arn(role, 'events', 'event-bus', DEFAULT_EVENT_BUS, ArnFormat.SLASH_RESOURCE_NAME)],
    }),
  );
  role.addToPolicy(
    new iam.PolicyStatement({ sid: 'NotifyRegressions', actions: ['sns:Publish'], resources: [props.topic.topicArn] }),
  );
}

interface CompactionPermissionsProps {
  readonly bucket: s3.IBucket;
  readonly databaseName: string;
}

/**
 * FinishRun's compaction of a run to Parquet, beyond the Athena and lake access above.
 * ALTER TABLE ADD PARTITION runs with the caller's Glue permissions. See Athena User Guide, "ALTER TABLE ADD
 * PARTITION".
 * It also needs glue:BatchCreatePartition. See AWS re:Post Knowledge Center on Athena failing to add partitions.
 * GetPartition serves the IF NOT EXISTS check.
 * DeleteObjects needs s3:DeleteObject for each key. See Service Authorization Reference, Amazon S3.
 * It is granted only under tables/ and compacted/. UNLOAD writes with the s3:PutObject granted above.
 */
function grantCompactionPermissions(role: iam.Role, props: CompactionPermissionsProps): void {
  const stack = Stack.of(role);
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'RegisterCompactedRuns',
      actions: ['glue:GetPartition', 'glue:CreatePartition', 'glue:BatchCreatePartition'],
      resources: lakeCatalog(role, props.databaseName),
    }),
  );
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'RemoveCompactedJsonLines',
      actions: ['s3:DeleteObject'],
      resources: [props.bucket.arnForObjects('tables/*'), props.bucket.arnForObjects('compacted/*')],
    }),
  );
  const bucketId = stack.getLogicalId(props.bucket.node.defaultChild as never);
  for (const [finding, reason] of Object.entries({
    [`Resource::<${bucketId}.Arn>/tables/*`]:
      "A compacted run's JSON Lines objects, named by run under tables/<table>/dt=<date>/, are deleted once " +
      'its Parquet partition is registered.',
    [`Resource::<${bucketId}.Arn>/compacted/*`]:
      "What a failed UNLOAD left in a run's Parquet folder under compacted/ is removed before it is unloaded again.",
  })) {
    Validations.of(role).acknowledge({ id: `AwsSolutions-IAM5[${finding}]`, reason });
  }
}
