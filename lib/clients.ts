/**
 * Clients: one launch template per CPU architecture, the instance profile and the deployed runner.
 * The backend launches clients into the subnet of their target's AZ.
 */
import { ArnFormat, Stack, Validations, type CfnElement } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { CLIENT_READY_PREFIX } from '../core/backends/aws/runner-command';
import { clientUserDataCommands } from './client-user-data';
import type { ClientArchitecture, ClientsConfig } from './config';
import { EXPIRES_AT_TAG, RDS_NAME_PREFIX, RUNNER_PREFIX, SSM_OUTPUT_PREFIX } from './handler-environment';
import { LAKE_PREFIXES } from './results-lake';

/**
 * Public SSM parameters of the latest Debian 12 AMI per architecture, resolved at every launch.
 * So a client always gets the current point release's image.
 * Debian's image tool writes each AMI id under its release name and number.
 * See src/debian_cloud_images/cli/put_ssm.py in debian-cloud-images.
 * No stored Debian or AWS page confirms the /aws/service/debian prefix.
 * AWS's list in "Discovering public parameters in Parameter Store" is partial, but public projects use this path.
 * Check it before a first deploy in a region.
 * `aws ssm get-parameter --name /aws/service/debian/release/bookworm/latest/amd64`
 */
export const DEBIAN_AMI_PARAMETERS: Readonly<Record<ClientArchitecture, string>> = {
  x86_64: '/aws/service/debian/release/bookworm/latest/amd64',
  arm64: '/aws/service/debian/release/bookworm/latest/arm64',
};

/**
 * The root device the launch templates size.
 * Debian registers every AMI with its root volume at /dev/xvda. See debian-cloud-images, cli/upload_ec2.py.
 * So the mapping resizes the root volume instead of adding a second one.
 */
export const DEBIAN_ROOT_DEVICE = '/dev/xvda';

export interface ClientsProps {
  readonly config: ClientsConfig;
  readonly namePrefix: string;
  readonly bucket: s3.IBucket;
  readonly securityGroup: ec2.ISecurityGroup;
}

export class Clients extends Construct {
  readonly role: iam.Role;
  readonly instanceProfile: iam.InstanceProfile;
  readonly launchTemplates: Readonly<Partial<Record<ClientArchitecture, ec2.LaunchTemplate>>>;

