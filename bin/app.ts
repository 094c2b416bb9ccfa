#!/usr/bin/env node
/** The CDK app. It wires the app from its context, as lib/app.ts builds it. */
import '../core/polyfills';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { buildAuroraBenchApp } from '../lib/app';

/** The repository root, the nearest folder above this file holding cdk.json. It works from dist/ too. */
function findProjectRoot(start: string): string {
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'cdk.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`cannot find cdk.json above ${start}`);
  }
}

/** The checked-out commit, or undefined outside a git work tree. */
function gitSha(cwd: string): string | undefined {
  try {
    return (
      execFileSync('git', ['rev-parse', 'HEAD'], {
        cwd,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }).trim() || undefined
    );
  } catch {
    return undefined;
  }
}

const projectRoot = findProjectRoot(__dirname);
const app = new App();
const sha = gitSha(projectRoot);
buildAuroraBenchApp(app, { projectRoot, ...(sha ? { gitSha: sha } : {}) });
