/**
 * Self-managed servers: one launch template per client architecture, and the instance profile.
 * The user data runs client/server-install.sh after fetching the bundle as clients do.
 * The template's volume size is only a default. The backend sizes each server's volume for its data at launch.
 */
import { ArnFormat, Stack, Validations, type CfnElement } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { DEBIAN_AMI_PARAMETERS, DEBIAN_ROOT_DEVICE } from './clients';
import { serverUserDataCommands } from './client-user-data';
import type { ClientArchitecture } from './config';
import { EXPIRES_AT_TAG, RDS_NAME_PREFIX, RUN_ID_TAG, RUNNER_PREFIX, SSM_OUTPUT_PREFIX } from './handler-environment';

/** The namespace client/cloudwatch-agent.json publishes in. A test checks they agree. */
const CLOUDWATCH_AGENT_NAMESPACE = 'CWAgent';

/** The launch templates' root volume, the least the backend launches with. */
const SERVER_DEFAULT_VOLUME_GIB = 20;

export interface ServersProps {
  readonly architectures: readonly ClientArchitecture[];
  readonly namePrefix: string;
  readonly bucket: s3.IBucket;
  readonly securityGroup: ec2.ISecurityGroup;
}

export class Servers extends Construct {
  readonly role: iam.Role;
  readonly instanceProfile: iam.InstanceProfile;
  readonly launchTemplates: Readonly<Partial<Record<ClientArchitecture, ec2.LaunchTemplate>>>;

  constructor(scope: Construct, id: string, props: ServersProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const { bucket } = props;

    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('ec2.amazonaws.com'),
      description:
        'aurora-bench self-managed servers: SSM managed instance, bundle read, setup output write, ' +
        'the cell secret read',
      managedPolicies: [iam.ManagedPolicy.fromAwsManagedPolicyName('AmazonSSMManagedInstanceCore')],
    });
    Validations.of(this.role).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/AmazonSSMManagedInstanceCore]',
      reason:
        'The AWS-maintained SSM core policy is what Run Command needs on the instance and follows SSM agent ' +
        'changes; it grants no data access.',
    });
    // The bundle is copied recursively, so list the prefix and read its objects.
    this.role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'ReadBundle',
        actions: ['s3:GetObject'],
        resources: [bucket.arnForObjects(`${RUNNER_PREFIX}*`)],
      }),
    );
    this.role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'ListBundle',
        actions: ['s3:ListBucket'],
        resources: [bucket.bucketArn],
        conditions: { StringLike: { 's3:prefix': [`${RUNNER_PREFIX}*`] } },
      }),
    );
    // The setup command's output. The SSM agent reads the bucket's encryption configuration first.
    this.role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'WriteSetupOutput',
        actions: ['s3:PutObject'],
        resources: [bucket.arnForObjects(`${SSM_OUTPUT_PREFIX}*`)],
      }),
    );
    this.role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'ReadLakeEncryptionForCommandOutput',
        actions: ['s3:GetEncryptionConfiguration'],
        resources: [bucket.bucketArn],
      }),
    );
    // The cell's credentials, named ab-... and tagged with the run.
    // GetSecretValue and DescribeSecret take the tag condition. See Service Authorization Reference, AWS Secrets
    // Manager.
    this.role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'ReadCellSecret',
        actions: ['secretsmanager:GetSecretValue', 'secretsmanager:DescribeSecret'],
        resources: [
          stack.formatArn({
            service: 'secretsmanager',
            resource: 'secret',
            resourceName: `${RDS_NAME_PREFIX}*`,
            arnFormat: ArnFormat.COLON_RESOURCE_NAME,
          }),
        ],
        conditions: { Null: { [`aws:ResourceTag/${RUN_ID_TAG}`]: 'false' } },
      }),
    );
    // The CloudWatch agent publishes mem_available in the CWAgent namespace.
    // CloudWatchAgentServerPolicy is broader than a metrics-only agent needs.
    // PutMetricData has no resource ARN, so a namespace condition limits it.
    // See CloudWatch User Guide, "Allowing publishing in one namespace only".
    this.role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'PublishAgentMetrics',
        actions: ['cloudwatch:PutMetricData'],
        resources: ['*'],
        conditions: { StringEquals: { 'cloudwatch:namespace': CLOUDWATCH_AGENT_NAMESPACE } },
      }),
    );
    const bucketId = stack.getLogicalId(bucket.node.defaultChild as CfnElement);
    Validations.of(this.role).acknowledge(
      {
        id: `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/${RUNNER_PREFIX}*]`,
        reason: 'The bundle is many objects under one prefix; read-only.',
      },
      {
        id: `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/${SSM_OUTPUT_PREFIX}*]`,
        reason:
          "SSM Run Command uploads the setup command's stdout/stderr under ssm-output/<run>/<cell>/...; the " +
          'keys are known per run only.',
      },
      {
        id:
          'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:' +
          'secret:ab-*]',
        reason:
          "Each cell's credentials secret is named ab-<run>-<cell>-server-credentials " +
          '(core/backends/aws/names.ts); the read also requires the run tag on the secret.',
      },
      {
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason:
          'cloudwatch:PutMetricData has no resource type; the statement is limited to the CWAgent namespace by ' +
          'the cloudwatch:namespace condition.',
      },
    );

    this.instanceProfile = new iam.InstanceProfile(this, 'InstanceProfile', { role: this.role });

    const launchTemplates: Partial<Record<ClientArchitecture, ec2.LaunchTemplate>> = {};
    for (const arch of props.architectures) {
      const userData = ec2.UserData.forLinux();
      userData.addCommands(
        ...serverUserDataCommands({
          runnerS3Uri: `s3://${bucket.bucketName}/${RUNNER_PREFIX}`,
          region: stack.region,
          expiresAtTag: EXPIRES_AT_TAG,
        }),
      );
      launchTemplates[arch] = new ec2.LaunchTemplate(this, `LaunchTemplate-${arch}`, {
        launchTemplateName: `${props.namePrefix}-server-${arch}`,
        machineImage: ec2.MachineImage.resolveSsmParameterAtLaunch(DEBIAN_AMI_PARAMETERS[arch], {
          os: ec2.OperatingSystemType.LINUX,
        }),
        instanceProfile: this.instanceProfile,
        securityGroup: props.securityGroup,
        userData,
        requireImdsv2: true,
        // The dead-man's switch reads the run's expiry tag, and server-setup.sh the private IPv4.
        instanceMetadataTags: true,
        httpPutResponseHopLimit: 2,
        blockDevices: [
          {
            deviceName: DEBIAN_ROOT_DEVICE,
            volume: ec2.BlockDeviceVolume.ebs(SERVER_DEFAULT_VOLUME_GIB, {
              volumeType: ec2.EbsDeviceVolumeType.GP3,
              encrypted: true,
              deleteOnTermination: true,
            }),
          },
        ],
        instanceInitiatedShutdownBehavior: ec2.InstanceInitiatedShutdownBehavior.TERMINATE,
      });
    }
    this.launchTemplates = launchTemplates;
  }
}
