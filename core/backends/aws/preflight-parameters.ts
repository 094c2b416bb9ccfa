/**
 * The parameters check of the AWS preflight. RDS must know every parameter a cell's groups would get,
 * at the right level, modifiable, and taking the value.
 * The authority is the account's own engine defaults for the family. See botocore rds/2014-10-31, shape "Parameter".
 */
import {
  DescribeEngineDefaultClusterParametersCommand,
  DescribeEngineDefaultParametersCommand,
  type EngineDefaults,
  type Parameter,
} from '@aws-sdk/client-rds';
import { lookupParameter } from '../../aurora/parameter-catalogue';
import type { CellPlan, Plan } from '../../plan/types';
import type { Spec } from '../../experiment/schema';
import { clusterParametersFor, instanceParametersFor } from './cluster';
import type { AwsClients } from './clients';
import { parseAuroraVersion, type AuroraVersion } from '../../aurora/engine';
import { parseAllowedValues, valueProblem } from './parameter-values';
import { ask, CheckResult, guarded, NotCheckable, specVariantIndex, type PreflightCheck } from './preflight-common';
import { dbInstanceParametersFor } from './db-instances';
import { ENGINES, parameterGroupFamily } from '../../aurora/engines';

type ParameterLevel = 'cluster' | 'instance';

/** The account's engine defaults of one family and level, by parameter name. */
type EngineDefaultParameters = ReadonlyMap<string, Parameter>;

/** A family has some 500 parameters. A marker loop that never ends would be an endpoint bug. */
const MAX_PAGES = 50;

async function describeEngineDefaults(
  clients: AwsClients,
  family: string,
  level: ParameterLevel,
): Promise<EngineDefaultParameters> {
  const byName = new Map<string, Parameter>();
  let marker: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const request = {
      DBParameterGroupFamily: family,
      MaxRecords: 100,
      ...(marker !== undefined ? { Marker: marker } : {}),
    };
    let defaults: EngineDefaults | undefined;
    if (level === 'cluster') {
      defaults = (
        await ask('rds:DescribeEngineDefaultClusterParameters', () =>
          clients.rds.send(new DescribeEngineDefaultClusterParametersCommand(request)),
        )
      ).EngineDefaults;
    } else {
      defaults = (
        await ask('rds:DescribeEngineDefaultParameters', () =>
          clients.rds.send(new DescribeEngineDefaultParametersCommand(request)),
        )
      ).EngineDefaults;
    }
    for (const p of defaults?.Parameters ?? []) if (p.ParameterName) byName.set(p.ParameterName, p);
    marker = defaults?.Marker || undefined;
    if (marker === undefined) return byName;
  }
  throw new Error(
    `RDS DescribeEngineDefault${level === 'cluster' ? 'Cluster' : ''}Parameters ${family}: still paginating ` +
      `after ${MAX_PAGES} pages`,
  );
}

function lookup(defaults: EngineDefaultParameters, name: string): Parameter | undefined {
  const exact = defaults.get(name);
  if (exact) return exact;
  const lower = name.toLowerCase();
  for (const [n, p] of defaults) if (n.toLowerCase() === lower) return p;
  return undefined;
}

const WRITE_FORWARDING_FIELDS: Readonly<Record<string, string>> = {
  aurora_replica_read_consistency: 'consistency',
  aurora_fwd_writer_max_connections_pct: 'maxConnectionsPct',
  aurora_fwd_writer_idle_timeout: 'idleTimeoutS',
};

/** Where in the spec a parameter of a variant's parameter group was written. */
function parameterPath(spec: Spec, variantIndex: number, level: ParameterLevel, name: string): string {
  const v = spec.variants[variantIndex]!;
  const key = level === 'cluster' ? 'clusterParameters' : 'instanceParameters';
  // clusterParametersFor sets the write-forwarding parameters after the spec's own, so they win.
  if (level === 'cluster' && v.writeForwarding?.enabled && WRITE_FORWARDING_FIELDS[name])
    return `variants[${variantIndex}].writeForwarding.${WRITE_FORWARDING_FIELDS[name]}`;
  if (name in v[key]) return `variants[${variantIndex}].${key}.${name}`;
  const template = v.parameterTemplate !== undefined ? spec.parameterTemplates[v.parameterTemplate] : undefined;
  if (template && name in template[key]) return `parameterTemplates.${v.parameterTemplate}.${key}.${name}`;
  return `variants[${variantIndex}].${key}.${name}`;
}

function olderThan(version: AuroraVersion, minimum: string | undefined): boolean {
  if (!minimum) return false;
  try {
    const min = parseAuroraVersion(minimum).aurora;
    const [a, b, c] = version.aurora;
    return a < min[0] || (a === min[0] && (b < min[1] || (b === min[1] && c < min[2])));
  } catch {
    return false; // A minimum in another notation, such as a MySQL version, is not ours to compare.
  }
}

