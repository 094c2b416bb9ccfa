/**
 * Which Aurora MySQL parameters a spec may set, at which level, with which values.
 * scripts/build-aurora-parameter-catalogue.ts builds the catalogue from AWS's parameter reference.
 * See AWS, "Aurora MySQL configuration parameters". The file records its sources.
 * aurora-mysql-parameter-amendments.json applies what AWS changed on the live pages since.
 *
 * RDS refuses an unknown parameter, one that is not modifiable and one at the wrong level.
 * Checking the spec here refuses those before anything is created, on both backends.
 * A local rehearsal must not accept what AWS will refuse.
 * The account preflight checks what the catalogue cannot know, against the engine defaults.
 */
import amendmentsJson from './aurora-mysql-parameter-amendments.json';
import catalogueJson from './aurora-mysql-parameters.json';
import { AmendmentsFileSchema, applyAmendments, type Major, type MajorCatalogue } from './parameter-amendments';
import { EngineVersionError, parseAuroraVersion, type AuroraVersion } from './engine';

export type ParameterLevel = 'cluster' | 'instance';
export type ParameterValue = string | number | boolean;

interface AuroraLevelInfo {
  /** true, false or "at-creation". aurora-bench sets at-creation parameters when it creates the cluster. */
  readonly modifiable: boolean | 'at-creation';
  readonly note?: string;
}

export interface AuroraParameterInfo {
  readonly name: string;
  /** Aurora MySQL major version, 2 for MySQL 5.7 and 3 for MySQL 8.0. */
  readonly major: 2 | 3;
  readonly cluster?: AuroraLevelInfo;
  readonly instance?: AuroraLevelInfo;
  /** AWS's reference pages do not publish it. RDS reports it to the account preflight. */
  readonly applyType?: 'static' | 'dynamic';
  readonly allowedValues?: readonly string[];
  /** Inclusive integer range as decimal strings. */
  readonly range?: { readonly min: string; readonly max: string };
  readonly minVersion?: string;
  readonly requires?: { readonly unlessValue: string; readonly parameter: string; readonly value: string };
  readonly caveats?: Readonly<Record<string, string>>;
  readonly otherName?: string;
  readonly source?: string;
}

interface MajorJson {
  readonly parameters: Readonly<Record<string, Omit<AuroraParameterInfo, 'name' | 'major'>>>;
  readonly notApplicable: Readonly<Record<string, string>>;
}
/** The catalogue built from the archive, with the amendments applied in order. */
function amendedCatalogue(): { readonly majors: Readonly<Record<Major, MajorJson>> } {
  const majors = structuredClone(catalogueJson.majors) as unknown as Record<Major, MajorCatalogue>;
  applyAmendments(majors, AmendmentsFileSchema.parse(amendmentsJson).amendments);
  return { majors };
}
const CATALOGUE = amendedCatalogue();

export interface ParameterProblem {
  readonly name: string;
  readonly reason: string;
}

function majorOf(v: AuroraVersion): 2 | 3 {
  return v.aurora[0] as 2 | 3;
}

