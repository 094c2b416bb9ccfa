/**
 * The AWS CLI the emulated clients run: the one on PATH, or the one `scripts/setup.sh --test` installs.
 * It must send its calls where AWS_ENDPOINT_URL says.
 * An AWS CLI v1 whose botocore predates that variable would call the real AWS with dummy keys.
 * So one real call checks this before any client boots.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, delimiter, dirname, isAbsolute, join } from 'node:path';
import { promisify } from 'node:util';
import { MissingDependencyError } from '../backend';

const execFileAsync = promisify(execFile);

/**
 * Directories to put before PATH so the clients find an `aws`.
 * A pyenv shim costs about 0.35 s of CPU per call, and the clients call aws several times per job.
 * So the rehearsal puts first the directory of the executable the shim would run.
 * It keeps the shim when pyenv cannot say.
 */
export function awsCliPath(env: NodeJS.ProcessEnv = process.env): string[] {
  const found = (env['PATH'] ?? '').split(delimiter).find((d) => d !== '' && existsSync(join(d, 'aws')));
  if (found !== undefined) return basename(found) === 'shims' ? pyenvCommandDir(env) : [];
  const venv = join(env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache'), 'aurora-bench', 'awscli-venv', 'bin');
  if (existsSync(join(venv, 'aws'))) return [venv];
  throw new MissingDependencyError(
    "the AWS rehearsal's clients need the AWS CLI (their boot, SSM commands and client-ready.sh call it for " +
      'S3): install it (`bash scripts/setup.sh --test` does, into ~/.cache/aurora-bench/awscli-venv)',
  );
}

/** The directory of the `aws` a pyenv shim runs, or none when pyenv cannot say. */
function pyenvCommandDir(env: NodeJS.ProcessEnv): string[] {
  try {
    const real = execFileSync('pyenv', ['which', 'aws'], {
      env,
      encoding: 'utf8',
      timeout: 10_000,
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    return isAbsolute(real) && existsSync(real) ? [dirname(real)] : [];
  } catch {
    return [];
  }
}

/**
 * CLIs, endpoints and buckets this process has seen answer.
 * Rehearsals that share an account check once, since a CLI call costs most of a second of CPU.
 */
const reached = new Set<string>();

/** Lists the buckets through the CLI with the clients' environment. The rehearsal's bucket must be among them. */
export async function checkAwsCliReachesMoto(env: NodeJS.ProcessEnv, bucket: string): Promise<void> {
  const key = JSON.stringify([env['PATH'], env['AWS_ENDPOINT_URL'], env['AWS_DEFAULT_REGION'], bucket]);
  if (reached.has(key)) return;
  let stdout = '';
  let failure = '';
  try {
    ({ stdout } = await execFileAsync(
      'aws',
      ['s3api', 'list-buckets', '--query', 'Buckets[].Name', '--output', 'text'],
      { env, timeout: 60_000, encoding: 'utf8' },
    ));
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    failure = (err.stderr || err.message).trim().split('\n').slice(-3).join(' | ');
  }
  if (!stdout.split(/\s+/).includes(bucket)) {
    const version = await execFileAsync('aws', ['--version'], { env, encoding: 'utf8' }).then(
      (r) => (r.stdout + r.stderr).trim(),
      (e: unknown) => (e as Error).message,
    );
    throw new MissingDependencyError(
      `the AWS CLI (${version}) did not reach the rehearsal's moto through ` +
        `AWS_ENDPOINT_URL=${env['AWS_ENDPOINT_URL']}${failure ? `: ${failure}` : ''}: an AWS CLI v1 needs a ` +
        `botocore recent enough to read AWS_ENDPOINT_URL; install a current one (pip install -U ` +
        `awscli, or AWS CLI v2)`,
    );
  }
  reached.add(key);
}
