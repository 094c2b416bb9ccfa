/**
 * The AWS backend's configuration: the account's standing infrastructure, which the CDK stack creates.
 * The stack passes it to the Lambdas as environment variables.
 * core/ never reads process.env. The Lambda handler calls `awsConfigFromEnv(process.env)`.
 */

import { AuroraBenchError } from '../../errors';

/** CPU architectures EC2 reports. See botocore ec2, ArchitectureType. */
export type ClientArchitecture = 'x86_64' | 'arm64';

export interface AwsBackendConfig {
  readonly region: string;
  /** The results lake bucket. SSM Run Command also writes its own stdout and stderr there. */
  readonly bucket: string;
  /** Key prefix of the lake inside the bucket: '' or ending in '/', as "lake/". */
  readonly lakePrefix: string;
  /** Where SSM writes command output, ending in '/'. */
  readonly ssmOutputPrefix: string;
  /**
   * Private subnets by AZ name. Clients launch in the writer's AZ, so a variant's AZ must be one of these.
   * The DB subnet group covers the same subnets.
   */
  readonly subnetIdsByAz: Readonly<Record<string, string>>;
  /** Security group on the DB instances. It allows 3306 from the client security group. */
  readonly dbSecurityGroupId: string;
  /** The CDK-created DB subnet group spanning the subnets above. */
  readonly dbSubnetGroupName: string;
  /** Security group on the EC2 clients. */
  readonly clientSecurityGroupId: string;
  /** Instance profile the clients run with. */
  readonly clientInstanceProfileArn: string;
  /**
   * Launch templates per CPU architecture. They carry the client AMI, the instance profile and the security group.
   * So startClients only sets instance type, subnet, tags and the client token.
   */
  readonly launchTemplateIds: Readonly<Partial<Record<ClientArchitecture, string>>>;
  /**
   * Self-managed servers' launch templates per CPU architecture, security group and instance profile.
   * A stack may lack them. Such a cell is then refused when it is provisioned, naming what is missing.
   */
  readonly serverLaunchTemplateIds?: Readonly<Partial<Record<ClientArchitecture, string>>>;
  readonly serverSecurityGroupId?: string;
  readonly serverInstanceProfileArn?: string;
  /** Launch template version to use: "$Default" as the stack publishes it, "$Latest", or a number. */
  readonly launchTemplateVersion: string;
  /** s3://bucket/prefix/ holding client/, copied to each client before a job. */
  readonly runnerS3Uri: string;
  /**
   * The runnerBundleDigest of the client/ deployed under runnerS3Uri.
   * A job copies the bundle again only when the client's differs. Without it, every job copies it.
   */
  readonly runnerDigest?: string;
  /** Prefix of every tag key the tool sets, as in "<prefix>run-id". */
  readonly tagKeyPrefix: string;
  /** SSM document the runner is started with. */
  readonly ssmDocumentName: string;
  /** Aurora master user name. RDS manages the password in Secrets Manager, so it is never seen here. */
  readonly masterUsername: string;
  /** Performance Insights retention in days. 7 is the free tier. */
  readonly performanceInsightsRetentionDays: number;
  /** PI GetResourceMetrics period. See botocore pi, GetResourceMetricsRequest. */
  readonly piPeriodS: 1 | 60 | 300 | 3600 | 86400;
  /**
   * What the clients' user data downloads at boot, by name. The preflight checks the client subnets reach each one.
   * Absent when the stack does not say, and then that check only warns.
   */
  readonly clientSourceUrls?: Readonly<Record<string, string>>;
  /**
   * Seconds after a step's window ends before its CloudWatch and PI datapoints are taken as all published.
   * Aurora sends metric data in 1-minute periods, and AWS documents no publishing latency.
   * See AWS, Aurora User Guide, "Overview of Amazon Aurora and Amazon CloudWatch".
   * A minute's datapoint commonly appears one to three minutes after it ends.
   * Completeness is counted, not assumed. A window still short after this is marked incomplete.
   */
  readonly metricsPublishDelayS: number;
  /**
   * Seconds a cell's cluster waits after its parameter groups were created or modified.
   * Without it, RDS's "at least 5 minutes" holds. The rehearsal shortens it, and 0 creates the cluster at once.
   */
  readonly parameterGroupSettleS?: number;
  /**
   * The interval of an Aurora cluster volume's I/O datapoints. Without it, Aurora's 5 minutes hold.
   * The rehearsal's CloudWatch publishes them faster, so its steps of seconds need no 5-minute wait.
   */
  readonly volumeMetricsPeriodS?: number;
  /**
   * The period of the minute series. Without it, metrics.ts asks for 60 s, their resolution.
   * The rehearsal's CloudWatch has per-second samples, so a step of seconds waits seconds for its last period.
   */
  readonly metricsPeriodS?: number;
  /**
   * The stack's Athena work group and Glue database. The ComputeVerdicts Task reads the experiment's history there.
   * Without them, the Task says what is missing.
   */
  readonly athenaWorkGroup?: string;
  readonly glueDatabase?: string;
  /**
   * The stack's SNS topic for regressions. Without it, no notification goes out.
   */
  readonly alertTopicArn?: string;
  /** The EventBridge bus regression events are put on. Without it, the account's default bus. */
  readonly eventBusName?: string;
}

