/**
 * The CDK app's typed configuration, the "aurora-bench" object of cdk.json context.
 * Constructs in lib/ only ever see the parsed, readonly AppConfig.
 */
import { readFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, resolve } from 'node:path';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { z } from 'zod';
import { AuroraBenchError } from '../core/errors';

/** cdk.json context key holding the whole configuration. */
export const CONFIG_CONTEXT_KEY = 'aurora-bench';

/**
 * RDS identifiers start with the prefix, so it must be a valid start of one.
 * IAM statements are scoped to `<prefix>-*`.
 */
const namePrefix = z
  .string()
  .regex(/^[a-z][a-z0-9]*(-[a-z0-9]+)*$/, 'lowercase letters, digits and single hyphens, starting with a letter')
  .max(20, 'at most 20 characters (RDS identifiers are limited to 63 and the backend appends run and cell ids)');

/**
 * A log group's retention. CloudWatch Logs accepts only fixed periods.
 * See CloudWatch Logs API reference, PutRetentionPolicy.
 * Any other number fails at deploy time, so it is refused here with its path.
 */
const LOG_RETENTIONS: ReadonlyMap<number, RetentionDays> = new Map(
  Object.values(RetentionDays)
    .filter((v): v is RetentionDays => typeof v === 'number')
    .map((r) => [r, r]),
);
const LOG_RETENTION_LIST = [...LOG_RETENTIONS.keys()].join(', ');
const logRetentionDays = z
  .number()
  .int()
  .refine((d) => LOG_RETENTIONS.has(d), `a CloudWatch Logs retention period in days: one of ${LOG_RETENTION_LIST}`);

const existingVpcSchema = z
  .object({
    vpcId: z.string().regex(/^vpc-[0-9a-f]+$/, 'a VPC id like vpc-0123abcd'),
    /** Private subnets, one per AZ, in the order of availabilityZones. */
    privateSubnetIds: z.array(z.string().regex(/^subnet-[0-9a-f]+$/, 'subnet ids like subnet-0123abcd')).min(2),
    availabilityZones: z.array(z.string().min(1)).min(2),
    /** Route tables of those subnets, for the S3 gateway endpoint. */
    privateRouteTableIds: z.array(z.string().regex(/^rtb-[0-9a-f]+$/, 'route table ids like rtb-0123abcd')).optional(),
    /** false when the VPC already has the needed endpoints or a NAT path. */
    createEndpoints: z.boolean().default(true),
  })
  .strict()
  .superRefine((v, ctx) => {
    if (v.privateSubnetIds.length !== v.availabilityZones.length) {
      ctx.addIssue({
        code: 'custom',
        message: 'needs one subnet per availability zone (same length and order)',
        path: ['privateSubnetIds'],
      });
    }
    if (v.createEndpoints && !v.privateRouteTableIds) {
      ctx.addIssue({
        code: 'custom',
        message: "the S3 gateway endpoint needs the subnets' route tables (or set createEndpoints: false)",
        path: ['privateRouteTableIds'],
      });
    }
    if (v.privateRouteTableIds && v.privateRouteTableIds.length !== v.privateSubnetIds.length) {
      ctx.addIssue({
        code: 'custom',
        message: 'needs one route table per subnet (same length and order)',
        path: ['privateRouteTableIds'],
      });
    }
  });

const networkSchema = z
  .object({
    /** Number of AZs of a new VPC. An environment-agnostic stack always gets 2. */
    maxAzs: z.number().int().min(2).max(6).default(2),
    /**
     * NAT gateways of a new VPC.
     * Instances install packages from Debian's archive at boot, so a new VPC needs one.
     * The account preflight checks an existing VPC's routes.
     */
    natGateways: z.number().int().min(0).max(6).default(1),
    cidr: z
      .string()
      .regex(/^\d+\.\d+\.\d+\.\d+\/\d+$/, 'an IPv4 CIDR like 10.42.0.0/16')
      .default('10.42.0.0/16'),
    existingVpc: existingVpcSchema.optional(),
    flowLogRetentionDays: logRetentionDays.default(30),
  })
  .strict();

