/**
 * Builds the aurora-bench app from its context, with cdk-nag as a validation plugin.
 * So synthesis fails on any unacknowledged finding. bin/app.ts and the tests share it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { athenaViewSql } from '../core/lake/athena-storage';
import { AuroraBenchStack } from './aurora-bench-stack';
import { CONFIG_CONTEXT_KEY, loadExecutionInput, parseAppConfig } from './config';

export interface BuildAppOptions {
  /** Repository root. */
  readonly projectRoot: string;
  /** Overrides for tests. The default is the repository's own files. */
  readonly definitionFile?: string;
  readonly lambdasDir?: string;
  readonly clientDir?: string;
  /** false in tests that run the checks themselves. */
  readonly nag?: boolean;
  /** The commit being deployed, recorded in run manifests. */
  readonly gitSha?: string;
}

/** package.json version of the project. */
function toolVersionOf(projectRoot: string): string {
  return (JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { version: string }).version;
}

export function buildAuroraBenchApp(app: App, options: BuildAppOptions): AuroraBenchStack {
  const config = parseAppConfig(app.node.tryGetContext(CONFIG_CONTEXT_KEY));
  const nightlyInput = config.nightly.enabled
    ? loadExecutionInput(config.nightly.experiment, options.projectRoot)
    : undefined;
  const stack = new AuroraBenchStack(app, config.stackName, {
    config,
    projectRoot: options.projectRoot,
    views: athenaViewSql(join(options.projectRoot, 'core', 'lake', 'sql')),
    ...(options.definitionFile ? { definitionFile: options.definitionFile } : {}),
    ...(options.lambdasDir ? { lambdasDir: options.lambdasDir } : {}),
    ...(options.clientDir ? { clientDir: options.clientDir } : {}),
    ...(nightlyInput ? { nightlyInput } : {}),
    toolVersion: toolVersionOf(options.projectRoot),
    ...(options.gitSha ? { gitSha: options.gitSha } : {}),
    // Environment-agnostic unless the config pins one, so synth never needs credentials.
    ...(config.account || config.region ? { env: { account: config.account, region: config.region } } : {}),
    description: 'aurora-bench: sysbench benchmark studies on Aurora through one Step Functions workflow',
  });
  if (options.nag !== false) Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
  return stack;
}
