/**
 * What the AWS backend (core/backends/aws) may do, as IAM statements for the workflow Lambdas
 * (grantTaskPermissions: a role per Task function, with the statements of the backend parts its own
 * code calls) and the sweeper (grantSweeperPermissions: list, delete, re-tag only).
 * Least privilege by what a run creates:
 *  - RDS clusters, instances and parameter groups by name: every identifier starts with `ab-`
 *    (core/backends/aws/names.ts), creation also requires the run tag on the request, modifying and
 *    deleting require it on the resource;
 *  - EC2 clients by tag: RunInstances must tag the instance with `aurora-bench:run-id`, and
 *    terminate / Run Command only reach instances carrying that tag;
 *  - S3 on the lake bucket only; launch only from the stack's launch templates with its profile.
 * The actions are the ones core/backends/aws calls (cluster.ts, client-fleet.ts, jobs.ts, metrics.ts,
 * s3-lake.ts, teardown.ts, sweeper.ts, and the read-only preflight*.ts PlanRun runs). API calls
 * without resource-level permissions (Describe*, GetMetricData, Service Quotas reads) take
 * Resource "*", acknowledged where the statement is created.
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
  /**
   * Self-managed servers (lib/servers.ts): launched like the clients, from their own templates, with their own role.
   */
  readonly serverRole: iam.IRole;
  readonly serverLaunchTemplates: readonly ec2.ILaunchTemplate[];
  readonly serverSecurityGroup: ec2.ISecurityGroup;
  readonly dbSecurityGroup: ec2.ISecurityGroup;
  readonly subnets: readonly ec2.ISubnet[];
  readonly dbSubnetGroupName: string;
  /** Public SSM parameters the launch templates resolve the AMI from. */
  readonly amiParameters: readonly string[];
  /** What the clients' user data downloads (https:// or s3://): the preflight HEADs the s3:// ones. */
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

/** The RDS service-linked role (path and name), Aurora User Guide, "Using service-linked roles for Amazon Aurora". */
const RDS_SERVICE_LINKED_ROLE = 'aws-service-role/rds.amazonaws.com/AWSServiceRoleForRDS';

const RDS_DESCRIBE_ACTIONS = ['rds:DescribeDBClusters', 'rds:DescribeDBInstances'];
/** The sweeper also lists the parameter groups (it finds a run's by their tags). */
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
 * Deleting a run's databases (teardown.ts), for the Task role and the sweeper: only ab-* resources
 * that carry the run tag. The cluster, db, cluster-pg and pg resource types all take
 * aws:ResourceTag/${TagKey} (Service Authorization Reference, Amazon RDS resource types), and these
 * Delete* actions authorize against exactly those types. ListTagsForResource (the sweeper's only:
 * grantSweeperPermissions) stays unconditioned: the sweeper reads the tags of every ab-* parameter
 * group to find out whether it is a run's.
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
 * Describing and deleting a run's credentials secrets (teardown.ts, sweeper.ts), for the Task role
 * and the sweeper; listing them is the sweeper's only (grantSweeperPermissions).
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
 * The sweeper's role (lambdas/sweeper, core/backends/aws/sweeper.ts): it lists, deletes and re-tags,
 * it never creates, launches, runs commands, passes roles or touches the lake.
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
  // ListSecrets supports no resource-level permission (Service Authorization Reference, AWS Secrets Manager).
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
  // Resource "*" (Describe*, X-Ray) is acknowledged where the role is created, with the tracing grant.
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
 * The parts of the AWS backend a Task's function composes (core/backends/aws/parts, wired in
 * lambdas/<task>/handler.ts), each with the statements of the calls its code makes:
 *  - lake: the results lake (s3-lake.ts), every Task;
 *  - preflight: PlanRun's read-only account checks (preflight*.ts);
 *  - databases: a cell's Aurora cluster, RDS DB instances or self-managed servers (cluster.ts,
 *    db-instances.ts, self-managed-servers.ts), ProvisionCell and CheckCellReady;
 *  - client-machines: a cell's client instances (client-fleet.ts), StartClients and CheckClientsReady;
 *  - runner-jobs: the runner through SSM Run Command (jobs.ts), RunStep;
 *  - server-metrics: CloudWatch and Performance Insights (metrics.ts), RunStep and CollectLateMetrics;
 *  - cell-teardown: deleting a cell's resources (teardown.ts), TeardownCell;
 *  - lake-queries: Athena over the lake (athena.ts), FinishRun, ComputeVerdicts and JudgeRound;
 *  - lake-compaction: a run compacted to Parquet (athena-compaction.ts), FinishRun;
 *  - lake-views: the views a history read creates first (athena-lake.ts), ComputeVerdicts and JudgeRound
 *    (a question against history);
 *  - verdicts: the verdicts' alerts (verdict-alerts.ts), ComputeVerdicts. test/cdk/permissions.test.ts checks each
 * function's role against what its own bundle calls, both ways.
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
 * Adds the statements of one Task's backend parts to its function's
 * role and acknowledges the unavoidable wildcards on it.
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

