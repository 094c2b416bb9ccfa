/**
 * What AWS actions code can call, derived from the code itself, and whether a role's policy
 * statements allow them:
 *  - a Lambda entry is bundled with esbuild (as NodejsFunction bundles it, @aws-sdk external): only
 *    the modules its imports reach, tree-shaken, remain; every `<client import>.<Name>Command` left
 *    in the bundle is an API operation it can send;
 *  - a shell script's `aws <service> <command>` lines are the AWS CLI calls a client makes.
 * Each operation maps to its IAM action (Service Authorization Reference: service prefix, and for S3
 * the action each API needs, which is often not the API's name).
 */
import { join, relative } from 'node:path';
import { build } from 'esbuild';
import { actionsOfOperation, SDK_PACKAGES } from '../../core/rehearsal/iam/sdk-actions';

/** The checkout: module paths in the bundles' metafiles are relative to it. */
const PROJECT_ROOT = join(__dirname, '..', '..');

/**
 * Actions a service performs with the caller's permissions when the code calls an operation
 * (they appear nowhere in the code):
 *  - rds:CreateDBCluster with ManageMasterUserPassword: kms:DescribeKey, secretsmanager:CreateSecret,
 *    secretsmanager:TagResource (Aurora User Guide, "Password management with Amazon Aurora and AWS
 *    Secrets Manager", Permissions required); an account's first cluster: iam:CreateServiceLinkedRole
 *    (Aurora User Guide, "Using service-linked roles for Amazon Aurora");
 *  - rds:CreateDBInstance with ManageMasterUserPassword (an RDS for MySQL, MariaDB or PostgreSQL
 *    source instance): the same kms:DescribeKey, secretsmanager:CreateSecret, secretsmanager:TagResource
 *    (RDS User Guide, "Password management with Amazon RDS and AWS Secrets Manager", Permissions required);
 *  - RDS Create* with Tags: rds:AddTagsToResource (Service Authorization Reference, dependent action);
 *  - ec2:RunInstances with TagSpecifications: ec2:CreateTags (EC2 User Guide, "Grant permission to tag
 *    resources during creation"); with an instance profile: iam:PassRole (EC2 User Guide, "IAM roles
 *    for Amazon EC2"); from a launch template whose image is resolve:ssm:...: ssm:GetParameters
 *    ("Anyone who uses the launch template also needs the ssm:GetParameters permission", EC2 Auto
 *    Scaling User Guide, "Use AWS Systems Manager parameters instead of AMI IDs in launch templates");
 *  - athena:StartQueryExecution: Athena reads the Glue catalog and locates the S3 bucket with the
 *    caller's permissions (Athena User Guide, "Configure access to databases and tables in the AWS
 *    Glue Data Catalog", "Control access to Amazon S3 from Athena").
 */
const DEPENDENT_ACTIONS: Readonly<Record<string, readonly string[]>> = {
  'rds:CreateDBCluster': [
    'kms:DescribeKey',
    'secretsmanager:CreateSecret',
    'secretsmanager:TagResource',
    'iam:CreateServiceLinkedRole',
    'rds:AddTagsToResource',
  ],
  'rds:CreateDBInstance': [
    'kms:DescribeKey',
    'secretsmanager:CreateSecret',
    'secretsmanager:TagResource',
    'rds:AddTagsToResource',
  ],
  'rds:CreateDBInstanceReadReplica': ['rds:AddTagsToResource'],
  'rds:CreateDBClusterParameterGroup': ['rds:AddTagsToResource'],
  'rds:CreateDBParameterGroup': ['rds:AddTagsToResource'],
  'ec2:RunInstances': ['ec2:CreateTags', 'iam:PassRole', 'ssm:GetParameters'],
  // Secrets Manager CreateSecret with Tags also needs secretsmanager:TagResource (Service Authorization
  // Reference, AWS Secrets Manager: CreateSecret's dependent action; a self-managed cell's secret).
  'secretsmanager:CreateSecret': ['secretsmanager:TagResource'],
  // No glue:GetTables: the Athena User Guide's per-statement policies ("Configure access to databases
  // and tables in the AWS Glue Data Catalog", examples) grant it for SHOW TABLES and DROP DATABASE
  // only, and the lake lists no tables (CREATE TABLE there: GetDatabase, GetTable, CreateTable).
  // Reading a partitioned table, Athena engine v3 (Trino) also asks its Glue metastore for partitions by
  // name, glue:GetPartition and glue:BatchGetPartition (Trino 476's Glue metastore, as the rehearsal records
  // its calls: test/aws/athena-on-trino.test.ts).
  'athena:StartQueryExecution': [
    'glue:GetDatabase',
    'glue:GetTable',
    'glue:GetPartitions',
    'glue:GetPartition',
    'glue:BatchGetPartition',
    's3:GetBucketLocation',
  ],
};