const lakeSchema = z
  .object({
    /** Raw runner output expires after this many days. tables/ stays. */
    rawRetentionDays: z.number().int().min(1).default(90),
    athenaResultRetentionDays: z.number().int().min(1).default(30),
    /** Athena stops a workgroup query after scanning this much. */
    athenaBytesScannedCutoffMb: z
      .number()
      .int()
      .min(10)
      .default(10 * 1024),
    /** First date of the dt partition projection range. The range ends at NOW. */
    projectionStartDate: z
      .string()
      .regex(/^\d{4}-\d{2}-\d{2}$/, 'a date yyyy-MM-dd')
      .default('2024-01-01'),
    /** RETAIN keeps results when the stack is deleted. That is the default, since results outlive the tool. */
    removalPolicy: z.enum(['RETAIN', 'DESTROY']).default('RETAIN'),
  })
  .strict();

const clientsSchema = z
  .object({
    /** Launch templates to create. A variant's client instance type picks one by its architecture. */
    architectures: z
      .array(z.enum(['x86_64', 'arm64']))
      .min(1)
      .default(['x86_64', 'arm64']),
    /** Root volume of a client in GiB, gp3 and encrypted. */
    rootVolumeGiB: z.number().int().min(8).max(1024).default(20),
  })
  .strict();

const nightlySchema = z
  .object({
    enabled: z.boolean().default(false),
    /** EventBridge Scheduler expression, evaluated in timeZone. */
    cron: z
      .string()
      .regex(/^(cron|rate)\(.+\)$/, 'a Scheduler expression like cron(0 2 * * ? *)')
      .default('cron(0 2 * * ? *)'),
    /** IANA time zone of the cron expression. */
    timeZone: z.string().min(1).default('UTC'),
    /** The experiment file, relative to cdk.json's directory. The default is the nightly regression run. */
    experiment: z.string().min(1).default('experiments/nightly-regression.json'),
  })
  .strict();

const alertsSchema = z
  .object({
    /**
     * E-mail addresses subscribed to the regression topic.
     * SNS asks each to confirm first, and delivers nothing until it does.
     */
    emails: z.array(z.email('an e-mail address like team@example.com')).default([]),
  })
  .strict();

const safetyNetSchema = z
  .object({
    /** How often the sweeper deletes what a run left behind after its ttlHours. */
    sweepSchedule: z
      .string()
      .regex(/^(cron|rate)\(.+\)$/, 'a Scheduler expression like rate(1 hour)')
      .default('rate(1 hour)'),
  })
  .strict();

const appConfigSchema = z
  .object({
    stackName: z
      .string()
      .regex(/^[A-Za-z][A-Za-z0-9-]*$/, 'a CloudFormation stack name')
      .default('AuroraBench'),
    namePrefix: namePrefix.default('aurora-bench'),
    /** Optional fixed account and region. Without them the stack is environment-agnostic. */
    account: z
      .string()
      .regex(/^\d{12}$/, 'a 12-digit account id')
      .optional(),
    region: z
      .string()
      .regex(/^[a-z]{2}(-[a-z]+)+-\d$/, 'a region like us-east-1')
      .optional(),
    logRetentionDays: logRetentionDays.default(30),
    network: networkSchema.default(networkSchema.parse({})),
    lake: lakeSchema.default(lakeSchema.parse({})),
    clients: clientsSchema.default(clientsSchema.parse({})),
    nightly: nightlySchema.default(nightlySchema.parse({})),
    safetyNet: safetyNetSchema.default(safetyNetSchema.parse({})),
    alerts: alertsSchema.default(alertsSchema.parse({})),
  })
  .strict()
  .superRefine((c, ctx) => {
    // A new VPC without a NAT gateway has isolated subnets that cannot reach Debian's archive.
    // The user data would fail to install sysbench, long after the databases were paid for.
    // The account preflight checks an existing VPC's routes.
    if (c.network.existingVpc !== undefined || c.network.natGateways > 0) return;
    ctx.addIssue({
      code: 'custom',
      path: ['network', 'natGateways'],
      message:
        "0 leaves the clients' private subnets without internet access, but clients and self-managed servers " +
        'install sysbench, the AWS CLI and MariaDB ' +
        `from Debian's package archive at boot (lib/client-user-data.ts). ` +
        `Set ${CONFIG_CONTEXT_KEY}.network.natGateways to 1 or more, ` +
        `or use an existing VPC whose private subnets route to the internet ` +
        `(${CONFIG_CONTEXT_KEY}.network.existingVpc).`,
    });
  });

