/**
 * The AWS preflight: read-only checks against the account before anything is created or paid for.
 * The CLI's preflight and `run --aws` use it, and so does the workflow's PlanRun.
 * Every refusal names the spec's JSON path or the account setting, and how to fix it.
 */
import {
  DescribeDBEngineVersionsCommand,
  DescribeOrderableDBInstanceOptionsCommand,
  type ServerlessV2FeaturesSupport,
} from '@aws-sdk/client-rds';
import { GetRoleCommand } from '@aws-sdk/client-iam';
import type { Plan, PlanNote } from '../../plan/types';
import { BudgetExceededError, checkBudget, formatMoney, type PriceTable } from '../../plan/cost';
import type { Spec } from '../../experiment/schema';
import { variantAz } from './placement';
import { errorCode } from './aws-errors';
import type { AwsClients } from './clients';
import type { AwsBackendConfig } from './config';
import {
  EngineVersionError,
  parseAuroraVersion,
  supportsLocalWriteForwarding,
  type AuroraVersion,
} from '../../aurora/engine';
import { checkClientInstances, checkServerInstances, checkVcpuQuota, InstanceTypeCatalog } from './preflight-clients';
import { ask, CheckResult, guarded, NotCheckable, unanswered, type PreflightCheck } from './preflight-common';
import { checkNetwork } from './preflight-network';
import { checkParameters } from './preflight-parameters';
import { AURORA_MYSQL_INSTANCE_CLASSES } from '../../aurora/aws-names';
import { isServerless, MIN_ACU_WITHOUT_PAUSE } from '../../aurora/aurora-configurations';
import { awsEngineVersion, ENGINES, parameterGroupFamily, type EngineRef } from '../../aurora/engines';
import { variantEngine } from '../../experiment/engine-checks';

/** Where the stack's configuration comes from. The CLI reads the deployed stack, and a Lambda has its own. */
export interface AwsDeployment {
  /** The CloudFormation stack the CLI reads. Undefined inside the workflow. */
  readonly stackName?: string;
  readonly config?: AwsBackendConfig;
  /** Why the stack's configuration could not be read, e.g. a missing stack or an old version. */
  readonly problem?: string;
}

export interface AwsPreflightInput {
  readonly plan: Plan;
  readonly spec: Spec;
  readonly clients: AwsClients;
  readonly deployment: AwsDeployment;
  /** The CLI may merge a user's price file. The Lambda has the bundled table. */
  readonly prices: PriceTable;
}

export interface PreflightReport {
  readonly region: string;
  readonly stackName?: string;
  readonly checks: readonly PreflightCheck[];
}

interface EngineFacts {
  readonly version: AuroraVersion | undefined;
  /** 'unknown' when the API is not implemented or was denied. */
  readonly offered: 'yes' | 'no' | 'unknown';
  readonly family: string | undefined;
  readonly supportsLocalWriteForwarding: boolean | undefined;
  readonly serverlessV2?: ServerlessV2FeaturesSupport | undefined;
}

/**
 * Serverless v2 ranges the engine version does not take, by RDS's own word.
 * ServerlessV2FeaturesSupport gives the version's largest capacity, and a minimum of 0 means it can pause.
 * See botocore rds/2014-10-31, shape DBEngineVersion. Without it, as on moto, the offline table's check stands.
 * @internal exported for its tests
 */
