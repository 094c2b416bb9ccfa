/**
 * Whether RDS takes a parameter value, judged from what RDS itself says about the parameter: the
 * `DataType` and `AllowedValues` of a `Parameter` in DescribeEngineDefaultClusterParameters /
 * DescribeEngineDefaultParameters (botocore rds/2014-10-31 service-2.json, shape "Parameter":
 * "AllowedValues: Specifies the valid range of values for the parameter").
 *
 * AllowedValues is a comma-separated list whose items are literals ("0,1", "INNODB,MYISAM", a
 * cipher list) or inclusive numeric ranges "min-max" ("8192-536870912"), as the Aurora User Guide's
 * DescribeDBClusterParameters output shows (USER_WorkingWithDBClusterParamGroups.md,
 * AuroraMySQL.Security.md). DataType is "boolean", "integer", "string", "list" (a comma-separated
 * subset of the literals), or a numeric type ("float", "double", "long").
 *
 * Integer and boolean values may be formulas ("{DBInstanceClassMemory*3/4}"), log expressions
 * ("{log(DBInstanceClassMemory/8187281418)*1000}") or functions (IF, GREATEST, LEAST, SUM) that RDS
 * evaluates per instance (Aurora User Guide, "Specifying DB parameters", USER_ParamValuesRef.md):
 * their result depends on the instance class, so they are accepted without a range check.
 */

export interface RdsParameterRule {
  readonly DataType?: string;
  readonly AllowedValues?: string;
}

interface NumericRange {
  readonly min: string;
  readonly max: string;
}

export interface ParsedAllowedValues {
  readonly literals: readonly string[];
  readonly ranges: readonly NumericRange[];
}

const NUMBER = /^-?\d+(\.\d+)?$/;
const RANGE = /^(-?\d+(?:\.\d+)?)-(-?\d+(?:\.\d+)?)$/;

export function parseAllowedValues(allowed: string | undefined): ParsedAllowedValues {
  const literals: string[] = [];
  const ranges: NumericRange[] = [];
  for (const raw of (allowed ?? '').split(',')) {
    const item = raw.trim();
    if (item === '') continue;
    const range = RANGE.exec(item);
    if (range) ranges.push({ min: range[1]!, max: range[2]! });
    else literals.push(item);
  }
  return { literals, ranges };
}

/** a <= b for decimal strings; exact for integers of any size (BigInt), doubles otherwise. */
function lessOrEqual(a: string, b: string): boolean {
  if (/^-?\d+$/.test(a) && /^-?\d+$/.test(b)) return BigInt(a) <= BigInt(b);
  return Number(a) <= Number(b);
}

function inRange(value: string, r: NumericRange): boolean {
  return lessOrEqual(r.min, value) && lessOrEqual(value, r.max);
}

/**
 * A formula, log expression or function RDS evaluates per instance (USER_ParamValuesRef.md).
 * @internal exported for its tests (a test seam)
 */
export function isRdsExpression(value: string): boolean {
  const v = value.trim();
  return /^\{.*\}$/.test(v) || /^(IF|GREATEST|LEAST|SUM)\s*\(.*\)$/i.test(v);
}

function describeAllowed(parsed: ParsedAllowedValues): string {
  return [...parsed.ranges.map((r) => `${r.min} to ${r.max}`), ...parsed.literals.map((l) => `"${l}"`)].join(', ');
}

/**
 * Why RDS would refuse this value for this parameter, or undefined when it fits. `value` is the
 * string the backend sends (booleans already 1/0).
 */
export function valueProblem(value: string, rule: RdsParameterRule): string | undefined {
  const type = (rule.DataType ?? 'string').toLowerCase();
  const allowed = parseAllowedValues(rule.AllowedValues);
  const numericType = ['integer', 'long', 'float', 'double', 'boolean'].includes(type);
  if (numericType && isRdsExpression(value)) return undefined;
  if ((type === 'integer' || type === 'long') && !/^-?\d+$/.test(value.trim()))
    return `"${value}" is not an integer (DataType ${type})`;
  if ((type === 'float' || type === 'double') && !NUMBER.test(value.trim()))
    return `"${value}" is not a number (DataType ${type})`;
  if (allowed.literals.length === 0 && allowed.ranges.length === 0) return undefined;

  const fits = (item: string): boolean => {
    const v = item.trim();
    if (allowed.literals.some((l) => l.toLowerCase() === v.toLowerCase())) return true;
    return NUMBER.test(v) && allowed.ranges.some((r) => inRange(v, r));
  };
  if (type === 'list') {
    const bad = value
      .split(',')
      .map((i) => i.trim())
      .filter((i) => i !== '' && !fits(i));
    return bad.length === 0
      ? undefined
      : `${bad.map((b) => `"${b}"`).join(', ')} not among the allowed values (${describeAllowed(allowed)})`;
  }
  return fits(value) ? undefined : `"${value}" is not allowed (allowed: ${describeAllowed(allowed)})`;
}
