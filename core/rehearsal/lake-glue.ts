/**
 * The lake's Glue database and tables as the synthesized stack creates them, created in moto.
 * So the rehearsal's Athena reads what AWS's would.
 * CloudFormation's TableInput has Glue's CreateTable member names, so it goes as the template has it.
 * See CloudFormation User Guide, "AWS::Glue::Table TableInput", and botocore glue service-2.json TableInput.
 */

interface TemplateResource {
  readonly Type: string;
  readonly Properties?: Record<string, unknown>;
}
export interface LakeTemplate {
  readonly Resources: Readonly<Record<string, TemplateResource>>;
}

export interface LakeGlueTarget {
  readonly endpoint: string;
  readonly region: string;
  readonly bucket: string;
  /** The lake's key prefix in the bucket, '' or ending in '/'. The tables' locations move under it. */
  readonly lakePrefix: string;
  /** The Glue database the rehearsal's functions query. */
  readonly database: string;
  /**
   * The projected dates' range, in place of the template's when given.
   * Athena lists each projected day's prefix on every query without a date filter.
   * See Athena User Guide, "Partition projection with Amazon Athena".
   * The deployed range spans years, and on moto's S3 a thousand days cost 20 s a query.
   * A rehearsal's lake holds only its own days.
   */
  readonly projectionRange?: string;
}

/** A CloudFormation value with its Ref and Fn::Join resolved. Anything else fails. */
function resolve(value: unknown, refs: ReadonlyMap<string, string>): unknown {
  if (Array.isArray(value)) return value.map((v) => resolve(v, refs));
  if (value === null || typeof value !== 'object') return value;
  const o = value as Record<string, unknown>;
  if (typeof o['Ref'] === 'string') {
    const ref = refs.get(o['Ref']);
    if (ref === undefined) throw new Error(`the lake's Glue tables reference ${o['Ref']}, which the rehearsal lacks`);
    return ref;
  }
  const join = o['Fn::Join'] as [string, unknown[]] | undefined;
  if (join) return (resolve(join[1], refs) as unknown[]).map(String).join(join[0]);
  const keys = Object.keys(o);
  if (keys.some((k) => k.startsWith('Fn::')))
    throw new Error(`the lake's Glue tables use ${keys.join(', ')}, which the rehearsal does not resolve`);
  return Object.fromEntries(keys.map((k) => [k, resolve(o[k], refs)]));
}

/** Moves s3://<bucket>/<key> under the lake prefix, since the deployed stack's lake is at the bucket's root. */
function underPrefix(text: string, t: LakeGlueTarget): string {
  const root = `s3://${t.bucket}/`;
  return text.startsWith(root) ? `${root}${t.lakePrefix}${text.slice(root.length)}` : text;
}

/** The template's Glue tables, as Glue CreateTable TableInputs for the rehearsal's bucket and prefix. */
function lakeTableInputs(template: LakeTemplate, t: LakeGlueTarget): Record<string, unknown>[] {
  const resources = Object.entries(template.Resources);
  const refs = new Map<string, string>([
    ['AWS::Region', t.region],
    ['AWS::Partition', 'aws'],
    ['AWS::AccountId', '123456789012'],
    ['AWS::URLSuffix', 'amazonaws.com'],
  ]);
  for (const [id, r] of resources) {
    if (r.Type === 'AWS::S3::Bucket') refs.set(id, t.bucket);
    if (r.Type === 'AWS::Glue::Database') refs.set(id, t.database);
  }
  const tables = resources.filter(([, r]) => r.Type === 'AWS::Glue::Table');
  if (tables.length === 0) throw new Error('the synthesized template has no AWS::Glue::Table');
  return tables.map(([, r]) => {
    const input = resolve(r.Properties?.['TableInput'], refs) as Record<string, unknown>;
    const sd = input['StorageDescriptor'] as Record<string, unknown>;
    const parameters = Object.fromEntries(
      Object.entries((input['Parameters'] ?? {}) as Record<string, string>).map(([k, v]) => [
        k,
        t.projectionRange !== undefined && /^projection\.\w+\.range$/.test(k) ? t.projectionRange : underPrefix(v, t),
      ]),
    );
    return {
      ...input,
      Parameters: parameters,
      StorageDescriptor: { ...sd, Location: underPrefix(String(sd['Location']), t) },
    };
  });
}

/** One Glue call on moto. moto checks no signature, but the scope names service and region. */
async function glueCall(t: LakeGlueTarget, operation: string, body: unknown): Promise<void> {
  const res = await fetch(t.endpoint, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-amz-json-1.1',
      'X-Amz-Target': `AWSGlue.${operation}`,
      Authorization:
        `AWS4-HMAC-SHA256 Credential=rehearsal/20260101/${t.region}/glue/aws4_request, ` +
        'SignedHeaders=host, Signature=0',
    },
    body: JSON.stringify(body),
  });
  if (res.ok) return;
  const text = await res.text();
  if (/AlreadyExistsException/.test(text)) return;
  throw new Error(`moto Glue ${operation}: ${res.status} ${text.slice(0, 300)}`);
}

/** Creates the database and the template's tables in moto's Glue, leaving any that exist. */
export async function createLakeGlue(template: LakeTemplate, t: LakeGlueTarget): Promise<void> {
  await glueCall(t, 'CreateDatabase', { DatabaseInput: { Name: t.database } });
  for (const input of lakeTableInputs(template, t))
    await glueCall(t, 'CreateTable', { DatabaseName: t.database, TableInput: input });
}
