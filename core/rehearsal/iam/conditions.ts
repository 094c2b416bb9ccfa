/**
 * The Condition element of a policy statement against a request's context keys.
 * See IAM User Guide, "IAM JSON policy elements: Condition operators".
 * See also "Set operators for multivalued context keys".
 *  - Keys are case-insensitive. Values of one key are alternatives. Every key and operator must hold.
 *  - A missing key makes a positive operator false and a negated one true.
 *  - ...IfExists holds when the key is missing. Null tests whether the key is present.
 *  - ForAnyValue needs some request value to match. ForAllValues needs every one, and holds with none.
 * An operator this does not know fails loudly rather than guessing.
 */
import { wildcardMatch } from './wildcard';

/** Condition keys of the request, looked up case-insensitively. */
export type RequestContext = Readonly<Record<string, string | readonly string[]>>;

function lookup(context: RequestContext, key: string): readonly string[] | undefined {
  const k = Object.keys(context).find((c) => c.toLowerCase() === key.toLowerCase());
  if (k === undefined) return undefined;
  const v = context[k]!;
  return typeof v === 'string' ? [v] : v;
}

type Test = (policy: string, value: string) => boolean;

const numeric =
  (f: (a: number, b: number) => boolean): Test =>
  (p, v) =>
    f(Number(v), Number(p));

/** How one policy value tests one request value, and whether the operator is negated. */
const OPERATORS: Readonly<Record<string, { readonly test: Test; readonly negated: boolean }>> = {
  stringequals: { test: (p, v) => p === v, negated: false },
  stringnotequals: { test: (p, v) => p === v, negated: true },
  stringequalsignorecase: { test: (p, v) => p.toLowerCase() === v.toLowerCase(), negated: false },
  stringnotequalsignorecase: { test: (p, v) => p.toLowerCase() === v.toLowerCase(), negated: true },
  stringlike: { test: (p, v) => wildcardMatch(p, v, false), negated: false },
  stringnotlike: { test: (p, v) => wildcardMatch(p, v, false), negated: true },
  arnequals: { test: (p, v) => wildcardMatch(p, v, false), negated: false },
  arnlike: { test: (p, v) => wildcardMatch(p, v, false), negated: false },
  arnnotequals: { test: (p, v) => wildcardMatch(p, v, false), negated: true },
  arnnotlike: { test: (p, v) => wildcardMatch(p, v, false), negated: true },
  bool: { test: (p, v) => p.toLowerCase() === v.toLowerCase(), negated: false },
  numericequals: { test: numeric((a, b) => a === b), negated: false },
  numericnotequals: { test: numeric((a, b) => a === b), negated: true },
  numericlessthan: { test: numeric((a, b) => a < b), negated: false },
  numericlessthanequals: { test: numeric((a, b) => a <= b), negated: false },
  numericgreaterthan: { test: numeric((a, b) => a > b), negated: false },
  numericgreaterthanequals: { test: numeric((a, b) => a >= b), negated: false },
};

function keyHolds(operator: string, key: string, policyValues: readonly string[], context: RequestContext): boolean {
  let op = operator.toLowerCase();
  const values = lookup(context, key);
  if (op === 'null') return policyValues.some((p) => (p.toLowerCase() === 'true') === (values === undefined));
  let set: 'any' | 'all' | undefined;
  if (op.startsWith('foranyvalue:')) [set, op] = ['any', op.slice('foranyvalue:'.length)];
  else if (op.startsWith('forallvalues:')) [set, op] = ['all', op.slice('forallvalues:'.length)];
  const ifExists = op.endsWith('ifexists');
  if (ifExists) op = op.slice(0, -'ifexists'.length);
  const base = OPERATORS[op];
  if (base === undefined) throw new Error(`IAM condition operator ${operator} is not evaluated by the rehearsal`);
  const hit = (v: string) => policyValues.some((p) => base.test(p, v));
  if (set === 'all') return (values ?? []).every((v) => (base.negated ? !hit(v) : hit(v)));
  if (values === undefined) return ifExists || (set === undefined && base.negated);
  const any = values.some(hit);
  return base.negated ? !any : any;
}

export function conditionHolds(
  condition: Readonly<Record<string, Readonly<Record<string, unknown>>>> | undefined,
  context: RequestContext,
): boolean {
  for (const [operator, byKey] of Object.entries(condition ?? {})) {
    for (const [key, raw] of Object.entries(byKey)) {
      const policyValues = (Array.isArray(raw) ? raw : [raw]).map(String);
      if (!keyHolds(operator, key, policyValues, context)) return false;
    }
  }
  return true;
}