/**
 * What Athena does with the caller's permissions for the statements a module of the bundle runs
 * (its SQL is text, not an SDK operation):
 *  - the lake reader's CREATE OR REPLACE VIEW (core/backends/aws/athena-lake.ts ensureViews) writes
 *    the catalog: glue:CreateTable, glue:UpdateTable ("For any non-delete Athena action on a
 *    resource, you must include access to the parent of that resource", Athena User Guide,
 *    "Configure access to databases and tables in the AWS Glue Data Catalog");
 *  - FinishRun's compaction (core/backends/aws/athena-compaction.ts): ALTER TABLE ADD PARTITION
 *    (Athena User Guide, "ALTER TABLE ADD PARTITION": glue:CreatePartition; and
 *    glue:BatchCreatePartition, glue:GetPartition) and UNLOAD, which writes with s3:PutObject.
 */
const DEPENDENT_ACTIONS_OF_MODULE: Readonly<Record<string, readonly string[]>> = {
  'core/backends/aws/athena-lake.ts': ['glue:CreateTable', 'glue:UpdateTable'],
  'core/backends/aws/athena-compaction.ts': [
    'glue:GetPartition',
    'glue:CreatePartition',
    'glue:BatchCreatePartition',
    's3:PutObject',
  ],
};

export interface CodeCall {
  /** e.g. rds:CreateDBCluster */
  readonly action: string;
  /** What in the code calls it, for messages. */
  readonly via: string;
  /** A concrete resource (rendered ARN) the call is made on, when the code fixes it. */
  readonly resource?: string;
}

/** The IAM actions of one SDK operation of a client package. */
function actionsOfSdkOperation(pkg: string, operation: string): string[] {
  const prefix = SDK_PACKAGES[pkg]?.prefix;
  if (prefix === undefined)
    throw new Error(
      `${pkg} has no IAM service prefix in SDK_PACKAGES (core/rehearsal/iam/sdk-actions.ts): add it from the ` +
        `Service Authorization Reference`,
    );
  const actions = actionsOfOperation(prefix, operation);
  if (actions === undefined)
    throw new Error(
      `S3 ${operation}: its IAM action is not in S3_OPERATION_ACTIONS (core/rehearsal/iam/sdk-actions.ts); S3 ` +
        `action names differ from API names, look it up`,
    );
  return [...actions];
}

/**
 * The SDK operations a Lambda entry can send: bundle it, then read which client packages it
 * requires and which `*Command` classes of them it uses. Paginators and waiters call operations
 * this cannot see, so they are refused.
 */