export type AppConfig = Readonly<z.infer<typeof appConfigSchema>>;
export type NetworkConfig = AppConfig['network'];
export type LakeConfig = AppConfig['lake'];
export type ClientsConfig = AppConfig['clients'];
export type NightlyConfig = AppConfig['nightly'];
export type AlertsConfig = AppConfig['alerts'];
export type ClientArchitecture = ClientsConfig['architectures'][number];

/** @internal Exported for its tests. */
export class ConfigError extends AuroraBenchError {
  override readonly name = 'ConfigError';
}

/** The RetentionDays member for a validated number of days. */
export function logRetention(days: number): RetentionDays {
  const match = LOG_RETENTIONS.get(days);
  if (match === undefined)
    throw new ConfigError(`${days} days is not a CloudWatch Logs retention period (one of ${LOG_RETENTION_LIST})`);
  return match;
}

/** Parse the context value. Every problem is reported with its path. */
export function parseAppConfig(raw: unknown): AppConfig {
  let value: unknown = raw ?? {};
  if (typeof value === 'string') {
    // `cdk synth -c aurora-bench='{...}'` passes a string.
    try {
      value = JSON.parse(value) as unknown;
    } catch (e) {
      throw new ConfigError(`context "${CONFIG_CONTEXT_KEY}" is not valid JSON`, { cause: e });
    }
  }
  const result = appConfigSchema.safeParse(value);
  if (!result.success) {
    const lines = result.error.issues.map(
      (i) => `  ${[CONFIG_CONTEXT_KEY, ...i.path.map(String)].join('.')}: ${i.message}`,
    );
    throw new ConfigError(`invalid CDK context:\n${lines.join('\n')}`);
  }
  return result.data;
}

/** The execution input the state machine expects. */
export interface ExecutionInput {
  readonly spec: unknown;
  readonly scripts?: Readonly<Record<string, string>>;
}

/** Reads an experiment file into the execution input, with the bodies of its custom Lua scripts. */
export function loadExecutionInput(experimentPath: string, baseDir: string): ExecutionInput {
  const file = isAbsolute(experimentPath) ? experimentPath : resolve(baseDir, experimentPath);
  let spec: { workloads?: { script?: unknown }[] };
  try {
    spec = JSON.parse(readFileSync(file, 'utf8')) as typeof spec;
  } catch (e) {
    throw new ConfigError(`${CONFIG_CONTEXT_KEY}.nightly.experiment: cannot read ${file}`, { cause: e, source: file });
  }
  const scripts: Record<string, string> = {};
  for (const w of spec.workloads ?? []) {
    if (typeof w.script !== 'string') continue;
    const scriptFile = resolve(dirname(file), w.script);
    try {
      scripts[basename(w.script)] = readFileSync(scriptFile, 'utf8');
    } catch (e) {
      throw new ConfigError(`${CONFIG_CONTEXT_KEY}.nightly.experiment: cannot read workload script ${scriptFile}`, {
        cause: e,
        source: scriptFile,
      });
    }
  }
  return Object.keys(scripts).length > 0 ? { spec, scripts } : { spec };
}