/** Why RDS would refuse `name = value` in a parameter group of this level, or undefined. */
function parameterProblem(
  name: string,
  value: string,
  level: ParameterLevel,
  version: AuroraVersion,
  family: string,
  defaults: { readonly cluster: EngineDefaultParameters; readonly instance: EngineDefaultParameters },
): string | undefined {
  const own = lookup(defaults[level], name);
  if (!own) {
    if (level === 'instance' && lookup(defaults.cluster, name)) {
      return `${name} is a cluster-level parameter of ${family}: move it to clusterParameters`;
    }
    return (
      `${name} is not a parameter of ${family} (RDS does not list it among the engine defaults of the ` +
      `family): remove it or correct its name`
    );
  }
  if (own.IsModifiable === false) {
    return `${name} is not modifiable on Aurora (${family}: IsModifiable false): remove it; Aurora sets it itself`;
  }
  if (
    own.SupportedEngineModes &&
    own.SupportedEngineModes.length > 0 &&
    !own.SupportedEngineModes.includes('provisioned')
  ) {
    return (
      `${name} is only for engine modes ${own.SupportedEngineModes.join(', ')}, not the provisioned ` +
      `clusters aurora-bench creates: remove it`
    );
  }
  if (olderThan(version, own.MinimumEngineVersion)) {
    return (
      `${name} needs engine ${own.MinimumEngineVersion} or later; the spec asks ` +
      `for ${version.engineVersion}: remove it or raise engine.version`
    );
  }
  const bad = valueProblem(value, own);
  return bad === undefined ? undefined : `${name}: ${bad}`;
}

/**
 * How the offline catalogue's view of `name` differs from the account's, for a parameter the spec sets.
 * The catalogue refused at plan time what it knows RDS refuses, but it may be out of date.
 * Undefined when they agree, or when the catalogue has nothing to compare.
 */
function catalogueDisagreement(
  engineVersion: string,
  name: string,
  level: ParameterLevel,
  live: Parameter | undefined,
  liveProblem: string | undefined,
): string | undefined {
  let info: ReturnType<typeof lookupParameter>;
  try {
    info = lookupParameter(engineVersion, name);
  } catch {
    return undefined;
  }
  if (!info)
    return live && !liveProblem
      ? `${name} is not in the offline parameter catalogue, but RDS in this account accepts it: the catalogue ` +
          `may be out of date`
      : undefined;
  // A DB cluster parameter group also holds defaults for the instance-level parameters.
  // So a parameter found only in the cluster list is cluster-level.
  // See AWS, Aurora User Guide, "Working with parameter groups".
  const here = info[level] ?? (level === 'cluster' ? info.instance : undefined);
  if (liveProblem) {
    return here && here.modifiable !== false
      ? `the offline parameter catalogue (AWS's published reference) accepts ${name} at the ${level} level; ` +
          `RDS in this account does not, and it decides`
      : undefined;
  }
  if (!live) return undefined;
  const differences: string[] = [];
  const liveAllowed = parseAllowedValues(live.AllowedValues);
  if (info.allowedValues && liveAllowed.literals.length > 0) {
    const a = [...info.allowedValues].map((v) => v.toUpperCase()).sort();
    const b = [...liveAllowed.literals].map((v) => v.toUpperCase()).sort();
    if (a.join(',') !== b.join(','))
      differences.push(`the catalogue allows ${info.allowedValues.join(', ')}, RDS allows ${live.AllowedValues}`);
  }
  if (info.range && liveAllowed.ranges.length === 1) {
    const r = liveAllowed.ranges[0]!;
    if (r.min !== info.range.min || r.max !== info.range.max)
      differences.push(`the catalogue's range is ${info.range.min}-${info.range.max}, RDS's is ${r.min}-${r.max}`);
  }
  if (info.applyType && live.ApplyType && info.applyType !== live.ApplyType.toLowerCase())
    differences.push(`the catalogue says ${info.applyType}, RDS says ${live.ApplyType}`);
  return differences.length > 0 ? `${name}: ${differences.join('; ')} (RDS in this account decides)` : undefined;
}

export interface ParametersCheckInput {
  readonly plan: Plan;
  readonly spec: Spec;
  readonly clients: AwsClients;
  /** Undefined when the engine version could not be parsed. That is refused elsewhere. */
  readonly version: AuroraVersion | undefined;
  /** The family RDS reported for the version, else ours. */
  readonly family: string | undefined;
}

/** The first cell of each variant: what that variant's parameter groups get. */
function cellPerVariant(plan: Plan): CellPlan[] {
  const seen = new Map<string, CellPlan>();
  for (const c of plan.cells) if (!seen.has(c.variant.name)) seen.set(c.variant.name, c);
  return [...seen.values()];
}

/**
 * The parameters of variants on the other engines, against the account's engine defaults of their family.
 * An RDS DB instance has one DB parameter group, so all of its parameters are checked at the instance level.
 * Returns one summary line per family.
 */
