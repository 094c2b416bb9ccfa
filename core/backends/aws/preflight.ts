/**
 * Checks an AWS run must pass before anything is created (plan-run refuses the execution with
 * these notes): engine version, local write forwarding on the version, the variant's AZ among the
 * configured subnets, DB instance classes orderable for the engine version, client instance types
 * that exist and have a launch template for their architecture.
 *
 * DescribeDBEngineVersions (Engine aurora-mysql, EngineVersion; without IncludeAll it lists only
 * versions that are available) is the authority for the engine version: an empty answer means the
 * version does not exist or is no longer offered in the region, and the spec is refused on
 * engine.version. Only when the API itself is not implemented (moto 5 answers HTTP 500 with
 * NotImplementedError for describe_db_engine_versions) is the version accepted unchecked, with an
 * info note.
 *
 * DescribeOrderableDBInstanceOptions is the authority for instance classes. When it returns nothing
 * at all for an engine version that exists (moto implements it only for aurora-postgresql and
 * neptune; a private region may lack it), the check falls back to the static table below, from the
 * Aurora User Guide "Supported DB engines for DB instance classes"
 * (Concepts.DBInstanceClass.SupportAurora), and says so in an info note.
 */
import { DescribeSubnetsCommand } from '@aws-sdk/client-ec2';
import { DescribeDBEngineVersionsCommand, DescribeOrderableDBInstanceOptionsCommand } from '@aws-sdk/client-rds';
import { UnsupportedOnBackendError } from '../../backend';
import type { Plan, PlanNote, ResolvedVariant } from '../../plan/types';
import { AwsBackend } from './aws-backend';
import { call, errorCode, isNotFound, rethrow } from './aws-errors';
import type { AwsClients } from './clients';
import type { AwsBackendConfig } from './config';
import { EngineVersionError, parseAuroraVersion, supportsLocalWriteForwarding, type AuroraVersion } from './engine';

/** Aurora MySQL instance classes by major version (fallback only; sizes per class family). */
const SIZES_R = ['large', 'xlarge', '2xlarge', '4xlarge', '8xlarge', '12xlarge', '16xlarge'];
const STATIC_CLASSES: Record<2 | 3, ReadonlySet<string>> = {
  3: new Set([
    ...['r5', 'r6g', 'r6i', 'r7g', 'r7i', 'r8g'].flatMap((f) => SIZES_R.map((s) => `db.${f}.${s}`)),
    'db.r5.24xlarge', 'db.r6i.24xlarge', 'db.r6i.32xlarge', 'db.r7i.24xlarge', 'db.r7i.48xlarge', 'db.r8g.24xlarge', 'db.r8g.48xlarge',
    ...['r6gd', 'r6id', 'r8gd'].flatMap((f) => SIZES_R.map((s) => `db.${f}.${s}`)),
    ...['x2g'].flatMap((f) => SIZES_R.map((s) => `db.${f}.${s}`)),
    'db.t3.medium', 'db.t3.large', 'db.t4g.medium', 'db.t4g.large',
  ]),
  2: new Set([
    ...['r4', 'r5', 'r6g'].flatMap((f) => SIZES_R.map((s) => `db.${f}.${s}`)),
    'db.r5.24xlarge', 'db.t2.small', 'db.t2.medium', 'db.t3.small', 'db.t3.medium', 'db.t4g.medium', 'db.t4g.large',
  ]),
};

/** Distinct variants in spec order: the first repeat round lists every variant in spec order (plan.ts orderCells). */
export function variantsInSpecOrder(plan: Plan): ResolvedVariant[] {
  const seen = new Map<string, ResolvedVariant>();
  for (const c of [...plan.cells].sort((a, b) => a.repeat - b.repeat || a.index - b.index)) {
    if (c.repeat === 1 && !seen.has(c.variant.name)) seen.set(c.variant.name, c.variant);
  }
  for (const c of plan.cells) if (!seen.has(c.variant.name)) seen.set(c.variant.name, c.variant);
  return [...seen.values()];
}

/**
 * The API answered that it does not exist: InvalidAction / NotImplemented from an AWS-compatible
 * endpoint, or a server error without any AWS error code (moto's HTML 500 page for an action it has
 * not implemented). A real AWS server error carries a code (InternalFailure ...) and is rethrown.
 */
