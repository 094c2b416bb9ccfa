/**
 * A function's role statements as IAM would hold them once the stack is deployed.
 * Each CloudFormation reference resolves to the rehearsal's account, Region and resources.
 * A reference's resource is what the rehearsal gives the variable the template sets from it.
 * A reference without a value stays a marker no ARN matches, so what depends on it is visibly denied.
 */
import type { PolicyStatement } from './authorize';

/** Ref values by logical id and pseudo parameter, and Fn::GetAtt values by "<id>.<attribute>". */
export type References = ReadonlyMap<string, string>;

/**
 * The references an environment's template values stand for, read off the rehearsal's values.
 * A Ref or Fn::GetAtt is the whole value. A Fn::Join's references stand between its literal parts.
 */
export function referencesOf(
  template: Readonly<Record<string, unknown>>,
  actual: Readonly<Record<string, string>>,
  region: string,
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
    if (join) for (const [k, v] of joinReferences(join, got, region)) refs.set(k, v);
  }
  return refs;
}

// JSON allows it in a string, and no name holds it.
const MARK = '~~';

/**
 * The references of a Fn::Join read off its value.
 * Its Fn::Select of Fn::GetAZs is the Region's AZ of that index, since Fn::GetAZs sorts them alphabetically.
 * A JSON object value is read key by key, as the rehearsal may give more entries than the stack has.
 */
function joinReferences([sep, parts]: [string, unknown[]], got: string, region: string): Map<string, string> {
  const refs = new Map<string, string>();
  const rendered = parts.map((p) => {
    if (typeof p === 'string') return p;
    const select = (p as { 'Fn::Select'?: [number, unknown] })['Fn::Select'];
    if (select && typeof select[1] === 'object' && select[1] !== null && 'Fn::GetAZs' in select[1])
      return `${region}${String.fromCharCode(97 + select[0])}`;
    return `${MARK}${referenceName(p) ?? ''}${MARK}`;
  });
  const text = rendered.join(sep);
  try {
    const shape = JSON.parse(text) as Record<string, unknown>;
    const value = JSON.parse(got) as Record<string, unknown>;
    for (const [k, v] of Object.entries(shape)) {
      const m = typeof v === 'string' ? new RegExp(`^${MARK}(.+)${MARK}$`).exec(v) : null;
      if (m && typeof value[k] === 'string') refs.set(m[1]!, value[k]);
    }
    return refs;
  } catch {
    // Not JSON, so matched as text below.
  }
  const names: string[] = [];
  const pattern = text
    .split(MARK)
    .map((piece, i) => {
      if (i % 2 === 0) return piece.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      names.push(piece);
      return '(.*?)';
    })
    .join('');
  const m = new RegExp(`^${pattern}$`, 's').exec(got);
  if (m) names.forEach((n, i) => n !== '' && refs.set(n, m[i + 1]!));
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