export function refuseServerlessRanges(
  result: Pick<CheckResult, 'refuse'>,
  spec: AwsPreflightInput['spec'],
  engineOf: (vi: number) => boolean,
  features: ServerlessV2FeaturesSupport | undefined,
  versionLabel: string,
): void {
  if (features === undefined) return;
  for (const [vi, v] of spec.variants.entries()) {
    if (!isServerless(v.instanceClass) || !engineOf(vi)) continue;
    if (features.MaxCapacity !== undefined && v.maxAcu !== undefined && v.maxAcu > features.MaxCapacity) {
      result.refuse(
        `variants[${vi}].maxAcu`,
        `maxAcu ${v.maxAcu} is above ${features.MaxCapacity}, the most ${versionLabel} takes in this region ` +
          `(DescribeDBEngineVersions ServerlessV2FeaturesSupport.MaxCapacity): use ` +
          `maxAcu ${features.MaxCapacity} or less, or raise the engine version`,
      );
    }
    const min = v.minAcu ?? MIN_ACU_WITHOUT_PAUSE;
    if (features.MinCapacity !== undefined && min < features.MinCapacity) {
      result.refuse(
        `variants[${vi}].minAcu`,
        `minAcu ${min} is below ${features.MinCapacity}, the least ${versionLabel} takes ` +
          `(DescribeDBEngineVersions ServerlessV2FeaturesSupport.MinCapacity): use ` +
          `minAcu ${features.MinCapacity} or more, or raise the engine version`,
      );
    }
  }
}

function stackLabelOf(deployment: AwsDeployment): string {
  return deployment.stackName !== undefined ? `stack ${deployment.stackName}` : 'the workflow stack';
}

function checkStack(input: AwsPreflightInput): PreflightCheck {
  const result = new CheckResult('stack', 'deployed stack');
  const { deployment, plan } = input;
  const label = stackLabelOf(deployment);
  if (deployment.problem !== undefined || deployment.config === undefined) {
    result.refuse(label, deployment.problem ?? 'its configuration is unknown');
    return result.done('not usable');
  }
  const config = deployment.config;
  if (plan.region !== config.region) {
    result.refuse(
      'region',
      `the spec asks for region ${plan.region} but ${label} is deployed in ${config.region}: set region ` +
        `to ${config.region}, or deploy the stack in ${plan.region}`,
    );
  }
  const azs = Object.keys(config.subnetIdsByAz).sort();
  return result.done(
    `${label} in ${config.region}: lake s3://${config.bucket}/${config.lakePrefix}, subnets ` +
      `in ${azs.join(', ') || 'no AZ'}`,
  );
}

/** The variants' engines other than Aurora MySQL, each (kind, version) once, with the first variant using it. */
function otherEngines(spec: Spec): { engine: EngineRef; vi: number }[] {
  const seen = new Map<string, { engine: EngineRef; vi: number }>();
  spec.variants.forEach((v, vi) => {
    const engine = variantEngine(spec, v);
    if (engine.kind === 'aurora-mysql') return;
    const key = `${engine.kind}\u0000${engine.version}`;
    if (!seen.has(key)) seen.set(key, { engine, vi });
  });
  return [...seen.values()];
}

function usesAuroraMysql(spec: Spec): boolean {
  return spec.variants.some((v) => variantEngine(spec, v).kind === 'aurora-mysql');
}

/**
 * The other engines' versions, checked as for Aurora MySQL.
 */
async function checkOtherEngineVersions(input: AwsPreflightInput, result: CheckResult): Promise<string[]> {
  const lines: string[] = [];
  for (const { engine, vi } of otherEngines(input.spec)) {
    const rdsEngine = ENGINES[engine.kind].rdsEngine;
    const path = input.spec.variants[vi]!.engine !== undefined ? `variants[${vi}].engine.version` : 'engine.version';
    if (rdsEngine === undefined) continue;
    const version = awsEngineVersion(engine);
    try {
      const out = await ask('rds:DescribeDBEngineVersions', () =>
        input.clients.rds.send(new DescribeDBEngineVersionsCommand({ Engine: rdsEngine, EngineVersion: version })),
      );
      const found = (out.DBEngineVersions ?? []).find((v) => v.EngineVersion === version);
      if (!found) {
        result.refuse(
          path,
          `${rdsEngine} ${version} is not offered in ${input.plan.region}: it does not exist or is deprecated; ` +
            `pick one that \`aws rds describe-db-engine-versions --engine ${rdsEngine} ` +
            `--region ${input.plan.region}\` lists`,
        );
        lines.push(`${rdsEngine} ${version} is not offered`);
      } else {
        lines.push(
          `${rdsEngine} ${version} is offered (parameter ` +
            `family ${found.DBParameterGroupFamily ?? parameterGroupFamily(engine)})`,
        );
        const sameEngine = (i: number): boolean => {
          const e = variantEngine(input.spec, input.spec.variants[i]!);
          return e.kind === engine.kind && e.version === engine.version;
        };
        refuseServerlessRanges(
          result,
          input.spec,
          sameEngine,
          found.ServerlessV2FeaturesSupport,
          `${rdsEngine} ${version}`,
        );
      }
    } catch (e) {
      if (!(e instanceof NotCheckable)) throw e;
      result.warn(path, `not checked: ${e.message}`);
      lines.push(`${rdsEngine} ${version} (not checked)`);
    }
  }
  return lines;
}