/**
 * What the stack records about itself in every Task Lambda's environment, written into each run's manifest.
 * It is not part of AwsBackendConfig, since the backend does not use it.
 */
export const TOOL_VERSION_ENV = 'AURORA_BENCH_TOOL_VERSION';
export const GIT_SHA_ENV = 'AURORA_BENCH_GIT_SHA';

/**
 * The environment variable names the CDK stack sets on every Task Lambda.
 * @internal exported for its tests
 */
export const AWS_CONFIG_ENV = {
  region: 'AURORA_BENCH_REGION',
  bucket: 'AURORA_BENCH_BUCKET',
  lakePrefix: 'AURORA_BENCH_LAKE_PREFIX',
  ssmOutputPrefix: 'AURORA_BENCH_SSM_OUTPUT_PREFIX',
  /** JSON object {"us-east-1a":"subnet-...", ...} */
  subnetIdsByAz: 'AURORA_BENCH_SUBNET_IDS_BY_AZ',
  dbSecurityGroupId: 'AURORA_BENCH_DB_SECURITY_GROUP_ID',
  dbSubnetGroupName: 'AURORA_BENCH_DB_SUBNET_GROUP_NAME',
  clientSecurityGroupId: 'AURORA_BENCH_CLIENT_SECURITY_GROUP_ID',
  clientInstanceProfileArn: 'AURORA_BENCH_CLIENT_INSTANCE_PROFILE_ARN',
  launchTemplateIdX86: 'AURORA_BENCH_LAUNCH_TEMPLATE_ID_X86_64',
  launchTemplateIdArm: 'AURORA_BENCH_LAUNCH_TEMPLATE_ID_ARM64',
  launchTemplateVersion: 'AURORA_BENCH_LAUNCH_TEMPLATE_VERSION',
  serverLaunchTemplateIdX86: 'AURORA_BENCH_SERVER_LAUNCH_TEMPLATE_ID_X86_64',
  serverLaunchTemplateIdArm: 'AURORA_BENCH_SERVER_LAUNCH_TEMPLATE_ID_ARM64',
  serverSecurityGroupId: 'AURORA_BENCH_SERVER_SECURITY_GROUP_ID',
  serverInstanceProfileArn: 'AURORA_BENCH_SERVER_INSTANCE_PROFILE_ARN',
  runnerS3Uri: 'AURORA_BENCH_RUNNER_S3_URI',
  runnerDigest: 'AURORA_BENCH_RUNNER_DIGEST',
  tagKeyPrefix: 'AURORA_BENCH_TAG_KEY_PREFIX',
  ssmDocumentName: 'AURORA_BENCH_SSM_DOCUMENT',
  masterUsername: 'AURORA_BENCH_MASTER_USERNAME',
  performanceInsightsRetentionDays: 'AURORA_BENCH_PI_RETENTION_DAYS',
  piPeriodS: 'AURORA_BENCH_PI_PERIOD_S',
  /** JSON object {"sysbench":"https://..."} */
  clientSourceUrls: 'AURORA_BENCH_CLIENT_SOURCE_URLS',
  metricsPublishDelayS: 'AURORA_BENCH_METRICS_PUBLISH_DELAY_S',
  parameterGroupSettleS: 'AURORA_BENCH_PARAMETER_GROUP_SETTLE_S',
  volumeMetricsPeriodS: 'AURORA_BENCH_VOLUME_METRICS_PERIOD_S',
  metricsPeriodS: 'AURORA_BENCH_METRICS_PERIOD_S',
  athenaWorkGroup: 'AURORA_BENCH_ATHENA_WORK_GROUP',
  glueDatabase: 'AURORA_BENCH_GLUE_DATABASE',
  alertTopicArn: 'AURORA_BENCH_ALERT_TOPIC_ARN',
  eventBusName: 'AURORA_BENCH_EVENT_BUS_NAME',
} as const;