async function checkOtherEngineParameters(
  input: ParametersCheckInput,
  cells: readonly CellPlan[],
  result: CheckResult,
): Promise<string[]> {
  const lines: string[] = [];
  const byFamily = new Map<string, { level: ParameterLevel; name: string; value: string; cell: CellPlan }[]>();
  for (const cell of cells) {
    const engine = cell.variant.engine!;
    const family = parameterGroupFamily(engine);
    if (family === undefined) continue;
    const onInstance = ENGINES[engine.kind].topology === 'instance';
    const wanted = onInstance
      ? Object.entries(dbInstanceParametersFor(cell)).map(([name, value]) => ({
          cell,
          level: 'instance' as const,
          name,
          value,
        }))
      : [
          ...Object.entries(clusterParametersFor(cell)).map(([name, value]) => ({
            cell,
            level: 'cluster' as const,
            name,
            value,
          })),
          ...Object.entries(instanceParametersFor(cell)).map(([name, value]) => ({
            cell,
            level: 'instance' as const,
            name,
            value,
          })),
        ];
    if (wanted.length > 0) byFamily.set(family, [...(byFamily.get(family) ?? []), ...wanted]);
  }
  for (const [family, wanted] of byFamily) {
    const where = `account: RDS engine defaults of ${family}`;
    try {
      const onInstance = ENGINES[wanted[0]!.cell.variant.engine!.kind].topology === 'instance';
      const instance = await describeEngineDefaults(input.clients, family, 'instance');
      const cluster = onInstance
        ? new Map<string, Parameter>()
        : await describeEngineDefaults(input.clients, family, 'cluster');
      if (cluster.size === 0 && instance.size === 0) {
        result.warn(where, `RDS returned no engine default parameters for ${family}: parameters not checked`);
        lines.push(`${family} not checked`);
        continue;
      }
      for (const w of wanted) {
        const vi = specVariantIndex(input.spec, w.cell.variant.name);
        const own = lookup(w.level === 'cluster' ? cluster : instance, w.name);
        const path = parameterPath(input.spec, vi, w.level, w.name);
        if (!own)
          result.refuse(
            path,
            `${w.name} is not a parameter of ${family} (RDS does not list it among the engine defaults of the ` +
              `family): remove it or correct its name`,
          );
        else if (own.IsModifiable === false)
          result.refuse(path, `${w.name} is not modifiable in ${family} (IsModifiable false): remove it`);
        else {
          const bad = valueProblem(w.value, own);
          if (bad !== undefined) result.refuse(path, `${w.name}: ${bad}`);
        }
      }
      lines.push(`${new Set(wanted.map((w) => w.name)).size} parameter(s) checked against ${family}'s engine defaults`);
    } catch (e) {
      if (!(e instanceof NotCheckable)) throw e;
      result.warn(where, `not checked: ${e.message}`);
      lines.push(`${family} not checked`);
    }
  }
  return lines;
}

export async function checkParameters(input: ParametersCheckInput): Promise<PreflightCheck> {
  const result = new CheckResult('parameters', 'parameters');
  const { plan, spec, version, family } = input;
  const allCells = cellPerVariant(plan);
  const others = await checkOtherEngineParameters(
    input,
    allCells.filter((c) => (c.variant.engine?.kind ?? 'aurora-mysql') !== 'aurora-mysql'),
    result,
  );
  const cells = allCells.filter((c) => (c.variant.engine?.kind ?? 'aurora-mysql') === 'aurora-mysql');
  const wanted = cells.flatMap((cell) => [
    ...Object.entries(clusterParametersFor(cell)).map(([name, value]) => ({
      cell,
      level: 'cluster' as const,
      name,
      value,
    })),
    ...Object.entries(instanceParametersFor(cell)).map(([name, value]) => ({
      cell,
      level: 'instance' as const,
      name,
      value,
    })),
  ]);
  if (wanted.length === 0)
    return result.done(others.length > 0 ? others.join('; ') : 'no parameters set: the engine defaults apply');
  if (version === undefined || family === undefined) {
    result.warn('engine.version', 'parameters not checked: the engine version is refused');
    return result.done('not checked');
  }
  const where = `account: RDS engine defaults of ${family}`;
  return guarded(result, where, async () => {
    const [cluster, instance] = await Promise.all([
      describeEngineDefaults(input.clients, family, 'cluster'),
      describeEngineDefaults(input.clients, family, 'instance'),
    ]);
    if (cluster.size === 0 && instance.size === 0) {
      result.warn(where, `RDS returned no engine default parameters for ${family}: parameters not checked`);
      return 'not checked';
    }
    for (const w of wanted) {
      const vi = specVariantIndex(spec, w.cell.variant.name);
      const path = parameterPath(spec, vi, w.level, w.name);
      const problem = parameterProblem(w.name, w.value, w.level, version, family, { cluster, instance });
      if (problem) result.refuse(path, problem);
      const disagreement = catalogueDisagreement(
        version.engineVersion,
        w.name,
        w.level,
        lookup(w.level === 'cluster' ? cluster : instance, w.name),
        problem,
      );
      if (disagreement) result.info(path, disagreement);
    }
    const distinct = new Set(wanted.map((w) => `${w.level}:${w.name}`)).size;
    return (
      `${distinct} parameter${distinct === 1 ? '' : 's'} checked against ${family}'s engine defaults in ` +
      `the account (${cluster.size} cluster-level, ${instance.size} instance-level)`
    );
  });
}