function isUnimplemented(e: unknown): boolean {
  const code = errorCode(e);
  if (/^(InvalidAction|NotImplemented|UnknownOperation(Exception)?)$/.test(code)) return true;
  const status = (e as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;
  return code === 'Error' && status !== undefined && status >= 500;
}

/** Whether RDS offers this aurora-mysql version in the region: 'unknown' when the API is not implemented. */
async function engineVersionOffered(clients: AwsClients, version: AuroraVersion): Promise<'yes' | 'no' | 'unknown'> {
  try {
    const out = await clients.rds.send(new DescribeDBEngineVersionsCommand({ Engine: 'aurora-mysql', EngineVersion: version.engineVersion }));
    return (out.DBEngineVersions ?? []).some((v) => v.EngineVersion === version.engineVersion) ? 'yes' : 'no';
  } catch (e) {
    if (isUnimplemented(e)) return 'unknown';
    return rethrow(e, `RDS DescribeDBEngineVersions aurora-mysql ${version.engineVersion}`);
  }
}

async function orderableClasses(clients: AwsClients, version: AuroraVersion, instanceClass: string): Promise<'yes' | 'no' | 'unknown'> {
  const query = async (cls?: string) =>
    call('RDS DescribeOrderableDBInstanceOptions', () =>
      clients.rds.send(
        new DescribeOrderableDBInstanceOptionsCommand({ Engine: 'aurora-mysql', EngineVersion: version.engineVersion, ...(cls ? { DBInstanceClass: cls } : {}), MaxRecords: 20 }),
      ),
    );
  const forClass = await query(instanceClass);
  if ((forClass.OrderableDBInstanceOptions ?? []).length > 0) return 'yes';
  const any = await query();
  return (any.OrderableDBInstanceOptions ?? []).length > 0 ? 'no' : 'unknown';
}

export interface PreflightOptions {
  /** Skip EC2 checks of subnets (unit tests without EC2). */
  readonly checkSubnets?: boolean;
}

export async function validateForAws(plan: Plan, config: AwsBackendConfig, clients: AwsClients, options: PreflightOptions = {}): Promise<PlanNote[]> {
  const notes: PlanNote[] = [];
  const refuse = (path: string, message: string) => notes.push({ level: 'refused', path, message });

  if (plan.region !== config.region) {
    refuse('region', `the spec asks for region ${plan.region} but the aurora-bench stack is deployed in ${config.region}`);
  }
  let version: AuroraVersion | undefined;
  try {
    version = parseAuroraVersion(plan.engine.version);
  } catch (e) {
    if (!(e instanceof EngineVersionError)) throw e;
    refuse('engine.version', e.message);
  }
  let versionUnchecked = false;
  if (version !== undefined) {
    const offered = await engineVersionOffered(clients, version);
    if (offered === 'no') {
      refuse('engine.version', `aurora-mysql ${version.engineVersion} (spec ${plan.engine.version}) is not offered in ${config.region}: it does not exist or is deprecated (DescribeDBEngineVersions lists the available versions)`);
      // Nothing is orderable for a version that is not offered: no instance class verdicts.
      version = undefined;
    } else if (offered === 'unknown') {
      versionUnchecked = true;
    }
  }

  // The configured subnets really are in the AZs they are listed under.
  const configuredAzs = new Set(Object.keys(config.subnetIdsByAz));
  if (options.checkSubnets !== false && configuredAzs.size > 0) {
    for (const [az, subnetId] of Object.entries(config.subnetIdsByAz)) {
      try {
        const out = await clients.ec2.send(new DescribeSubnetsCommand({ SubnetIds: [subnetId] }));
        const actual = out.Subnets?.[0]?.AvailabilityZone;
        if (actual !== az) {
          refuse('region', `configured subnet ${subnetId} is in ${actual ?? 'no AZ'}, not ${az}: fix the stack configuration`);
          configuredAzs.delete(az);
        }
      } catch (e) {
        if (!isNotFound(e) && !/InvalidSubnet/.test(errorCode(e))) rethrow(e, `EC2 DescribeSubnets ${subnetId}`);
        refuse('region', `configured subnet ${subnetId} (${az}) does not exist: fix the stack configuration`);
        configuredAzs.delete(az);
      }
    }
  }

  const backend = new AwsBackend({ config, clients });
  const archChecked = new Map<string, string | null>();
  const classChecked = new Map<string, 'yes' | 'no' | 'unknown'>();
  let fellBack = false;

  for (const [vi, v] of variantsInSpecOrder(plan).entries()) {
    const at = `variants[${vi}]`;
    if (v.az !== undefined) {
      const az = `${plan.region}${v.az}`;
      if (!configuredAzs.has(az)) {
        refuse(`${at}.az`, `AZ ${az} is not one of the VPC's configured subnets' AZs (${[...configuredAzs].sort().join(', ') || 'none'})`);
      }
    }
    if (v.writeForwarding?.enabled && version !== undefined && !supportsLocalWriteForwarding(version)) {
      refuse(
        `${at}.writeForwarding.enabled`,
        `local write forwarding requires Aurora MySQL 3.04 or higher; the engine is ${version.engineVersion} (Aurora User Guide, aurora-mysql-write-forwarding)`,
      );
    }
    if (version !== undefined) {
      let verdict = classChecked.get(v.instanceClass);
      if (verdict === undefined) {
        verdict = await orderableClasses(clients, version, v.instanceClass);
        classChecked.set(v.instanceClass, verdict);
      }
      if (verdict === 'unknown') {
        fellBack = true;
        verdict = STATIC_CLASSES[version.aurora[0] as 2 | 3]?.has(v.instanceClass) ? 'yes' : 'no';
      }
      if (verdict === 'no') {
        refuse(`${at}.instanceClass`, `${v.instanceClass} is not an orderable instance class for aurora-mysql ${version.engineVersion} in ${config.region}`);
      }
    }
    const type = v.clients.instanceType;
    if (!archChecked.has(type)) {
      try {
        const arch = await backend.architectureOf(type);
        archChecked.set(type, config.launchTemplateIds[arch] ? null : `no launch template for ${arch} clients is configured (needed by ${type})`);
      } catch (e) {
        if (!(e instanceof UnsupportedOnBackendError)) throw e;
        archChecked.set(type, e.message);
      }
    }
    const clientProblem = archChecked.get(type);
    if (clientProblem) refuse(`${at}.clients.instanceType`, clientProblem);
  }
  if (versionUnchecked) {
    notes.push({ level: 'info', path: 'engine.version', message: 'DescribeDBEngineVersions is not implemented by this endpoint: the engine version was not checked' });
  }
  if (fellBack) {
    notes.push({
      level: 'info',
      path: 'variants',
      message: 'DescribeOrderableDBInstanceOptions returned no options for this engine version: instance classes were checked against the built-in Aurora MySQL table',
    });
  }
  return notes;
}

/** The TaskDeps.preflight function for an AWS run. */
export function makeAwsPreflight(config: AwsBackendConfig, clients: AwsClients): (plan: Plan) => Promise<PlanNote[]> {
  return (plan) => validateForAws(plan, config, clients);
}