/**
 * DescribeDBEngineVersions lists only the versions RDS offers in the region. So an empty answer refuses the version.
 * Its DBParameterGroupFamily names the parameter family. See botocore rds/2014-10-31, shape DBEngineVersion.
 * moto 5 does not implement it, so the version is then accepted with a warning.
 */
async function engineFacts(input: AwsPreflightInput, result: CheckResult): Promise<EngineFacts> {
  let version: AuroraVersion;
  if (input.plan.engine.kind !== 'aurora-mysql')
    return { version: undefined, offered: 'unknown', family: undefined, supportsLocalWriteForwarding: undefined };
  try {
    version = parseAuroraVersion(input.plan.engine.version);
  } catch (e) {
    if (!(e instanceof EngineVersionError)) throw e;
    result.refuse('engine.version', e.message);
    return { version: undefined, offered: 'no', family: undefined, supportsLocalWriteForwarding: undefined };
  }
  try {
    const out = await ask('rds:DescribeDBEngineVersions', () =>
      input.clients.rds.send(
        new DescribeDBEngineVersionsCommand({ Engine: 'aurora-mysql', EngineVersion: version.engineVersion }),
      ),
    );
    const found = (out.DBEngineVersions ?? []).find((v) => v.EngineVersion === version.engineVersion);
    return {
      version,
      offered: found ? 'yes' : 'no',
      family: found?.DBParameterGroupFamily ?? version.family,
      supportsLocalWriteForwarding: found?.SupportsLocalWriteForwarding,
      serverlessV2: found?.ServerlessV2FeaturesSupport,
    };
  } catch (e) {
    if (!(e instanceof NotCheckable)) throw e;
    result.warn('engine.version', `not checked: ${e.message}`);
    return { version, offered: 'unknown', family: version.family, supportsLocalWriteForwarding: undefined };
  }
}

