/**
 * A function's role statements as IAM would hold them once the stack is deployed: each CloudFormation
 * reference in them (Ref, Fn::GetAtt, Fn::Join, Fn::Sub's ${...}) resolved to the rehearsal's account,
 * Region and resources. The rehearsal's resource of a reference is the value the rehearsal gives the
 * environment variable the template sets from the same reference (referencesOf). A reference the
 * rehearsal has no value for stays an unresolved marker no request ARN matches: what depends on it
 * is denied, visibly.
 */
import type { PolicyStatement } from './authorize';

/** Ref values by logical id (and pseudo parameter); Fn::GetAtt values by "<id>.<attribute>". */
export type References = ReadonlyMap<string, string>;

/**
 * The references an environment's template values stand for, read off the values the rehearsal
 * gives those variables: a Ref or Fn::GetAtt is the whole value; a Fn::Join's references are what
 * stands between its literal parts.
 */
export function referencesOf(
  template: Readonly<Record<string, unknown>>,
  actual: Readonly<Record<string, string>>,
): Map<string, string> {
  const refs = new Map<string, string>();
  for (const [name, value] of Object.entries(template)) {
    const got = actual[name];
    if (got === undefined || typeof value !== 'object' || value === null) continue;
    const single = referenceName(value);
    if (single !== undefined) {
      refs.set(single, got);
      continue;
    }
    const join = (value as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join'];
    if (!join) continue;
    const [sep, parts] = join;
    const names: (string | undefined)[] = [];
    const pattern = parts
      .map((p) => {
        if (typeof p === 'string') return p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
        names.push(referenceName(p));
        return '(.*?)';
      })
      .join(sep.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    const m = new RegExp(`^${pattern}$`, 's').exec(got);
    if (!m) continue;
    names.forEach((n, i) => n !== undefined && refs.set(n, m[i + 1]!));
  }
  return refs;
}

function referenceName(v: unknown): string | undefined {
  const o = v as { Ref?: unknown; 'Fn::GetAtt'?: unknown };
  if (typeof o.Ref === 'string') return o.Ref;
  const att = o['Fn::GetAtt'];
  if (Array.isArray(att)) return att.join('.');
  return undefined;
}

function resolve(v: unknown, refs: References): unknown {
  if (Array.isArray(v)) return v.map((x) => resolve(x, refs));
  if (v === null || typeof v !== 'object') return v;
  const o = v as Record<string, unknown>;
  const name = referenceName(o);
  if (name !== undefined) return refs.get(name) ?? `<unresolved ${name}>`;
  if ('Fn::Join' in o) {
    const [sep, parts] = o['Fn::Join'] as [string, unknown[]];
    return parts.map((p) => String(resolve(p, refs))).join(sep);
  }
  if ('Fn::Sub' in o && typeof o['Fn::Sub'] === 'string')
    return o['Fn::Sub'].replace(/\$\{([^}!]+)\}/g, (_m, n: string) => refs.get(n) ?? `<unresolved ${n}>`);
  return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, resolve(x, refs)]));
}

/** The statements with their references resolved, the pseudo parameters given by `pseudo`. */
export function resolveStatements(
  statements: readonly Record<string, unknown>[],
  refs: References,
  pseudo: { readonly partition: string; readonly region: string; readonly account: string },
): PolicyStatement[] {
  const all = new Map(refs);
  all.set('AWS::Partition', pseudo.partition);
  all.set('AWS::Region', pseudo.region);
  all.set('AWS::AccountId', pseudo.account);
  all.set('AWS::URLSuffix', 'amazonaws.com');
  return statements.map((s) => resolve(s, all) as PolicyStatement);
}
