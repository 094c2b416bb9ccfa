/**
 * One synthesized app per test file: building the stack (and NodejsFunction asset staging) takes a
 * few seconds, so files build it once in beforeAll. Bundling is skipped here with the standard
 * `aws:cdk:bundling-stacks` context (an empty list), and so is the CDK's built-in CloudFormation
 * validation (App's builtinCloudFormationValidation, a WebAssembly rule engine that took about half of each
 * synthesis here and whose report no test here reads); test/cdk/synth-cli.test.ts runs the real `cdk synth`,
 * with bundling and that validation, and checks its report.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { AuroraBenchStack } from '../../lib/aurora-bench-stack';
import { buildAuroraBenchApp, type BuildAppOptions } from '../../lib/app';
import { CONFIG_CONTEXT_KEY } from '../../lib/config';

export const PROJECT_ROOT = resolve(__dirname, '..', '..');

/** The context of the repository's cdk.json (feature flags and "aurora-bench"). */
function repoContext(): Record<string, unknown> {
  return (JSON.parse(readFileSync(join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> })
    .context;
}

/** The "aurora-bench" context of the repository's cdk.json. */
export function repoContextConfig(): Record<string, unknown> {
  return repoContext()[CONFIG_CONTEXT_KEY] as Record<string, unknown>;
}

/**
 * The repository's config with the nightly schedule turned on (cdk.json ships it off, so that a
 * first deploy starts nothing): the stack with every resource it can have.
 */
export function nightlyOnConfig(): Record<string, unknown> {
  const config = repoContextConfig();
  return { ...config, nightly: { ...(config['nightly'] as Record<string, unknown>), enabled: true } };
}

export interface TestApp {
  readonly app: App;
  readonly stack: AuroraBenchStack;
  readonly template: Template;
  readonly outdir: string;
  dispose(): void;
}

export function synthTestApp(
  config: Record<string, unknown> = repoContextConfig(),
  options: Partial<BuildAppOptions> = {},
): TestApp {
  const outdir = mkdtempSync(join(tmpdir(), 'aurora-bench-cdk-'));
  const app = new App({
    outdir,
    builtinCloudFormationValidation: false,
    // No construct's creation stack trace in its metadata (aws:cdk:trace): no test reads one, and under
    // Jest every captured trace goes through its source-map support.
    stackTraces: false,
    context: { ...repoContext(), [CONFIG_CONTEXT_KEY]: config, 'aws:cdk:bundling-stacks': [] },
  });
  const stack = buildAuroraBenchApp(app, { projectRoot: PROJECT_ROOT, nag: false, ...options });
  const template = Template.fromStack(stack);
  return { app, stack, template, outdir, dispose: () => rmSync(outdir, { recursive: true, force: true }) };
}

/** Resources of a type as [logicalId, resource] pairs. */
export function resourcesOf(template: Template, type: string): [string, { Properties: Record<string, unknown> }][] {
  return Object.entries(template.findResources(type)) as [string, { Properties: Record<string, unknown> }][];
}

interface PolicyStatementJson {
  Sid?: string;
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, Record<string, unknown>>;
}

/** Every statement of the IAM policies attached to a role (by the role's logical id). */
export function statementsOfRole(template: Template, roleLogicalId: string): PolicyStatementJson[] {
  const statements: PolicyStatementJson[] = [];
  // A role's inline policies may hold 10,240 characters in all (IAM quotas); CDK moves what does not
  // fit into managed policies attached to the role (OverflowPolicy<n>): both kinds count.
  for (const [, policy] of [
    ...resourcesOf(template, 'AWS::IAM::Policy'),
    ...resourcesOf(template, 'AWS::IAM::ManagedPolicy'),
  ]) {
    const roles = (policy.Properties['Roles'] as { Ref?: string }[] | undefined) ?? [];
    if (!roles.some((r) => r.Ref === roleLogicalId)) continue;
    const doc = policy.Properties['PolicyDocument'] as { Statement: PolicyStatementJson[] };
    statements.push(...doc.Statement);
  }
  return statements;
}

export function actionsOf(statement: PolicyStatementJson): string[] {
  return Array.isArray(statement.Action) ? statement.Action : [statement.Action];
}

/** A template value with Fn::Join / Ref / Fn::GetAtt rendered as readable text for assertions. */
export function render(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(render).join(',');
  if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    if ('Fn::Join' in o) {
      const [sep, parts] = o['Fn::Join'] as [string, unknown[]];
      return parts.map(render).join(sep);
    }
    if ('Ref' in o) return `<${String(o['Ref'])}>`;
    if ('Fn::GetAtt' in o) return `<${(o['Fn::GetAtt'] as string[]).join('.')}>`;
    if ('Fn::Select' in o) return `<select>`;
    if ('Fn::Sub' in o) return String(o['Fn::Sub']);
  }
  return JSON.stringify(value);
}
