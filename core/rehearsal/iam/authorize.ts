/**
 * IAM's evaluation of identity-based policy statements for one request.
 * See IAM User Guide, "Policy evaluation logic".
 * An explicit Deny wins, else an Allow grants, else the request is implicitly denied.
 * The statement elements follow "IAM JSON policy element reference".
 * Actions match case-insensitively and resources case-sensitively, both with wildcards.
 * Statements here are plain JSON with their CloudFormation references already resolved.
 */
import { conditionHolds, type RequestContext } from './conditions';
import { wildcardMatch } from './wildcard';

export interface PolicyStatement {
  readonly Sid?: string;
  readonly Effect: string;
  readonly Action?: string | readonly string[];
  readonly NotAction?: string | readonly string[];
  readonly Resource?: string | readonly string[];
  readonly NotResource?: string | readonly string[];
  readonly Condition?: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
}

export type Authorization =
  { readonly allowed: true; readonly statement: string } | { readonly allowed: false; readonly reason: string };

const list = (v: string | readonly string[] | undefined): readonly string[] =>
  v === undefined ? [] : typeof v === 'string' ? [v] : v;

function appliesTo(s: PolicyStatement, action: string, resource: string): boolean {
  const actionHit = (patterns: readonly string[]) => patterns.some((p) => wildcardMatch(p, action, true));
  if (s.Action !== undefined) {
    if (!actionHit(list(s.Action))) return false;
  } else if (s.NotAction !== undefined) {
    if (actionHit(list(s.NotAction))) return false;
  } else return false;
  const resourceHit = (patterns: readonly string[]) => patterns.some((p) => wildcardMatch(p, resource, false));
  if (s.Resource !== undefined) return resourceHit(list(s.Resource));
  if (s.NotResource !== undefined) return !resourceHit(list(s.NotResource));
  return false;
}

function name(s: PolicyStatement, i: number): string {
  return s.Sid !== undefined && s.Sid !== '' ? s.Sid : `statement ${i + 1}`;
}

/**
 * Whether the statements allow `action` on `resource` given the request's condition keys.
 * Pass '*' for an action that has no resource type.
 */
export function authorize(
  statements: readonly PolicyStatement[],
  action: string,
  resource: string,
  context: RequestContext,
): Authorization {
  const matching = statements
    .map((s, i) => ({ s, i }))
    .filter(({ s }) => appliesTo(s, action, resource) && conditionHolds(s.Condition, context));
  const deny = matching.find(({ s }) => s.Effect === 'Deny');
  if (deny)
    return { allowed: false, reason: `with an explicit deny in an identity-based policy (${name(deny.s, deny.i)})` };
  const allow = matching.find(({ s }) => s.Effect === 'Allow');
  if (allow) return { allowed: true, statement: name(allow.s, allow.i) };
  return { allowed: false, reason: `because no identity-based policy allows the ${action} action` };
}

/** The condition keys the statements that could grant or deny `action` on `resource` test. */
export function conditionKeysFor(statements: readonly PolicyStatement[], action: string, resource: string): string[] {
  const keys = new Set<string>();
  for (const s of statements) {
    if (!appliesTo(s, action, resource)) continue;
    for (const byKey of Object.values(s.Condition ?? {})) for (const k of Object.keys(byKey)) keys.add(k);
  }
  return [...keys];
}
