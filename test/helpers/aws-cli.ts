/**
 * The AWS CLI that client/client-ready.sh and the clients' boot and SSM commands call (EC2 clients install Debian 12's
 * awscli package at boot). Tests use the one on PATH; on a machine without it, awscli is installed from PyPI into its
 * own venv under ~/.cache (not the repo's .venv: awscli pins botocore, which could fight moto's).
 * No skipping: when it cannot be had, the suite fails with the reason.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { awsCliPath } from '../../core/rehearsal/aws-cli';
import { MissingDependencyError } from '../../core/backend';

/** A directory holding an `aws` executable, to put first on PATH (past a pyenv shim, as the rehearsal's clients do). */
export function awsCliDir(): string {
  try {
    const [resolved] = awsCliPath();
    if (resolved !== undefined) return resolved;
  } catch (e) {
    if (!(e instanceof MissingDependencyError)) throw e;
  }
  const onPath = spawnSync('bash', ['-c', 'command -v aws'], { encoding: 'utf8' });
  if (onPath.status === 0 && onPath.stdout.trim() !== '') return join(onPath.stdout.trim(), '..');
  const venv = join(process.env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache'), 'aurora-bench', 'awscli-venv');
  const bin = join(venv, 'bin');
  if (existsSync(join(bin, 'aws'))) return bin;
  try {
    // One installer at a time when several test runs start together.
    execFileSync(
      'flock',
      [
        `${process.env['TMPDIR'] ?? '/tmp'}/aurora-bench-awscli.lock`,
        'bash',
        '-c',
        `set -e; [ -x "${bin}/aws" ] && exit 0; python3 -m venv "${venv}"; "${bin}/pip" install -q ` +
          `--disable-pip-version-check awscli`,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'], timeout: 300_000 },
    );
  } catch (e) {
    const err = e as { stderr?: Buffer; message: string };
    throw new Error(
      `the AWS CLI is needed by client/client-ready.sh and the clients' commands for S3 and could not be installed: ` +
        (err.stderr?.toString().trim() || err.message),
      {
        cause: e,
      },
    );
  }
  return bin;
}
