/**
 * What runs on a client, as shell text the stack and the backend generate.
 * Only the secret's ARN travels in a job's command, never a password.
 * Readiness means "sysbench works", not "the SSM agent is online".
 */

import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RunnerExitCode } from '../../sysbench/runner-argv';

/** POSIX single-quote quoting. It is safe for any byte sequence except NUL. */
export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'"'"'`)}'`;
}

/**
 * The client's home directory as shell text. The shell expands it, so it must never sit inside single quotes.
 * The same text then runs on an EC2 client and on a machine that emulates several clients.
 */
export const CLIENT_HOME = '${AURORA_BENCH_HOME:-/opt/aurora-bench}';

/** Where the runner is installed on a client. */
export const CLIENT_INSTALL_DIR = `${CLIENT_HOME}/client`;

/** Written by client/client-ready.sh once sysbench has run through the report hook. Jobs refuse to start without it. */
const CLIENT_READY_MARKER = `${CLIENT_HOME}/ready`;

/**
 * Key prefix of the clients' ready markers, in the stack's bucket outside the lake.
 * The marker is an S3 object rather than an SSM command that cats it.
 * A command per poll would fill the Run Command history, which startJobs scans on a retry.
 * It also costs seconds through the agent and needs the agent online. A GetObject needs neither.
 * Instance ids are never reused, so a marker cannot be left over from another client.
 */
export const CLIENT_READY_PREFIX = 'clients/';

export function clientReadyKey(instanceId: string): string {
  if (!/^[A-Za-z0-9-]+$/.test(instanceId)) throw new Error(`client id "${instanceId}" is not an EC2 instance id`);
  return `${CLIENT_READY_PREFIX}${instanceId}/ready.json`;
}

/** The JSON marker client/client-ready.sh writes. A failed boot writes one too, so the workflow stops at once. */
export interface ClientReadyMarker {
  readonly ready: boolean;
  /** Why not, when not ready. */
  readonly reason?: string;
  /** `sysbench --version`, when ready. */
  readonly sysbench?: string;
  readonly sysbenchVersion?: string;
  /**
   * The database drivers the client's sysbench was built with, from `sysbench --help`.
   * Absent in markers written before client-ready.sh reported them.
   */
  readonly drivers?: readonly string[];
  /** `uname -m` */
  readonly arch?: string;
  readonly hostname?: string;
  readonly at?: string;
}

/** The runner's own setup-error code. */
const CLIENT_NOT_READY_EXIT = RunnerExitCode.Setup;

/**
 * The digest of a runner bundle: the SHA-256 of what `sha256sum` prints for its files.
 * The files come in the C locale's byte order of their relative paths.
 * RUNNER_DIGEST_SHELL computes the same on a client with coreutils.
 */
export function runnerBundleDigest(dir: string): string {
  const files: string[] = [];
  const walk = (rel: string): void => {
    for (const e of readdirSync(join(dir, rel), { withFileTypes: true })) {
      const path = `${rel}/${e.name}`;
      if (e.isDirectory()) walk(path);
      else if (e.isFile()) files.push(path);
    }
  };
  walk('.');
  // `sha256sum` escapes a name holding a backslash or a newline. Such a name would not hash the same here.
  const odd = files.find((f) => /[\\\n]/.test(f));
  if (odd !== undefined) throw new Error(`runner bundle ${dir}: file name ${JSON.stringify(odd)} cannot be digested`);
  files.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  const listing = files
    .map(
      (f) =>
        `${createHash('sha256')
          .update(readFileSync(join(dir, f)))
          .digest('hex')}  ${f}\n`,
    )
    .join('');
  return createHash('sha256').update(listing).digest('hex');
}

/**
 * Shell text printing runnerBundleDigest of the current folder. Every Debian image has the tools it uses.
 * An empty folder digests the empty listing.
 */
const RUNNER_DIGEST_SHELL = [
  'find . -type f -print0',
  'LC_ALL=C sort -z',
  'xargs -0 -r sha256sum',
  'sha256sum',
  "cut -d' ' -f1",
].join(' | ');

/**
 * AWS-RunShellScript `commands`: one script, run by the SSM agent as root.
 * A client always runs the runner of the stack that started the job.
 * The bundle is copied again unless the installed one has that stack's digest.
 * The check costs milliseconds, where the AWS CLI's copy costs about a second of CPU per job.
 * Jobs go only to clients found ready, so the marker check does not wait. A job's deadline is never spent on a boot.
 */
export function ssmRunnerCommands(
  region: string,
  runnerS3Uri: string,
  runnerDigest: string,
  runnerArgv: readonly string[],
): string[] {
  const dir = CLIENT_INSTALL_DIR;
  if (!/^([0-9a-f]{64})?$/.test(runnerDigest))
    throw new Error(`runner digest "${runnerDigest}" is not a SHA-256 in hex (or empty)`);
  return [
    'set -eu',
    `export AWS_DEFAULT_REGION=${shellQuote(region)}`,
    `if [ ! -f "${CLIENT_READY_MARKER}" ]; then echo "client not ready: ${CLIENT_READY_MARKER} is missing ` +
      `(client-ready.sh has not proven that sysbench works; see /var/log/aurora-bench-user-data.log)" >&2; ` +
      `exit ${CLIENT_NOT_READY_EXIT}; fi`,
    `mkdir -p "${dir}"`,
    `if [ -z "${runnerDigest}" ] || [ "$(cd "${dir}" && ${RUNNER_DIGEST_SHELL})" != "${runnerDigest}" ]; then`,
    `  aws s3 cp --recursive --only-show-errors ${shellQuote(runnerS3Uri)} "${dir}/"`,
    'fi',
    // Debian 12's nodejs. The user data installs it at boot, and client-ready.sh proves it loads the bundle.
    `exec node "${dir}/runner.js" ${runnerArgv.map(shellQuote).join(' ')}`,
  ];
}
