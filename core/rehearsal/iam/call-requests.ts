/**
 * What IAM authorizes for one SDK call: its actions, resource ARNs and request condition keys.
 * Resource types and ARN formats come from the Service Authorization Reference.
 * The call's input fills each format's variables. A type the input cannot fill is reported as `underived`.
 * An action with no resource type is authorized on "*", as the reference's Actions table says.
 */
import { actionDefinition, type IamDefinition } from './definition';
import type { RequestContext } from './conditions';

export interface IamRequest {
  readonly action: string;
  /** The resources to authorize, each an ARN or "*". */
  readonly resources: readonly string[];
  /** The required resource types that could not be derived from the input. */
  readonly underived: readonly string[];
  readonly context: RequestContext;
}

type Input = Readonly<Record<string, unknown>>;
const str = (v: unknown): string[] => (typeof v === 'string' && v !== '' ? [v] : []);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
const each = (v: unknown, f: (x: Record<string, unknown>) => unknown): string[] =>
  Array.isArray(v) ? v.flatMap((x) => str(f(x as Record<string, unknown>))) : [];

/**
 * The values of an ARN format's variable in a call's input, by SDK v3 input member name.
 * A resource the call creates has no id before the call, so "*" stands for it.
 */
const INPUT_VALUES: Readonly<Record<string, (input: Input, action: string) => string[]>> = {
  BucketName: (i) => [...str(i['Bucket']), ...str(i['OutputS3BucketName'])],
  ObjectName: (i) => [
    ...str(i['Key']),
    ...each((i['Delete'] as { Objects?: unknown } | undefined)?.Objects, (o) => o['Key']),
  ],
  DbClusterInstanceName: (i) => str(i['DBClusterIdentifier']),
  DbInstanceName: (i) => str(i['DBInstanceIdentifier']),
  ClusterParameterGroupName: (i) => str(i['DBClusterParameterGroupName']),
  ParameterGroupName: (i) => str(i['DBParameterGroupName']),
  SubnetGroupName: (i) => str(i['DBSubnetGroupName']),
  InstanceId: (i, a) =>
    a === 'ec2:RunInstances'
      ? ['*']
      : [...strings(i['InstanceIds']), ...strings(i['Resources'])].filter((id) => /^(i|mi)-/.test(id)),
  VolumeId: (_i, a) => (a === 'ec2:RunInstances' ? ['*'] : []),
  NetworkInterfaceId: (_i, a) => (a === 'ec2:RunInstances' ? ['*'] : []),
  SecurityGroupId: (i) => strings(i['SecurityGroupIds']),
  SubnetId: (i) => str(i['SubnetId']),
  LaunchTemplateId: (i) => str((i['LaunchTemplate'] as { LaunchTemplateId?: unknown } | undefined)?.LaunchTemplateId),
  ImageId: (i) => str(i['ImageId']),
  DocumentName: (i) => str(i['DocumentName']),
  WorkGroupName: (i) => str(i['WorkGroup']),
  EventBusName: (i) =>
    Array.isArray(i['Entries'])
      ? i['Entries'].map((e: { EventBusName?: unknown }) =>
          typeof e.EventBusName === 'string' ? e.EventBusName : 'default',
        )
      : [],
  // A secret's ARN ends in its name, a hyphen and six characters Secrets Manager adds.
  // See Secrets Manager User Guide, "Secret ARNs".
  SecretId: (i) => {
    const id = str(i['SecretId'])[0] ?? str(i['Name'])[0];
    if (id === undefined) return [];
    return [id.startsWith('arn:') ? id.replace(/^.*:secret:/, '') : `${id}-??????`];
  },
  // Glue names a database or table in different members per API. See the Glue API Reference.
  DatabaseName: (i) => (i['DatabaseName'] !== undefined ? str(i['DatabaseName']) : str(i['Name'])),
  TableName: (i) => [
    ...str(i['TableName']),
    ...(i['DatabaseName'] !== undefined ? str(i['Name']) : []),
    ...str((i['TableInput'] as { Name?: unknown } | undefined)?.Name),
  ],
  ServiceCode: (i) => str(i['ServiceCode']),
  QuotaCode: (i) => str(i['QuotaCode']),
  ServiceType: (i) => str(i['ServiceType']).map((s) => s.toLowerCase()),
  Identifier: (i) => str(i['Identifier']),
  ParameterNameWithoutLeadingSlash: (i) =>
    Array.isArray(i['Names']) ? i['Names'].map((n) => String(n).replace(/^\//, '')) : [],
  // Service-linked roles sit under aws-service-role/<service principal>/.
  // See IAM User Guide, "Using service-linked roles".
  RoleNameWithPath: (i) =>
    str(i['RoleName']).map((n) => (n === 'AWSServiceRoleForRDS' ? `aws-service-role/rds.amazonaws.com/${n}` : n)),
};

/** Inputs that name their resource by its whole ARN. */
const ARN_MEMBERS = ['ResourceName', 'ResourceARN', 'TopicArn', 'executionArn', 'ResourceArn'] as const;

/** ARNs of AWS-owned resources, such as SSM documents and public parameters, have no account. */
function ownAccount(type: string, value: string, account: string): string {
  if (type === 'document' && /^AWS-/.test(value)) return '';
  if (type === 'parameter' && /^aws\/service\//.test(value)) return '';
  return account;
}

/**
 * The values of a variable that fit the resource type.
 * An i- id is an EC2 instance, and an mi- id an SSM managed instance.
 * See Systems Manager User Guide, "Managed nodes".
 */
function valuesOf(type: string, name: string, input: Input, action: string): string[] {
  const values = INPUT_VALUES[name]?.(input, action) ?? [];
  if (name !== 'InstanceId' || values.includes('*')) return values;
  return values.filter((v) => (type === 'managed-instance' ? v.startsWith('mi-') : v.startsWith('i-')));
}

function fill(format: string, type: string, input: Input, action: string, where: Where): string[] | undefined {
  const names = [...format.matchAll(/\$\{(\w+)\}/g)]
    .map((m) => m[1]!)
    .filter((n) => !['Partition', 'Region', 'Account'].includes(n));
  let arns = [format.replace('${Partition}', where.partition).replace('${Region}', where.region)];
  for (const name of names) {
    const values = valuesOf(type, name, input, action);
    if (values.length === 0) return undefined;
    arns = arns.flatMap((a) =>
      values.map((v) => a.replace(`\${${name}}`, v).replace('${Account}', ownAccount(type, v, where.account))),
    );
  }
  return arns.map((a) => a.replace('${Account}', where.account));
}

interface Where {
  readonly partition: string;
  readonly region: string;
  readonly account: string;
}

/** The request's own condition keys: its tags and what the roles test. */
function requestContext(input: Input, where: Where): Record<string, string | string[]> {
  const tags: { Key?: unknown; Value?: unknown }[] = [
    ...((Array.isArray(input['Tags']) ? input['Tags'] : []) as { Key?: unknown; Value?: unknown }[]),
    ...((Array.isArray(input['TagSpecifications']) ? input['TagSpecifications'] : []) as { Tags?: unknown }[]).flatMap(
      (t) => (Array.isArray(t.Tags) ? (t.Tags as { Key?: unknown; Value?: unknown }[]) : []),
    ),
  ];
  const context: Record<string, string | string[]> = {
    'aws:RequestedRegion': where.region,
    'aws:SecureTransport': 'true',
    'aws:ViaAWSService': 'false',
  };
  for (const t of tags)
    if (typeof t.Key === 'string') context[`aws:RequestTag/${t.Key}`] = typeof t.Value === 'string' ? t.Value : '';
  if (tags.length > 0) context['aws:TagKeys'] = [...new Set(tags.map((t) => String(t.Key)))];
  if (typeof input['Namespace'] === 'string') context['cloudwatch:namespace'] = input['Namespace'];
  if (typeof input['Prefix'] === 'string') context['s3:prefix'] = input['Prefix'];
  if (typeof input['AWSServiceName'] === 'string') context['iam:AWSServiceName'] = input['AWSServiceName'];
  return context;
}

/** The request IAM authorizes for `action` with `input`, or undefined when the reference has no such action. */
export function iamRequest(
  definition: IamDefinition,
  action: string,
  input: Input,
  where: Where,
): IamRequest | undefined {
  const def = actionDefinition(definition, action);
  if (def === undefined) return undefined;
  const typed = def.resourceTypes.filter((t) => t.type !== '' && t.arn !== undefined);
  const context = requestContext(input, where);
  const named = ARN_MEMBERS.flatMap((m) => str(input[m]));
  if (typed.length === 0) return { action, resources: ['*'], underived: [], context };
  if (named.length > 0) return { action, resources: named, underived: [], context };
  const resources: string[] = [];
  const underived: string[] = [];
  for (const t of typed) {
    const arns = fill(t.arn!, t.type, input, action, where);
    if (arns !== undefined) resources.push(...arns);
    else if (t.required) underived.push(t.type);
  }
  if (resources.length === 0 && underived.length === 0) resources.push('*');
  return { action, resources: [...new Set(resources)], underived, context };
}
