#!/usr/bin/env node
/**
 * The CDK app (cdk.json "app"): reads the typed config from the "aurora-bench" context, the nightly
 * experiment and the shared lake views, builds the stack and runs cdk-nag (AwsSolutions) as a
 * validation plugin: synthesis fails on any unacknowledged finding.
 */
import '../core/polyfills';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { allViewSql } from '../core/lake/views';
import { AuroraBenchStack } from '../lib/aurora-bench-stack';
import { CONFIG_CONTEXT_KEY, loadExecutionInput, parseAppConfig } from '../lib/config';

/** The repository root: the nearest folder above this file holding cdk.json (works from dist/ too). */
function findProjectRoot(start: string): string {
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'cdk.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`cannot find cdk.json above ${start}`);
  }
}

const app = new App();
const projectRoot = findProjectRoot(__dirname);
const config = parseAppConfig(app.node.tryGetContext(CONFIG_CONTEXT_KEY));
const nightlyInput = config.nightly.enabled ? loadExecutionInput(config.nightly.experiment, projectRoot) : undefined;

new AuroraBenchStack(app, config.stackName, {
  config,
  projectRoot,
  views: allViewSql(join(projectRoot, 'core', 'lake', 'sql')),
  ...(nightlyInput ? { nightlyInput } : {}),
  // Environment-agnostic unless the config pins one (synth never needs credentials).
  ...(config.account || config.region ? { env: { account: config.account, region: config.region } } : {}),
  description: 'aurora-bench: sysbench benchmark studies on Aurora through one Step Functions workflow',
});

Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
