/**
 * Whether RDS takes a parameter value, judged from the DataType and AllowedValues RDS reports for it.
 * See botocore rds/2014-10-31, shape "Parameter", and the Aurora User Guide's DescribeDBClusterParameters output.
 * AllowedValues lists literals and inclusive "min-max" ranges, separated by commas.
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

/** a <= b for decimal strings. BigInt keeps integers of any size exact. */
function lessOrEqual(a: string, b: string): boolean {
  if (/^-?\d+$/.test(a) && /^-?\d+$/.test(b)) return BigInt(a) <= BigInt(b);
  return Number(a) <= Number(b);
}

function inRange(value: string, r: NumericRange): boolean {
  return lessOrEqual(r.min, value) && lessOrEqual(value, r.max);
}

/**
 * A formula, log expression or function that RDS evaluates per instance.
 * Its result depends on the instance class, so it gets no range check.
 * See AWS, Aurora User Guide, "Specifying DB parameters".
 * @internal exported for its tests
 */
export function isRdsExpression(value: string): boolean {
  const v = value.trim();
  return /^\{.*\}$/.test(v) || /^(IF|GREATEST|LEAST|SUM)\s*\(.*\)$/i.test(v);
}

function describeAllowed(parsed: ParsedAllowedValues): string {
  return [...parsed.ranges.map((r) => `${r.min} to ${r.max}`), ...parsed.literals.map((l) => `"${l}"`)].join(', ');
}

/**
 * Why RDS would refuse this value for this parameter, or undefined when it fits.
 * `value` is the string the backend sends, with booleans already 1 or 0.
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