/** The lake (s3-lake.ts: get, put, list): every Task reads and writes it. */
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

/** Describe calls that list the account's resources (no resource-level permission). */
function grantDescribe(role: iam.Role, sid: 'DescribeRds' | 'DescribeEc2', actions: readonly string[]): void {
  role.addToPolicy(new iam.PolicyStatement({ sid, actions: [...actions], resources: ['*'] }));
}

/**
 * Launching instances of a run (client-fleet.ts for clients, self-managed-servers.ts for servers):
 * from the stack's launch templates only, tagged with the run, with the role of their kind.
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
        // Created with the (tagged) instance; RunInstances tags only the instance and its volume.
        networkInterfaces,
        ...templates.map((lt) =>
          arn(role, 'ec2', 'launch-template', lt.launchTemplateId!, ArnFormat.SLASH_RESOURCE_NAME),
        ),
        ...props.subnets.map((s) => arn(role, 'ec2', 'subnet', s.subnetId, ArnFormat.SLASH_RESOURCE_NAME)),
        arn(role, 'ec2', 'security-group', securityGroup.securityGroupId, ArnFormat.SLASH_RESOURCE_NAME),
        // The Debian image from the public SSM parameter: Amazon-owned images.
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
      // The launch templates name the AMI as resolve:ssm:<public
      // parameter>; EC2 resolves it with the caller's permission.
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
 * SDK Run Command on the run's instances only (jobs.ts;
 * self-managed-servers.ts's setup), with the AWS-RunShellScript document, its output to the lake.
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
  // The Service Authorization Reference lists bucket (arn:${Partition}:s3:::${BucketName}) among
  // ssm:SendCommand's resource types beside document and instance ("Actions, resources, and condition
  // keys for AWS Systems Manager"), and the commands name the lake as their OutputS3BucketName
  // (jobs.ts). It marks the type optional and says no more; granted on the lake, the command is allowed
  // whether or not SSM authorizes it against the bucket, and the grant gives no access to the bucket.
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'RunCommandOutputToLake',
      actions: ['ssm:SendCommand'],
      resources: [bucket.bucketArn],
    }),
  );
  role.addToPolicy(new iam.PolicyStatement({ sid: 'FollowCommands', actions: [...follow], resources: ['*'] }));
}

/**
 * A cell's databases (ProvisionCell, CheckCellReady): RDS clusters, DB instances
 * and parameter groups by name and run tag; self-managed servers on EC2.
 */
