/**
 * The one place the stack tells the Lambda handlers where things are.
 * The AWS backend owns the shape, and this module fills every field from the stack's resources.
 * Values may be CloudFormation tokens, which CDK resolves inside the strings into Fn::Join.
 */
import { Stack } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import {
  AWS_CONFIG_DEFAULTS,
  awsConfigToEnv,
  GIT_SHA_ENV,
  TOOL_VERSION_ENV,
  type AwsBackendConfig,
  type ClientArchitecture,
} from '../core/backends/aws/config';
import { tagKeys } from '../core/backends/aws/names';

/** Prefix of every RDS identifier the backend creates. */
export const RDS_NAME_PREFIX = 'ab-';
/** Tag key prefix the backend writes. IAM conditions use the run-id key. */
const TAG_KEY_PREFIX = AWS_CONFIG_DEFAULTS.tagKeyPrefix;
export const RUN_ID_TAG = tagKeys(TAG_KEY_PREFIX).runId;
/** The tag the sweeper sets again on what an aborted run left pending. */
export const EXPIRES_AT_TAG = tagKeys(TAG_KEY_PREFIX).expiresAt;
/** Key prefixes the stack owns in the lake bucket, outside the lake's table layout. */
export const RUNNER_PREFIX = 'runner/';
export const SSM_OUTPUT_PREFIX = AWS_CONFIG_DEFAULTS.ssmOutputPrefix;
/** Regression events go to the account's default event bus, which every account and Region has. */
export const DEFAULT_EVENT_BUS = 'default';

export interface HandlerEnvironmentProps {
  readonly bucketName: string;
  readonly subnetIdsByAz: readonly { readonly az: string; readonly subnetId: string }[];
  readonly clientSecurityGroupId: string;
  readonly dbSecurityGroupId: string;
  readonly dbSubnetGroupName: string;
  readonly clientInstanceProfileArn: string;
  readonly launchTemplateIds: Readonly<Partial<Record<ClientArchitecture, string>>>;
  /** Self-managed servers' launch templates, security group and instance profile. */
  readonly serverLaunchTemplateIds: Readonly<Partial<Record<ClientArchitecture, string>>>;
  readonly serverSecurityGroupId: string;
  readonly serverInstanceProfileArn: string;
  /** runnerBundleDigest of the runner deployed under runner/. */
  readonly runnerDigest: string;
  /** What the clients' user data downloads. The preflight checks that they can. */
  readonly clientSourceUrls?: Readonly<Record<string, string>>;
  /** The lake through Athena. A run's verdicts read the experiment's history there. */
  readonly athenaWorkGroup: string;
  readonly glueDatabase: string;
  /** The SNS topic regressions are notified to. */
  readonly alertTopicArn: string;
  /** package.json version and the commit the stack was synthesized from, for the run manifest. */
  readonly toolVersion: string;
  readonly gitSha?: string;
}

/** The backend config of this stack, tokens included. */
export function handlerBackendConfig(scope: IConstruct, props: HandlerEnvironmentProps): AwsBackendConfig {
  return {
    region: Stack.of(scope).region,
    bucket: props.bucketName,
    lakePrefix: AWS_CONFIG_DEFAULTS.lakePrefix,
    ssmOutputPrefix: SSM_OUTPUT_PREFIX,
    subnetIdsByAz: Object.fromEntries(props.subnetIdsByAz.map((s) => [s.az, s.subnetId])),
    dbSecurityGroupId: props.dbSecurityGroupId,
    dbSubnetGroupName: props.dbSubnetGroupName,
    clientSecurityGroupId: props.clientSecurityGroupId,
    clientInstanceProfileArn: props.clientInstanceProfileArn,
    launchTemplateIds: props.launchTemplateIds,
    launchTemplateVersion: AWS_CONFIG_DEFAULTS.launchTemplateVersion,
    serverLaunchTemplateIds: props.serverLaunchTemplateIds,
    serverSecurityGroupId: props.serverSecurityGroupId,
    serverInstanceProfileArn: props.serverInstanceProfileArn,
    runnerS3Uri: `s3://${props.bucketName}/${RUNNER_PREFIX}`,
    runnerDigest: props.runnerDigest,
    tagKeyPrefix: TAG_KEY_PREFIX,
    ssmDocumentName: AWS_CONFIG_DEFAULTS.ssmDocumentName,
    masterUsername: AWS_CONFIG_DEFAULTS.masterUsername,
    performanceInsightsRetentionDays: AWS_CONFIG_DEFAULTS.performanceInsightsRetentionDays,
    piPeriodS: AWS_CONFIG_DEFAULTS.piPeriodS,
    ...(props.clientSourceUrls !== undefined ? { clientSourceUrls: props.clientSourceUrls } : {}),
    metricsPublishDelayS: AWS_CONFIG_DEFAULTS.metricsPublishDelayS,
    athenaWorkGroup: props.athenaWorkGroup,
    glueDatabase: props.glueDatabase,
    alertTopicArn: props.alertTopicArn,
    eventBusName: DEFAULT_EVENT_BUS,
  };
}

/** The environment of every handler, the stack's backend config plus the tool version. */
export function buildHandlerEnvironment(scope: IConstruct, props: HandlerEnvironmentProps): Record<string, string> {
  return {
    ...awsConfigToEnv(handlerBackendConfig(scope, props)),
    [TOOL_VERSION_ENV]: props.toolVersion,
    ...(props.gitSha ? { [GIT_SHA_ENV]: props.gitSha } : {}),
  };
}