async function checkEngine(input: AwsPreflightInput): Promise<{ check: PreflightCheck; facts: EngineFacts }> {
  const result = new CheckResult('engine-version', 'engine version');
  const facts = await engineFacts(input, result);
  const { plan, spec } = input;
  const region = plan.region;
  const v = facts.version;
  if (v && facts.offered === 'no') {
    result.refuse(
      'engine.version',
      `aurora-mysql ${v.engineVersion} (spec ${plan.engine.version}) is not offered in ${region}: it does not ` +
        `exist or is deprecated; ` +
        `pick one that \`aws rds describe-db-engine-versions --engine aurora-mysql --region ${region}\` lists`,
    );
  }
  if (v && facts.offered !== 'no') {
    for (const [vi, variant] of spec.variants.entries()) {
      if (!variant.writeForwarding?.enabled) continue;
      const supported = facts.supportsLocalWriteForwarding ?? supportsLocalWriteForwarding(v);
      if (!supported) {
        result.refuse(
          `variants[${vi}].writeForwarding.enabled`,
          `local write forwarding requires Aurora MySQL 3.04 or higher; ${v.engineVersion} does not support ` +
            `it` +
            (facts.supportsLocalWriteForwarding === false
              ? ' (DescribeDBEngineVersions: SupportsLocalWriteForwarding false)'
              : '') +
            `: ` +
            `raise engine.version or disable it`,
        );
      }
    }
  }
  refuseServerlessRanges(
    result,
    spec,
    (vi) => variantEngine(spec, spec.variants[vi]!).kind === 'aurora-mysql',
    facts.serverlessV2,
    `aurora-mysql ${plan.engine.version}`,
  );
  const others = await checkOtherEngineVersions(input, result);
  const auroraSummary = !usesAuroraMysql(spec)
    ? undefined
    : v === undefined
      ? 'not an Aurora MySQL version'
      : facts.offered === 'yes'
        ? `aurora-mysql ${v.engineVersion} is offered in ${region} (parameter family ${facts.family})`
        : facts.offered === 'no'
          ? `aurora-mysql ${v.engineVersion} is not offered in ${region}`
          : `aurora-mysql ${v.engineVersion} (not checked)`;
  const summary = [...(auroraSummary !== undefined ? [auroraSummary] : []), ...others].join('; ');
  return { check: result.done(summary), facts };
}

/** AZ names a class is orderable in for the version. Undefined when RDS lists no option for it. */
async function orderableAzs(
  clients: AwsClients,
  engineVersion: string,
  instanceClass: string,
  rdsEngine = 'aurora-mysql',
): Promise<Set<string> | undefined> {
  const azs = new Set<string>();
  let options = 0;
  let marker: string | undefined;
  for (let page = 0; page < 50; page++) {
    const out = await ask('rds:DescribeOrderableDBInstanceOptions', () =>
      clients.rds.send(
        new DescribeOrderableDBInstanceOptionsCommand({
          Engine: rdsEngine,
          EngineVersion: engineVersion,
          DBInstanceClass: instanceClass,
          Vpc: true,
          MaxRecords: 100,
          ...(marker !== undefined ? { Marker: marker } : {}),
        }),
      ),
    );
    for (const o of out.OrderableDBInstanceOptions ?? []) {
      options++;
      for (const az of o.AvailabilityZones ?? []) if (az.Name) azs.add(az.Name);
    }
    marker = out.Marker || undefined;
    if (marker === undefined) break;
  }
  return options > 0 ? azs : undefined;
}

/**
 * Whether RDS lists any orderable option for the version. moto lists them only for a few engines.
 * Without any, classes are checked against the static table from the Aurora User Guide.
 * See AWS, "Supported DB engines for DB instance classes".
 */
async function anyOrderable(clients: AwsClients, engineVersion: string): Promise<boolean> {
  const out = await ask('rds:DescribeOrderableDBInstanceOptions', () =>
    clients.rds.send(
      new DescribeOrderableDBInstanceOptionsCommand({
        Engine: 'aurora-mysql',
        EngineVersion: engineVersion,
        MaxRecords: 20,
      }),
    ),
  );
  return (out.OrderableDBInstanceOptions ?? []).length > 0;
}