function grantDatabases(role: iam.Role, props: BackendPermissionsProps): void {
  const rds = { ...runRdsArns(role), subnetGroup: arn(role, 'rds', 'subgrp', props.dbSubnetGroupName) };

  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'CreateRunDatabases',
      // CreateDBInstanceReadReplica (RDS for MySQL, MariaDB, PostgreSQL cells, db-instances.ts)
      // authorizes the new replica and its source, both ab-* db resources (Service Authorization
      // Reference, Amazon RDS: CreateDBInstanceReadReplica, resource type db, condition keys
      // aws:RequestTag/${TagKey}).
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
      // CreateDBCluster/Instance/InstanceReadReplica also authorize the
      // subnet group and the default option/parameter groups they use.
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
      // core/backends/aws/cluster.ts reads back the values of the run's own parameter groups
      // (DescribeDBClusterParameters on a cluster-pg, DescribeDBParameters on a pg) and reboots an
      // instance whose group is pending-reboot (RebootDBInstance on a db): Service Authorization
      // Reference, Amazon RDS, resource types of each action.
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
  // ManageMasterUserPassword: RDS creates the master secret with the caller's permissions.
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'RdsManagedMasterSecret',
      actions: ['secretsmanager:CreateSecret', 'secretsmanager:TagResource'],
      resources: [arn(role, 'secretsmanager', 'secret', 'rds!*')],
    }),
  );
  // "the user who specifies that Aurora manages the master user password in Secrets Manager must have
  // permissions to perform kms:DescribeKey, secretsmanager:CreateSecret, secretsmanager:TagResource"
  // (Aurora User Guide, "Password management with Amazon Aurora and AWS Secrets Manager"). The secret
  // is encrypted with the AWS managed key aws/secretsmanager (no MasterUserSecretKmsKeyId). This
  // statement used to require kms:ResourceAliases = alias/aws/secretsmanager, which cannot be relied
  // on: KMS documents alias-based access (ABAC) for customer managed keys, and in an account or Region
  // where Secrets Manager was never used that key is only created on first use, while "it might take
  // up to five minutes for tag and alias changes to affect KMS key authorization" (KMS Developer
  // Guide, "Use aliases to control access to KMS keys") — the first CreateDBCluster would be refused.
  // DescribeKey returns a key's metadata only (no key material, no cryptographic use), so it is
  // granted on this account's keys in this Region without the alias condition.
  role.addToPolicy(
    new iam.PolicyStatement({
      sid: 'DescribeSecretsManagerKey',
      actions: ['kms:DescribeKey'],
      resources: [arn(role, 'kms', 'key', '*', ArnFormat.SLASH_RESOURCE_NAME)],
    }),
  );
  // The first Aurora cluster of an account makes RDS create its service-linked role
  // (AWSServiceRoleForRDS) with the caller's permissions: "You must configure permissions to allow an
  // IAM entity ... to create ... a service-linked role" — iam:CreateServiceLinkedRole on that role,
  // with iam:AWSServiceName rds.amazonaws.com (Aurora User Guide, "Using service-linked roles for
  // Amazon Aurora"). Without it the first CreateDBCluster of a new account fails.
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

  // Self-managed servers (self-managed-servers.ts): launched from the stack's server templates,
  // asked an instance type's architecture (client-fleet.ts), set up through Run Command.
  grantLaunch(role, props, 'servers');
  grantDescribe(role, 'DescribeEc2', ['ec2:DescribeInstances', 'ec2:DescribeInstanceTypes']);
  grantRunCommand(role, props.bucket, [
    'ssm:GetCommandInvocation',
    'ssm:ListCommands',
    'ssm:DescribeInstanceInformation',
  ]);
  // A self-managed cell's credentials: created as ab-... with the run tag on the request, described
  // only when the secret carries it. CreateSecret and TagResource take aws:RequestTag/${TagKey};
  // DescribeSecret aws:ResourceTag/${TagKey} (Service Authorization Reference, AWS Secrets Manager).
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

/**
 * A cell's client instances (StartClients, CheckClientsReady):
 * launched from the stack's client templates, registered with SSM.
 */
function grantClientMachines(role: iam.Role, props: BackendPermissionsProps): void {
  grantLaunch(role, props, 'clients');
  grantDescribe(role, 'DescribeEc2', ['ec2:DescribeInstances', 'ec2:DescribeInstanceTypes']);
  role.addToPolicy(
    new iam.PolicyStatement({ sid: 'FollowCommands', actions: ['ssm:DescribeInstanceInformation'], resources: ['*'] }),
  );
}

/** Runner jobs (RunStep): the runner on the run's clients only, followed and cancelled. */
function grantRunnerJobs(role: iam.Role, bucket: s3.IBucket): void {
  grantRunCommand(role, bucket, ['ssm:GetCommandInvocation', 'ssm:ListCommands', 'ssm:CancelCommand']);
}

/**
 * Metrics of the run's databases (RunStep, CollectLateMetrics):
 * CloudWatch, Performance Insights by the instance's resource id.
 */
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