export const AWS_CONFIG_DEFAULTS = {
  lakePrefix: '',
  ssmOutputPrefix: 'ssm-output/',
  launchTemplateVersion: '$Default',
  tagKeyPrefix: 'aurora-bench:',
  ssmDocumentName: 'AWS-RunShellScript',
  masterUsername: 'benchadmin',
  performanceInsightsRetentionDays: 7,
  piPeriodS: 60,
  metricsPublishDelayS: 180,
} as const;

/** @internal exported for its tests */
export class AwsConfigError extends AuroraBenchError {
  override readonly name = 'AwsConfigError';
}

function withSlash(prefix: string): string {
  return prefix === '' || prefix.endsWith('/') ? prefix : prefix + '/';
}

/**
 * Build the config from an environment map. Every missing or malformed variable is reported at once, by name.
 */
export function awsConfigFromEnv(env: Readonly<Record<string, string | undefined>>): AwsBackendConfig {
  const problems: string[] = [];
  const E = AWS_CONFIG_ENV;
  const req = (name: string): string => {
    const v = env[name];
    if (v === undefined || v.trim() === '') {
      problems.push(`${name} is not set`);
      return '';
    }
    return v.trim();
  };
  const opt = (name: string): string | undefined => {
    const v = env[name];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  };

  let subnetIdsByAz: Record<string, string> = {};
  const subnetsRaw = req(E.subnetIdsByAz);
  if (subnetsRaw !== '') {
    try {
      const parsed = JSON.parse(subnetsRaw) as unknown;
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
      for (const [az, id] of Object.entries(parsed as Record<string, unknown>)) {
        if (typeof id !== 'string' || !id.startsWith('subnet-')) throw new Error(`value for ${az} is not a subnet id`);
      }
      subnetIdsByAz = parsed as Record<string, string>;
      if (Object.keys(subnetIdsByAz).length === 0) problems.push(`${E.subnetIdsByAz} lists no subnet`);
    } catch (e) {
      problems.push(`${E.subnetIdsByAz} must be a JSON object {"<az>":"subnet-..."}: ${(e as Error).message}`);
    }
  }

  const launchTemplateIds: Partial<Record<ClientArchitecture, string>> = {};
  const x86 = opt(E.launchTemplateIdX86);
  const arm = opt(E.launchTemplateIdArm);
  if (x86) launchTemplateIds.x86_64 = x86;
  if (arm) launchTemplateIds.arm64 = arm;
  if (!x86 && !arm) problems.push(`${E.launchTemplateIdX86} or ${E.launchTemplateIdArm} must be set`);

  const serverLaunchTemplateIds: Partial<Record<ClientArchitecture, string>> = {};
  const serverX86 = opt(E.serverLaunchTemplateIdX86);
  const serverArm = opt(E.serverLaunchTemplateIdArm);
  if (serverX86) serverLaunchTemplateIds.x86_64 = serverX86;
  if (serverArm) serverLaunchTemplateIds.arm64 = serverArm;

  const num = (name: string, fallback: number): number => {
    const raw = opt(name);
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n <= 0) problems.push(`${name} must be a positive integer (got "${raw}")`);
    return n;
  };
  const piPeriodS = num(E.piPeriodS, AWS_CONFIG_DEFAULTS.piPeriodS);
  const delayRaw = opt(E.metricsPublishDelayS);
  const metricsPublishDelayS = delayRaw === undefined ? AWS_CONFIG_DEFAULTS.metricsPublishDelayS : Number(delayRaw);
  // At most an hour, since the cell's clusters keep running and costing while it waits.
  if (!Number.isInteger(metricsPublishDelayS) || metricsPublishDelayS < 0 || metricsPublishDelayS > 3600) {
    problems.push(`${E.metricsPublishDelayS} must be a whole number of seconds from 0 to 3600 (got "${delayRaw}")`);
  }
  const settleRaw = opt(E.parameterGroupSettleS);
  const parameterGroupSettleS = settleRaw === undefined ? undefined : Number(settleRaw);
  if (
    parameterGroupSettleS !== undefined &&
    (!Number.isInteger(parameterGroupSettleS) || parameterGroupSettleS < 0 || parameterGroupSettleS > 3600)
  ) {
    problems.push(`${E.parameterGroupSettleS} must be a whole number of seconds from 0 to 3600 (got "${settleRaw}")`);
  }
  const volumeRaw = opt(E.volumeMetricsPeriodS);
  const volumeMetricsPeriodS = volumeRaw === undefined ? undefined : Number(volumeRaw);
  if (
    volumeMetricsPeriodS !== undefined &&
    (!Number.isInteger(volumeMetricsPeriodS) || volumeMetricsPeriodS < 1 || volumeMetricsPeriodS > 300)
  ) {
    problems.push(`${E.volumeMetricsPeriodS} must be a whole number of seconds from 1 to 300 (got "${volumeRaw}")`);
  }
  const periodRaw = opt(E.metricsPeriodS);
  const metricsPeriodS = periodRaw === undefined ? undefined : Number(periodRaw);
  if (
    metricsPeriodS !== undefined &&
    (!Number.isInteger(metricsPeriodS) || metricsPeriodS < 1 || metricsPeriodS > 60)
  ) {
    problems.push(`${E.metricsPeriodS} must be a whole number of seconds from 1 to 60 (got "${periodRaw}")`);
  }
  if (![1, 60, 300, 3600, 86400].includes(piPeriodS))
    problems.push(`${E.piPeriodS} must be one of 1, 60, 300, 3600, 86400`);

  let clientSourceUrls: Record<string, string> | undefined;
  const sourcesRaw = opt(E.clientSourceUrls);
  if (sourcesRaw !== undefined) {
    clientSourceUrls = {};
    try {
      const parsed = JSON.parse(sourcesRaw) as unknown;
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
      for (const [name, url] of Object.entries(parsed as Record<string, unknown>)) {
        if (typeof url !== 'string' || !/^(https|s3):\/\/./.test(url))
          throw new Error(`value for ${name} is not an https:// or s3:// URL`);
        clientSourceUrls[name] = url;
      }
    } catch (e) {
      problems.push(
        `${E.clientSourceUrls} must be a JSON object {"<name>":"https://... or s3://..."}: ${(e as Error).message}`,
      );
    }
  }

  const runnerS3Uri = req(E.runnerS3Uri);
  if (runnerS3Uri !== '' && !/^s3:\/\/[^/]+\/.*\/$/.test(runnerS3Uri))
    problems.push(`${E.runnerS3Uri} must look like s3://bucket/prefix/ (ending in /)`);
  const runnerDigest = opt(E.runnerDigest);
  if (runnerDigest !== undefined && !/^[0-9a-f]{64}$/.test(runnerDigest))
    problems.push(`${E.runnerDigest} must be a SHA-256 in lower-case hex (64 characters)`);

  const config: AwsBackendConfig = {
    region: req(E.region),
    bucket: req(E.bucket),
    lakePrefix: withSlash(opt(E.lakePrefix) ?? AWS_CONFIG_DEFAULTS.lakePrefix),
    ssmOutputPrefix: withSlash(opt(E.ssmOutputPrefix) ?? AWS_CONFIG_DEFAULTS.ssmOutputPrefix),
    subnetIdsByAz,
    dbSecurityGroupId: req(E.dbSecurityGroupId),
    dbSubnetGroupName: req(E.dbSubnetGroupName),
    clientSecurityGroupId: req(E.clientSecurityGroupId),
    clientInstanceProfileArn: req(E.clientInstanceProfileArn),
    launchTemplateIds,
    launchTemplateVersion: opt(E.launchTemplateVersion) ?? AWS_CONFIG_DEFAULTS.launchTemplateVersion,
    ...(serverX86 || serverArm ? { serverLaunchTemplateIds } : {}),
    ...optionalEntries({
      serverSecurityGroupId: opt(E.serverSecurityGroupId),
      serverInstanceProfileArn: opt(E.serverInstanceProfileArn),
    }),
    runnerS3Uri,
    ...optionalEntries({ runnerDigest }),
    tagKeyPrefix: opt(E.tagKeyPrefix) ?? AWS_CONFIG_DEFAULTS.tagKeyPrefix,
    ssmDocumentName: opt(E.ssmDocumentName) ?? AWS_CONFIG_DEFAULTS.ssmDocumentName,
    masterUsername: opt(E.masterUsername) ?? AWS_CONFIG_DEFAULTS.masterUsername,
    performanceInsightsRetentionDays: num(
      E.performanceInsightsRetentionDays,
      AWS_CONFIG_DEFAULTS.performanceInsightsRetentionDays,
    ),
    piPeriodS: piPeriodS as AwsBackendConfig['piPeriodS'],
    ...(clientSourceUrls !== undefined ? { clientSourceUrls } : {}),
    metricsPublishDelayS,
    ...(parameterGroupSettleS !== undefined ? { parameterGroupSettleS } : {}),
    ...(volumeMetricsPeriodS !== undefined ? { volumeMetricsPeriodS } : {}),
    ...(metricsPeriodS !== undefined ? { metricsPeriodS } : {}),
    ...optionalEntries({
      athenaWorkGroup: opt(E.athenaWorkGroup),
      glueDatabase: opt(E.glueDatabase),
      alertTopicArn: opt(E.alertTopicArn),
      eventBusName: opt(E.eventBusName),
    }),
  };
  const topic = config.alertTopicArn;
  if (topic !== undefined && !/^arn:aws[\w-]*:sns:[a-z0-9-]+:\d{12}:[\w-]+$/.test(topic))
    problems.push(`${E.alertTopicArn} must be an SNS topic ARN (got "${topic}")`);
  if (problems.length > 0)
    throw new AwsConfigError('AWS backend configuration is incomplete:\n  - ' + problems.join('\n  - '));
  return config;
}