  constructor(scope: Construct, id: string, props: ClientsProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const { bucket, config } = props;

    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('ec2.amazonaws.com'),
      description:
        'aurora-bench sysbench clients: SSM managed instance, lake runner/scripts/prepare results read, raw ' +
        'and SSM output write',
      managedPolicies: [iam.ManagedPolicy.fromAwsManagedPolicyName('AmazonSSMManagedInstanceCore')],
    });
    Validations.of(this.role).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/AmazonSSMManagedInstanceCore]',
      reason:
        'The AWS-maintained SSM core policy is what Run Command needs on the instance and follows SSM agent ' +
        'changes; it grants no data access.',
    });

    // Read the runner the backend copies before each job, and the run's custom Lua scripts.
    this.role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'ReadRunnerAndScripts',
        actions: ['s3:GetObject'],
        resources: [bucket.arnForObjects(`${RUNNER_PREFIX}*`), bucket.arnForObjects(`${LAKE_PREFIXES.scripts}*`)],
      }),
    );
    this.role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'ListRunnerAndScripts',
        actions: ['s3:ListBucket'],
        resources: [bucket.bucketArn],
        conditions: { StringLike: { 's3:prefix': [`${RUNNER_PREFIX}*`, `${LAKE_PREFIXES.scripts}*`] } },
      }),
    );
    // Read another client's prepare result.json, only that file.
    // aws s3 cp asks HeadObject first, which needs s3:GetObject.
    // Without s3:ListBucket a missing result.json answers 403, not 404. The runner takes both as "not yet".
    // See Amazon S3 API Reference, HeadObject, "Permissions".
    this.role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'ReadAwaitedPrepareResults',
        actions: ['s3:GetObject'],
        resources: [bucket.arnForObjects(`${LAKE_PREFIXES.raw}*/prepare/*/result.json`)],
      }),
    );
    // Write runner output under raw/ and Run Command's own output under ssm-output/.
    this.role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'WriteRunnerOutput',
        actions: ['s3:PutObject'],
        resources: [bucket.arnForObjects(`${LAKE_PREFIXES.raw}*`), bucket.arnForObjects(`${SSM_OUTPUT_PREFIX}*`)],
      }),
    );
    // The SSM agent reads the bucket's encryption configuration before it uploads.
    // See Systems Manager User Guide, "Create an IAM instance profile for Systems Manager".
    // SSE-S3 needs no KMS permission.
    this.role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'ReadLakeEncryptionForCommandOutput',
        actions: ['s3:GetEncryptionConfiguration'],
        resources: [bucket.bucketArn],
      }),
    );
    // Write the ready marker client/client-ready.sh uploads. checkClientsReady reads it.
    this.role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'WriteReadyMarker',
        actions: ['s3:PutObject'],
        resources: [bucket.arnForObjects(`${CLIENT_READY_PREFIX}*`)],
      }),
    );
    // RDS manages the clusters' master password in Secrets Manager and tags it with the cluster's ARN.
    // So the read is limited to `ab-*` clusters.
    this.role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'ReadBenchmarkClusterSecret',
        actions: ['secretsmanager:GetSecretValue', 'secretsmanager:DescribeSecret'],
        resources: [
          stack.formatArn({
            service: 'secretsmanager',
            resource: 'secret',
            resourceName: 'rds!cluster-*',
            arnFormat: ArnFormat.COLON_RESOURCE_NAME,
          }),
        ],
        conditions: {
          StringLike: {
            'secretsmanager:ResourceTag/aws:rds:primaryDBClusterArn': stack.formatArn({
              service: 'rds',
              resource: 'cluster',
              resourceName: `${RDS_NAME_PREFIX}*`,
              arnFormat: ArnFormat.COLON_RESOURCE_NAME,
            }),
          },
        },
      }),
    );
    Validations.of(this.role).acknowledge(
      {
        id: `AwsSolutions-IAM5[Resource::<${this.logicalIdOfBucket(bucket)}.Arn>/${RUNNER_PREFIX}*]`,
        reason: 'The runner files are many objects under one prefix; read-only.',
      },
      {
        id: `AwsSolutions-IAM5[Resource::<${this.logicalIdOfBucket(bucket)}.Arn>/${LAKE_PREFIXES.scripts}*]`,
        reason:
          'Custom Lua scripts of any run (scripts/<runId>/...): a client serves one run but the role is shared ' +
          'by all runs; read-only.',
      },
      {
        id: `AwsSolutions-IAM5[Resource::<${this.logicalIdOfBucket(bucket)}.Arn>/${LAKE_PREFIXES.raw}*]`,
        reason:
          'Runner output keys are raw/dt=<date>/<runId>/... and are only known per run; the role is shared by ' +
          'every run, so writes are limited to the raw/ area (expires by lifecycle), never tables/.',
      },
      {
        id:
          `AwsSolutions-IAM5[Resource::<${this.logicalIdOfBucket(bucket)}.Arn>/` +
          `${LAKE_PREFIXES.raw}*/prepare/*/result.json]`,
        reason:
          "A step's prepare result (raw/dt=<date>/<runId>/<cellId>/<stepId>/prepare/<clientId>/result.json), " +
          'known only per run and step; read-only, the result files of prepares only.',
      },
      {
        id: `AwsSolutions-IAM5[Resource::<${this.logicalIdOfBucket(bucket)}.Arn>/${CLIENT_READY_PREFIX}*]`,
        reason:
          'Each client writes clients/<its instance id>/ready.json; instance ids are not known in advance. The ' +
          'marker only tells the workflow that sysbench works on that client.',
      },
      {
        id: `AwsSolutions-IAM5[Resource::<${this.logicalIdOfBucket(bucket)}.Arn>/${SSM_OUTPUT_PREFIX}*]`,
        reason:
          "SSM Run Command uploads each command's stdout/stderr under ssm-output/<command id>/...; ids are not " +
          'known in advance.',
      },
      {
        id:
          'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:' +
          'secret:rds!cluster-*]',
        reason:
          'RDS names managed master secrets rds!cluster-<uuid>; the statement is further limited by the ' +
          "aws:rds:primaryDBClusterArn tag to the tool's ab-* clusters.",
      },
    );

    this.instanceProfile = new iam.InstanceProfile(this, 'InstanceProfile', { role: this.role });

    const launchTemplates: Partial<Record<ClientArchitecture, ec2.LaunchTemplate>> = {};
    for (const arch of config.architectures) {
      const userData = ec2.UserData.forLinux();
      userData.addCommands(
        ...clientUserDataCommands({
          runnerS3Uri: `s3://${bucket.bucketName}/${RUNNER_PREFIX}`,
          bucketS3Uri: `s3://${bucket.bucketName}/`,
          region: stack.region,
          expiresAtTag: EXPIRES_AT_TAG,
        }),
      );
      const launchTemplate = new ec2.LaunchTemplate(this, `LaunchTemplate-${arch}`, {
        launchTemplateName: `${props.namePrefix}-client-${arch}`,
        machineImage: ec2.MachineImage.resolveSsmParameterAtLaunch(DEBIAN_AMI_PARAMETERS[arch], {
          os: ec2.OperatingSystemType.LINUX,
        }),
        instanceProfile: this.instanceProfile,
        securityGroup: props.securityGroup,
        userData,
        requireImdsv2: true,
        // The dead-man's switch reads the run's expiry tag from the instance metadata.
        instanceMetadataTags: true,
        httpPutResponseHopLimit: 2,
        blockDevices: [
          {
            deviceName: DEBIAN_ROOT_DEVICE,
            volume: ec2.BlockDeviceVolume.ebs(config.rootVolumeGiB, {
              volumeType: ec2.EbsDeviceVolumeType.GP3,
              encrypted: true,
              deleteOnTermination: true,
            }),
          },
        ],
        // The dead-man's switch shuts the client down, so it terminates instead of idling as stopped.
        instanceInitiatedShutdownBehavior: ec2.InstanceInitiatedShutdownBehavior.TERMINATE,
      });
      launchTemplates[arch] = launchTemplate;
    }
    this.launchTemplates = launchTemplates;
  }

  private logicalIdOfBucket(bucket: s3.IBucket): string {
    return Stack.of(this).getLogicalId(bucket.node.defaultChild as CfnElement);
  }
}