/** Deleting a cell's resources (TeardownCell): its databases, instances and secret, only with the run tag on them. */
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
 * The account reads of the preflight PlanRun runs (core/backends/aws/preflight.ts) beyond RDS and EC2
 * Describe*: the RDS service-linked role (iam:GetRole on that one role; Aurora User Guide, "Using
 * service-linked roles for Amazon Aurora":
 * arn:aws:iam::<account>:role/aws-service-role/rds.amazonaws.com/AWSServiceRoleForRDS), the EC2 vCPU quota
 * (servicequotas:GetServiceQuota and GetAWSDefaultServiceQuota, Read actions in the Service Authorization Reference's
 * Service Quotas table; granted on Resource "*"), and that an s3:// client
 * download exists (HeadObject needs s3:GetObject on the object, S3 API Reference).
 */
function grantPreflightReads(role: iam.Role, props: BackendPermissionsProps): void {
  const stack = Stack.of(role);
  // Whether the engine version and instance class are offered, and the
  // engine's default parameters (preflight.ts, preflight-parameters.ts).
  grantDescribe(role, 'DescribeRds', [
    'rds:DescribeOrderableDBInstanceOptions',
    'rds:DescribeDBEngineVersions',
    'rds:DescribeEngineDefaultClusterParameters',
    'rds:DescribeEngineDefaultParameters',
  ]);
  // The clients' instance types, their offerings per AZ, running vCPUs,
  // and the subnets' way out (preflight-clients.ts, preflight-network.ts).
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
 * The sweeper's re-tagging (core/backends/aws/sweeper.ts teardownRun): what an aborted run leaves
 * pending gets `aurora-bench:expires-at` = now. Only on resources that already carry the run tag, and
 * only that one tag key.
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
 * Athena over the lake (FinishRun, ComputeVerdicts: core/backends/aws/athena.ts):
 *  - queries in the stack's work group (StartQueryExecution, GetQueryExecution, GetQueryResults on
 *    the workgroup resource, Service Authorization Reference, Amazon Athena);
 *  - Athena reads the Glue catalog and S3 with the caller's permissions: glue:GetDatabase,
 *    GetTable, GetPartitions on the catalog, the database and its tables (Athena User Guide,
 *    "Configure access to databases and tables in the AWS Glue Data Catalog"; partitions are
 *    reached through their table and its ancestors, "About access control for table partitions and
 *    versions in AWS Glue"). Athena engine version 3 is Trino, whose Glue metastore also reads
 *    partitions by value with GetPartition and BatchGetPartition (what the rehearsal's Trino calls,
 *    test/aws/athena-roles-on-trino.test.ts); both take the catalog, database and table (Service
 *    Authorization Reference, "Actions defined by AWS Glue"), and
 *    s3:GetBucketLocation on the bucket holding data and results, beside the lake's object reads and
 *    writes (Athena User Guide, "Control access to Amazon S3 from Athena").
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
 * A history read through Athena (core/regression/judge.ts, history-levels.ts), beyond the lake
 * queries: the CREATE OR REPLACE VIEW the lake reader runs first (core/backends/aws/athena-lake.ts
 * ensureViews): glue:CreateTable and UpdateTable ("For any non-delete Athena action on a resource,
 * you must include access to the parent of that resource", Athena User Guide, "Configure access to
 * databases and tables in the AWS Glue Data Catalog").
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
 * The ComputeVerdicts Task's alerts (core/backends/aws/verdict-alerts.ts):
 *  - cloudwatch:PutMetricData, which has no resource-level permission: limited by the
 *    cloudwatch:namespace condition key to the verdicts' namespace (Service Authorization Reference,
 *    Amazon CloudWatch);
 *  - events:PutEvents on the default event bus (resource type event-bus), sns:Publish on the topic.
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
 * FinishRun's compaction of a run to Parquet (core/backends/aws/athena-compaction.ts), beyond the
 * Athena and lake access granted above:
 *  - the partition of a compacted run registered by ALTER TABLE ADD PARTITION, which Athena performs
 *    with the caller's Glue permissions: glue:CreatePartition (Athena User Guide, "ALTER TABLE ADD
 *    PARTITION") and glue:BatchCreatePartition (AWS re:Post Knowledge Center, "Athena fails to add
 *    partitions ... glue:BatchCreatePartition"), glue:GetPartition for the IF NOT EXISTS check;
 *  - s3:DeleteObject, which DeleteObjects needs for each key (Service Authorization Reference,
 *    Amazon S3), only under tables/ (the run's JSON Lines once its Parquet partition is registered)
 *    and compacted/ (what a failed UNLOAD left); UNLOAD writes its files with the caller's
 *    s3:PutObject, granted on the lake above.
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