/** The env map for a config, as the CDK stack sets it. It is kept next to the parser so both agree. */
export function awsConfigToEnv(config: AwsBackendConfig): Record<string, string> {
  const E = AWS_CONFIG_ENV;
  return {
    [E.region]: config.region,
    [E.bucket]: config.bucket,
    [E.lakePrefix]: config.lakePrefix,
    [E.ssmOutputPrefix]: config.ssmOutputPrefix,
    [E.subnetIdsByAz]: JSON.stringify(config.subnetIdsByAz),
    [E.dbSecurityGroupId]: config.dbSecurityGroupId,
    [E.dbSubnetGroupName]: config.dbSubnetGroupName,
    [E.clientSecurityGroupId]: config.clientSecurityGroupId,
    [E.clientInstanceProfileArn]: config.clientInstanceProfileArn,
    ...(config.launchTemplateIds.x86_64 ? { [E.launchTemplateIdX86]: config.launchTemplateIds.x86_64 } : {}),
    ...(config.launchTemplateIds.arm64 ? { [E.launchTemplateIdArm]: config.launchTemplateIds.arm64 } : {}),
    [E.launchTemplateVersion]: config.launchTemplateVersion,
    ...optionalEntries({
      [E.serverLaunchTemplateIdX86]: config.serverLaunchTemplateIds?.x86_64,
      [E.serverLaunchTemplateIdArm]: config.serverLaunchTemplateIds?.arm64,
      [E.serverSecurityGroupId]: config.serverSecurityGroupId,
      [E.serverInstanceProfileArn]: config.serverInstanceProfileArn,
    }),
    [E.runnerS3Uri]: config.runnerS3Uri,
    ...optionalEntries({ [E.runnerDigest]: config.runnerDigest }),
    [E.tagKeyPrefix]: config.tagKeyPrefix,
    [E.ssmDocumentName]: config.ssmDocumentName,
    [E.masterUsername]: config.masterUsername,
    [E.performanceInsightsRetentionDays]: String(config.performanceInsightsRetentionDays),
    [E.piPeriodS]: String(config.piPeriodS),
    ...(config.clientSourceUrls !== undefined ? { [E.clientSourceUrls]: JSON.stringify(config.clientSourceUrls) } : {}),
    [E.metricsPublishDelayS]: String(config.metricsPublishDelayS),
    ...(config.parameterGroupSettleS !== undefined
      ? { [E.parameterGroupSettleS]: String(config.parameterGroupSettleS) }
      : {}),
    ...(config.volumeMetricsPeriodS !== undefined
      ? { [E.volumeMetricsPeriodS]: String(config.volumeMetricsPeriodS) }
      : {}),
    ...(config.metricsPeriodS !== undefined ? { [E.metricsPeriodS]: String(config.metricsPeriodS) } : {}),
    ...optionalEntries({
      [E.athenaWorkGroup]: config.athenaWorkGroup,
      [E.glueDatabase]: config.glueDatabase,
      [E.alertTopicArn]: config.alertTopicArn,
      [E.eventBusName]: config.eventBusName,
    }),
  };
}

function optionalEntries<K extends string>(entries: Record<K, string | undefined>): Partial<Record<K, string>> {
  return Object.fromEntries(
    Object.entries(entries).filter((e): e is [string, string] => e[1] !== undefined),
  ) as Partial<Record<K, string>>;
}