function compareVersions(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** The catalogue entry for `name` on the spec's engine version. Undefined when Aurora MySQL has no such parameter. */
export function lookupParameter(engineVersion: string, name: string): AuroraParameterInfo | undefined {
  const major = majorOf(parseAuroraVersion(engineVersion));
  const entry = CATALOGUE.majors[String(major) as '2' | '3'].parameters[name];
  return entry ? { name, major, ...entry } : undefined;
}

/**
 * Every parameter name of a major version.
 * @internal Exported for its tests.
 */
export function catalogueNames(major: 2 | 3): string[] {
  return Object.keys(CATALOGUE.majors[String(major) as '2' | '3'].parameters);
}

/** A spec value as RDS would receive it, with booleans as 1 or 0 as the AWS backend sends them. */
function asParameterText(value: ParameterValue): string {
  if (typeof value === 'boolean') return value ? '1' : '0';
  return String(value).trim();
}

/** Spellings a boolean may take in an allowed-values list. */
const BOOLEAN_SPELLINGS: Record<'true' | 'false', readonly string[]> = {
  true: ['1', 'ON', 'TRUE'],
  false: ['0', 'OFF', 'FALSE'],
};

function valueAllowed(value: ParameterValue, allowed: readonly string[]): boolean {
  const upper = allowed.map((a) => a.toUpperCase());
  if (typeof value === 'boolean') return BOOLEAN_SPELLINGS[value ? 'true' : 'false'].some((s) => upper.includes(s));
  return upper.includes(asParameterText(value).toUpperCase());
}

/** RDS evaluates formula values per instance, so they get no static range check. */
const isFormula = (text: string) => /^\{.*\}$/.test(text);

function outOfRange(value: ParameterValue, range: { min: string; max: string }): string | undefined {
  const text = asParameterText(value);
  if (isFormula(text)) return undefined;
  if (!/^-?[0-9]+$/.test(text))
    return `value ${JSON.stringify(value)} is not an integer (AWS publishes the range ${range.min}–${range.max})`;
  const n = BigInt(text);
  if (n < BigInt(range.min) || n > BigInt(range.max))
    return `value ${text} is outside the range ${range.min}–${range.max} AWS publishes`;
  return undefined;
}

function otherLevel(level: ParameterLevel): ParameterLevel {
  return level === 'cluster' ? 'instance' : 'cluster';
}

function unknownReason(version: AuroraVersion, name: string): string {
  const major = majorOf(version);
  const na = CATALOGUE.majors[String(major) as '2' | '3'].notApplicable[name];
  if (na !== undefined)
    return (
      `does not apply to Aurora MySQL ${major}: AWS lists it among the "MySQL parameters that don't apply ` +
      `to Aurora MySQL"${na ? ` (${na})` : ''}`
    );
  const other = major === 2 ? 3 : 2;
  const otherEntry = CATALOGUE.majors[String(other) as '2' | '3'].parameters[name];
  if (otherEntry) {
    const renamed =
      otherEntry.otherName && CATALOGUE.majors[String(major) as '2' | '3'].parameters[otherEntry.otherName]
        ? `; Aurora MySQL ${major} calls it ${otherEntry.otherName}`
        : '';
    return `unknown to Aurora MySQL ${major}: it exists only in Aurora MySQL ${other}${renamed}`;
  }
  const params = CATALOGUE.majors[String(major) as '2' | '3'].parameters;
  const spelled = [name.replace(/-/g, '_'), name.replace(/_/g, '-'), name.toLowerCase()].find(
    (alt) => alt !== name && params[alt],
  );
  if (spelled) return `unknown to Aurora MySQL ${major} as written: the parameter is spelled "${spelled}"`;
  return `unknown to Aurora MySQL ${major}: not a parameter in AWS's Aurora MySQL parameter reference`;
}

/**
 * Every parameter of `params` that RDS would refuse at `level` on `engineVersion`, with why.
 * Empty when all are accepted.
 * An engine version aurora-bench cannot parse yields one problem named "engine.version".
 */
export function parameterProblems(
  engineVersion: string,
  level: ParameterLevel,
  params: Readonly<Record<string, ParameterValue>>,
): ParameterProblem[] {
  let version: AuroraVersion;
  try {
    version = parseAuroraVersion(engineVersion);
  } catch (e) {
    if (e instanceof EngineVersionError) return [{ name: 'engine.version', reason: e.message }];
    throw e;
  }
  const major = majorOf(version);
  const problems: ParameterProblem[] = [];
  for (const [name, value] of Object.entries(params)) {
    const info = lookupParameter(engineVersion, name);
    if (!info) {
      problems.push({ name, reason: unknownReason(version, name) });
      continue;
    }
    if (info.minVersion && compareVersions(version.aurora, info.minVersion.split('.').map(Number)) < 0) {
      problems.push({
        name,
        reason:
          `needs Aurora MySQL ${info.minVersion} or higher; the engine ` +
          `is ${version.aurora.map((n, i) => (i === 1 ? String(n).padStart(2, '0') : String(n))).join('.')}`,
      });
      continue;
    }
    // Each instance inherits the cluster parameter group's instance-level defaults.
    // A value in the DB parameter group overrides them.
    // See Aurora User Guide, "DB cluster parameter groups for Amazon Aurora DB clusters".
    // So an instance-level parameter may be set for every instance in clusterParameters.
    // A cluster-level one never goes in instanceParameters, since DB parameter groups hold none.
    const here = info[level] ?? (level === 'cluster' ? info.instance : undefined);
    if (!here) {
      const there = info[otherLevel(level)]!;
      problems.push({
        name,
        reason:
          `${otherLevel(level)}-level only on Aurora MySQL ${major}: it belongs ` +
          `in ${otherLevel(level)}Parameters${there.modifiable === false ? ', where it is not modifiable either' : ''}`,
      });
      continue;
    }
    if (here.modifiable === false) {
      const atOther = info[otherLevel(level)];
      problems.push({
        name,
        reason:
          `not modifiable on Aurora MySQL ${major} at the ${info[level] ? level : 'instance'} ` +
          `level` +
          (atOther && atOther !== here && atOther.modifiable !== false
            ? ` (it is modifiable at the ${otherLevel(level)} level: set it in ${otherLevel(level)}Parameters)`
            : '') +
          (here.note ? `: ${here.note}` : ''),
      });
      continue;
    }
    if (info.allowedValues && !valueAllowed(value, info.allowedValues)) {
      problems.push({
        name,
        reason:
          `value ${JSON.stringify(value)} is not allowed on Aurora MySQL ${major} (AWS ` +
          `lists ${info.allowedValues.join(', ')})`,
      });
      continue;
    }
    const rangeProblem = info.range ? outOfRange(value, info.range) : undefined;
    if (rangeProblem) {
      problems.push({ name, reason: rangeProblem });
      continue;
    }
    const req = info.requires;
    if (req && asParameterText(value) !== req.unlessValue) {
      const given = params[req.parameter];
      if (given === undefined || asParameterText(given) !== req.value) {
        problems.push({
          name,
          reason:
            `a value other than ${req.unlessValue} needs ${req.parameter}=${req.value} in the ` +
            `same ${level} parameters on Aurora MySQL ${major} (AWS: setting it acknowledges the risk of data loss)`,
        });
      }
    }
  }
  return problems;
}

/** Values RDS accepts that do not do what a reader of the spec may expect. They become plan warnings. */
export function parameterCaveats(
  engineVersion: string,
  params: Readonly<Record<string, ParameterValue>>,
): ParameterProblem[] {
  const caveats: ParameterProblem[] = [];
  for (const [name, value] of Object.entries(params)) {
    let info: AuroraParameterInfo | undefined;
    try {
      info = lookupParameter(engineVersion, name);
    } catch (e) {
      if (e instanceof EngineVersionError) return [];
      throw e;
    }
    const caveat = info?.caveats?.[asParameterText(value)];
    if (caveat) caveats.push({ name, reason: caveat });
  }
  return caveats;
}