async function checkInstanceClasses(input: AwsPreflightInput, facts: EngineFacts): Promise<PreflightCheck> {
  const result = new CheckResult('instance-classes', 'DB instance classes');
  const { plan, spec, clients, deployment } = input;
  const v = facts.version;
  const auroraMysqlChecked = !usesAuroraMysql(spec) || (v !== undefined && facts.offered !== 'no');
  if (!auroraMysqlChecked)
    result.warn(
      'engine.version',
      'Aurora MySQL classes not checked: nothing is orderable for an engine version RDS does not offer',
    );
  return guarded(result, 'variants', async () => {
    const byClass = new Map<string, Set<string> | undefined>();
    let apiEmpty: boolean | undefined;
    const lines: string[] = [];
    for (const [vi, variant] of spec.variants.entries()) {
      const planned = plan.cells.find((c) => c.variant.name === variant.name)?.variant;
      if (!planned) continue;
      const cls = planned.instanceClass;
      const engine = variantEngine(spec, variant);
      if (engine.kind !== 'aurora-mysql') {
        // Another RDS engine is checked at its own version. Without any answer, it stays unchecked.
        const rdsEngine = ENGINES[engine.kind].rdsEngine;
        if (rdsEngine === undefined) continue;
        const version = awsEngineVersion(engine);
        const azs = await orderableAzs(clients, version, cls, rdsEngine);
        const az = deployment.config
          ? variantAz(plan.region, planned, deployment.config.subnetIdsByAz)
          : planned.az !== undefined
            ? `${plan.region}${planned.az}`
            : undefined;
        if (azs === undefined) {
          result.warn(
            `variants[${vi}].instanceClass`,
            `not checked: DescribeOrderableDBInstanceOptions lists no option for ${rdsEngine} ${version} ${cls}`,
          );
          lines.push(`${cls} for ${rdsEngine} (not checked)`);
        } else if (az !== undefined && azs.size > 0 && !azs.has(az)) {
          result.refuse(
            `variants[${vi}].instanceClass`,
            `${cls} is orderable for ${rdsEngine} ${version} in ${[...azs].sort().join(', ')} but not ` +
              `in ${az}: choose another class or AZ`,
          );
        } else lines.push(`${cls} for ${rdsEngine}${az ? ` in ${az}` : ''}`);
        continue;
      }
      if (v === undefined || !auroraMysqlChecked) continue;
      if (!byClass.has(cls)) byClass.set(cls, await orderableAzs(clients, v.engineVersion, cls));
      const azs = byClass.get(cls);
      const az = deployment.config
        ? variantAz(plan.region, planned, deployment.config.subnetIdsByAz)
        : planned.az !== undefined
          ? `${plan.region}${planned.az}`
          : undefined;
      const path = `variants[${vi}].instanceClass`;
      if (azs === undefined) {
        apiEmpty ??= !(await anyOrderable(clients, v.engineVersion));
        if (apiEmpty) {
          // Validation checked the engine versions of db.serverless. It is no entry of the class table.
          if (!isServerless(cls) && !AURORA_MYSQL_INSTANCE_CLASSES[v.aurora[0] as 2 | 3].has(cls)) {
            result.refuse(
              path,
              `${cls} is not an Aurora MySQL ${v.aurora[0]}.x instance class (built-in table): choose one the ` +
                `Aurora User Guide lists for it`,
            );
          }
          lines.push(`${cls} (built-in table)`);
        } else {
          result.refuse(
            path,
            `${cls} is not orderable for aurora-mysql ${v.engineVersion} in ${plan.region}: choose a class ` +
              `\`aws rds describe-orderable-db-instance-options --engine aurora-mysql ` +
              `--engine-version ${v.engineVersion}\` lists`,
          );
        }
        continue;
      }
      if (az !== undefined && azs.size > 0 && !azs.has(az)) {
        result.refuse(
          path,
          `${cls} is orderable for aurora-mysql ${v.engineVersion} in ${[...azs].sort().join(', ')} but not ` +
            `in ${az}, where variants[${vi}] runs: choose another class, or set variants[${vi}].az to one of those AZs`,
        );
        continue;
      }
      lines.push(`${cls}${az ? ` in ${az}` : ''}`);
    }
    if (apiEmpty && v !== undefined) {
      result.warn(
        'variants',
        `DescribeOrderableDBInstanceOptions returned no options at all for aurora-mysql ${v.engineVersion}: ` +
          `instance classes were checked against the built-in Aurora MySQL table, not the account`,
      );
    }
    return `orderable: ${[...new Set(lines)].join(', ')}`;
  });
}

const SERVICE_LINKED_ROLE = 'AWSServiceRoleForRDS';