export async function sdkCallsOfEntry(entry: string): Promise<CodeCall[]> {
  const out = await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    write: false,
    minify: false,
    // As NodejsFunction bundles them (lib/workflow.ts): the SDK comes from the Lambda runtime.
    external: ['@aws-sdk/*', '@smithy/*', '@duckdb/node-api'],
    mainFields: ['module', 'main'],
    metafile: true,
    logLevel: 'silent',
    absWorkingDir: PROJECT_ROOT,
  });
  const text = out.outputFiles[0]!.text;
  const vars = new Map<string, string>();
  // `var import_client_rds = require(...)`, or a bare assignment inside a lazily initialised module
  // (esbuild's __esm wrappers for modules reached through import()).
  for (const m of text.matchAll(/\b(\w+) = (?:__toESM\()?require\("(@aws-sdk\/client-[a-z0-9-]+)"\)/g))
    vars.set(m[1]!, m[2]!);
  if (vars.size === 0 && /require\("@aws-sdk\/client-/.test(text))
    throw new Error(`${entry}: the bundle requires AWS SDK clients in a form this check does not recognise`);
  const calls = new Map<string, CodeCall>();
  for (const [name, pkg] of vars) {
    for (const m of text.matchAll(new RegExp(`\\b${name}\\.(\\w+)\\b`, 'g'))) {
      const member = m[1]!;
      if (/^(paginate|waitUntil|waitFor)/.test(member))
        throw new Error(
          `${entry}: ${pkg}.${member} calls operations this check cannot see; list them here or call the ` +
            `Commands directly`,
        );
      if (!member.endsWith('Command')) continue;
      const operation = member.slice(0, -'Command'.length);
      for (const action of actionsOfSdkOperation(pkg, operation))
        calls.set(action, { action, via: `${relative(process.cwd(), entry)}: ${pkg} ${member}` });
    }
  }
  for (const call of [...calls.values()]) {
    for (const dependent of DEPENDENT_ACTIONS[call.action] ?? []) {
      if (!calls.has(dependent))
        calls.set(dependent, {
          action: dependent,
          via: `${call.via} (done by the service with the caller's permission)`,
        });
    }
  }
  // The modules that put code into the bundle (after tree shaking): their statements' needs.
  const modules = Object.keys(Object.values(out.metafile.outputs)[0]!.inputs);
  for (const module of modules) {
    for (const dependent of DEPENDENT_ACTIONS_OF_MODULE[module] ?? []) {
      if (!calls.has(dependent))
        calls.set(dependent, {
          action: dependent,
          via: `${module}: the SQL it has Athena run (done with the caller's permission)`,
        });
    }
  }
  return [...calls.values()].sort((a, b) => a.action.localeCompare(b.action));
}

/** AWS CLI service names -> IAM prefixes for the `aws` calls of the client scripts. */
const CLI_SERVICE_PREFIX: Readonly<Record<string, string>> = {
  secretsmanager: 'secretsmanager',
  ssm: 'ssm',
  ec2: 'ec2',
  sts: 'sts',
  s3api: 's3',
};

/**
 * The AWS CLI calls in shell text: `aws s3 cp|sync|ls`, the high-level S3 commands (a copy may
 * download or upload: both actions; --recursive lists too), and `aws <service> <kebab-command>`.
 */
export function cliCallsOf(source: string, text: string): CodeCall[] {
  const calls = new Map<string, CodeCall>();
  const add = (action: string, line: string) =>
    calls.set(action, calls.get(action) ?? { action, via: `${source}: ${line.trim().slice(0, 120)}` });
  for (const line of text.split('\n')) {
    if (/^\s*#/.test(line)) continue;
    for (const m of line.matchAll(/(?:^|[\s;|&(`$])aws\s+([a-z0-9-]+)\s+([a-z0-9-]+)/g)) {
      const [service, command] = [m[1]!, m[2]!];
      if (service === 's3') {
        if (command === 'cp' || command === 'mv' || command === 'sync') {
          add('s3:GetObject', line);
          add('s3:PutObject', line);
          if (command === 'sync' || /--recursive/.test(line)) add('s3:ListBucket', line);
        } else if (command === 'ls') {
          add('s3:ListBucket', line);
        } else {
          throw new Error(
            `${source}: aws s3 ${command}: map this high-level S3 command to its IAM actions in ` +
              `test/helpers/iam-check.ts`,
          );
        }
        continue;
      }
      const prefix = CLI_SERVICE_PREFIX[service];
      if (prefix === undefined)
        throw new Error(
          `${source}: aws ${service} ${command}: add the CLI service's IAM prefix to CLI_SERVICE_PREFIX ` +
            `(test/helpers/iam-check.ts)`,
        );
      const operation = command
        .split('-')
        .map((w) => w[0]!.toUpperCase() + w.slice(1))
        .join('');
      add(`${prefix}:${operation}`, line);
    }
  }
  return [...calls.values()];
}

export interface PolicyStatementJson {
  readonly Sid?: string;
  readonly Effect: string;
  readonly Action: string | string[];
  readonly Resource: unknown;
  readonly Condition?: Record<string, Record<string, unknown>>;
}

function glob(pattern: string, value: string, ignoreCase: boolean): boolean {
  const re = new RegExp(
    `^${pattern
      .split('*')
      .map((p) =>
        p
          .split('?')
          .map((q) => q.replace(/[.+^${}()|[\]\\]/g, '\\$&'))
          .join('.'),
      )
      .join('.*')}$`,
    ignoreCase ? 'i' : '',
  );
  return re.test(value);
}

/**
 * Whether some Allow statement grants the call (IAM action names are case-insensitive; resources
 * are matched as rendered ARNs with * and ? wildcards) and no Deny statement matches it. Conditions
 * are not evaluated: test/cdk/stack.test.ts asserts them statement by statement.
 */
function isAllowed(
  statements: readonly PolicyStatementJson[],
  call: CodeCall,
  renderResource: (r: unknown) => string[],
): boolean {
  const matches = (s: PolicyStatementJson) => {
    const actions = Array.isArray(s.Action) ? s.Action : [s.Action];
    if (!actions.some((a) => glob(a, call.action, true))) return false;
    if (call.resource === undefined) return true;
    return renderResource(s.Resource).some((r) => glob(r, call.resource!, false));
  };
  if (statements.some((s) => s.Effect === 'Deny' && matches(s))) return false;
  return statements.some((s) => s.Effect === 'Allow' && matches(s));
}

/** The calls no statement allows, as lines for an assertion message. */
export function missingPermissions(
  statements: readonly PolicyStatementJson[],
  calls: readonly CodeCall[],
  renderResource: (r: unknown) => string[],
): string[] {
  return calls
    .filter((c) => !isAllowed(statements, c, renderResource))
    .map((c) => `${c.action}${c.resource ? ` on ${c.resource}` : ''} (${c.via})`);
}