/**
 * RDS creates AWSServiceRoleForRDS with the first DB cluster, when the creator may create service-linked roles.
 * The stack grants that to the Task role, which creates the clusters.
 * See AWS, Aurora User Guide, "Using service-linked roles for Amazon Aurora".
 */
async function checkServiceLinkedRole(input: AwsPreflightInput): Promise<PreflightCheck> {
  const result = new CheckResult('service-linked-role', 'RDS service-linked role');
  const where = `account: IAM role ${SERVICE_LINKED_ROLE}`;
  return guarded(result, where, async () => {
    try {
      const out = await input.clients.iam.send(new GetRoleCommand({ RoleName: SERVICE_LINKED_ROLE }));
      return `${out.Role?.Arn ?? SERVICE_LINKED_ROLE} exists`;
    } catch (e) {
      if (errorCode(e) === 'NoSuchEntityException' || errorCode(e) === 'NoSuchEntity') {
        return (
          `${SERVICE_LINKED_ROLE} does not exist yet: RDS creates it with the first cluster, through the ` +
          `workflow Task role's iam:CreateServiceLinkedRole (rds.amazonaws.com) that the stack grants`
        );
      }
      return unanswered('iam:GetRole', e);
    }
  });
}

function checkBudgetOf(input: AwsPreflightInput): PreflightCheck {
  const result = new CheckResult('budget', 'budget');
  const { plan, spec, prices } = input;
  try {
    const cost = checkBudget(plan, spec.budget, prices);
    const estimate =
      cost.total === null
        ? `unknown (no price for ${cost.missing.join(', ')} in ${cost.region})`
        : formatMoney(cost.total, cost.currency);
    if (spec.budget === undefined) {
      if (cost.total === null)
        result.warn(
          'budget.maxUsd',
          `the cost cannot be estimated: no price for ${cost.missing.join(', ')} in ${cost.region} (add them ` +
            `with --prices)`,
        );
      return result.done(`estimated ${estimate}; no budget.maxUsd set`);
    }
    return result.done(
      `estimated ${estimate} within budget.maxUsd ${formatMoney(spec.budget.maxUsd, 'USD')} ` +
        `(prices ${cost.pricesAsOf})`,
    );
  } catch (e) {
    if (!(e instanceof BudgetExceededError)) throw e;
    result.refuse('budget.maxUsd', e.message);
    return result.done('over budget');
  }
}

/** Every check, in the order they are printed. */
export async function runAwsPreflight(input: AwsPreflightInput): Promise<PreflightReport> {
  const config = input.deployment.config;
  const stackLabel = stackLabelOf(input.deployment);
  const types = new InstanceTypeCatalog(input.clients);
  const clientInput = { plan: input.plan, spec: input.spec, clients: input.clients, config, types, stackLabel };
  const stack = checkStack(input);
  const engine = await checkEngine(input);
  const rest = await Promise.all([
    checkInstanceClasses(input, engine.facts),
    checkParameters({
      plan: input.plan,
      spec: input.spec,
      clients: input.clients,
      version: engine.facts.offered === 'no' ? undefined : engine.facts.version,
      family: engine.facts.family,
    }),
    checkServiceLinkedRole(input),
    checkClientInstances(clientInput),
    checkServerInstances(clientInput),
    checkVcpuQuota(clientInput),
    checkNetwork({ plan: input.plan, spec: input.spec, clients: input.clients, config, stackLabel }),
  ]);
  return {
    region: config?.region ?? input.plan.region,
    ...(input.deployment.stackName !== undefined ? { stackName: input.deployment.stackName } : {}),
    checks: [stack, engine.check, ...rest, checkBudgetOf(input)],
  };
}

export function preflightRefused(report: PreflightReport): boolean {
  return report.checks.some((c) => c.verdict === 'refuse');
}

/** The report as plan notes. PlanRun refuses the execution on the refused ones. */
export function preflightNotes(report: PreflightReport): PlanNote[] {
  return report.checks.flatMap((c) => c.notes);
}
